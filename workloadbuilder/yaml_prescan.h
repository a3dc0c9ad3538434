// PrescanYaml: one linear pass over YAML text, before yaml-cpp sees it, that
// refuses text whose structure would make yaml-cpp itself allocate more than
// wasd's limits allow. yaml-cpp's scanner reads ahead while a flow collection
// might still turn out to be a mapping key, queueing a token (≈240 bytes) per
// `[` or `{` it has not closed: 262,000 `[` (an annotation at the API
// server's size limit) cost 67 MB before any of wasd's limits could apply.
//
// The pass tracks, outside quoted scalars, comments and block scalars:
//   - flow nesting (`[`, `{`) and block nesting (indentation, `- `, `? `,
//     `key:` on one line, as `- - - x`), refused above `max_depth` together;
//   - nodes (collections, scalars, aliases), refused above `max_nodes`;
//   - anchors (`&a`) and aliases (`*a`), each refused above its limit.
// The counts are upper-bound estimates, not a YAML parser: text they accept
// may still be refused by the exact checks applied while the document is
// built (DocumentBuilder), and only text far outside any real configuration
// (a plain scalar holding dozens of `[`, say) is refused by the estimate
// alone. O(n) time, O(max_depth) memory.
//
// Internal to workloadbuilder/. Pure; thread-safe.
#ifndef WASD_WORKLOADBUILDER_YAML_PRESCAN_H_
#define WASD_WORKLOADBUILDER_YAML_PRESCAN_H_

#include <string>
#include <string_view>

namespace wasd::workloadbuilder {

struct YamlScanLimits {
  int max_depth;    // open block and flow collections at any point
  int max_nodes;    // collections + scalars + aliases
  int max_anchors;  // `&name` properties
  int max_aliases;  // `*name` nodes
};

// "" when `text` stays within `limits`; otherwise the reason, e.g.
// "nests deeper than 64 levels".
std::string PrescanYaml(std::string_view text, const YamlScanLimits& limits);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_YAML_PRESCAN_H_

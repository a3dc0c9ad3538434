#include "workloadbuilder/yaml_prescan.h"

#include <vector>

namespace wasd::workloadbuilder {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool IsFlowIndicator(char c) { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }

class Prescan {
 public:
  Prescan(std::string_view text, const YamlScanLimits& limits) : s_(text), limits_(limits) {}

  std::string Run() {
    std::size_t begin = 0;
    while (error_.empty()) {  // one iteration per line: bounded by the text
      std::size_t end = s_.find('\n', begin);
      if (end == std::string_view::npos) end = s_.size();
      Line(begin, end);
      if (end == s_.size()) break;
      begin = end + 1;
    }
    return error_;
  }

 private:
  struct Block {
    long col;  // the column of the collection's entries
    bool seq;  // a block sequence (`- `); else a block mapping
  };

  void Line(std::size_t b, std::size_t e) {
    const std::size_t indent = Spaces(b, e);
    if (block_scalar_) {
      const bool blank = Blank(b + indent, e);
      if (!DocumentMarker(b, e) && (blank || static_cast<long>(indent) > block_scalar_parent_)) {
        return;  // content of a literal or folded scalar
      }
      block_scalar_ = false;
    }
    if (quote_ != 0 || flow_ > 0) {
      Inline(b, b, e, 0, false);
      return;
    }
    std::size_t p = b + indent;
    if (Blank(p, e) || s_[p] == '#') return;
    if (indent == 0 && s_[p] == '%') return;  // a directive
    if (DocumentMarker(b, e)) {
      blocks_.clear();
      p = b + 3;
      Content(b, p, e);
      return;
    }
    while (!blocks_.empty() && blocks_.back().col > static_cast<long>(indent)) blocks_.pop_back();
    // Block indicators open (or continue) collections, several on one line
    // in compact form: `- - x`, `- ? k`, `? - a`, `: v`.
    while (p < e && (s_[p] == '-' || s_[p] == '?' || s_[p] == ':') &&
           (p + 1 == e || IsSpace(s_[p + 1]))) {
      if (!Enter(static_cast<long>(p - b), s_[p] == '-')) return;
      ++p;
      while (p < e && IsSpace(s_[p])) ++p;
    }
    Content(b, p, e);
  }

  // The rest of a block-context line from `p`, where a node starts.
  void Content(std::size_t b, std::size_t p, std::size_t e) {
    at_start_ = true;
    Inline(b, p, e, static_cast<long>(p - b), true);
  }

  // Scans [p, e) of the line starting at `b`. `node_col`/`block_line`: the
  // column of the block node this line holds (a mapping when `key: ` follows).
  void Inline(std::size_t b, std::size_t p, std::size_t e, long node_col, bool block_line) {
    bool mapping_seen = false;
    while (p < e && error_.empty()) {
      const char c = s_[p];
      if (quote_ == '"') {
        while (p < e && s_[p] != '"') p += s_[p] == '\\' ? 2 : 1;
        if (p < e) Unquote();
        p = p < e ? p + 1 : e;
        continue;
      }
      if (quote_ == '\'') {
        while (p < e && !(s_[p] == '\'' && (p + 1 == e || s_[p + 1] != '\''))) {
          p += s_[p] == '\'' ? 2 : 1;
        }
        if (p < e) Unquote();
        p = p < e ? p + 1 : e;
        continue;
      }
      if (IsSpace(c)) {
        ++p;
        continue;
      }
      if (c == '#' && (p == b || IsSpace(s_[p - 1]))) return;  // a comment
      const bool flow = flow_ > 0;
      if (at_start_ && (c == '&' || c == '!' || c == '*')) {
        if (c == '&' && ++anchors_ > limits_.max_anchors) {
          Fail("has more than " + std::to_string(limits_.max_anchors) + " anchors");
        }
        if (c == '*' && ++aliases_ > limits_.max_aliases) {
          Fail("has more than " + std::to_string(limits_.max_aliases) + " aliases");
        }
        if (c == '*') Node();  // an alias is a whole node: a token start follows
        while (p < e && !IsSpace(s_[p]) && !(flow && IsFlowIndicator(s_[p]))) ++p;
        continue;
      }
      if (at_start_ && (c == '"' || c == '\'')) {
        Node();
        quote_ = c;
        ++p;
        continue;
      }
      if ((at_start_ || flow) && (c == '[' || c == '{')) {
        ++flow_;
        Node();
        CheckDepth();
        at_start_ = true;
        ++p;
        continue;
      }
      if (at_start_ && !flow && (c == '|' || c == '>')) {
        block_scalar_ = true;
        block_scalar_parent_ = blocks_.empty() ? -1 : blocks_.back().col;
        return;  // the rest of the line is the block scalar's header
      }
      if (flow && (c == ']' || c == '}')) {
        --flow_;
        at_start_ = true;  // yaml-cpp is at a token start again
        ++p;
        continue;
      }
      if (flow && (c == ',' || c == ':')) {
        at_start_ = true;
        ++p;
        continue;
      }
      if (!flow && c == ':' && (p + 1 == e || IsSpace(s_[p + 1]))) {
        if (block_line && !mapping_seen) {
          mapping_seen = true;
          if (!Enter(node_col, false)) return;
        }
        at_start_ = true;
        ++p;
        continue;
      }
      if (at_start_) Node();  // a plain scalar starts
      at_start_ = false;
      ++p;
    }
  }

  void Unquote() {
    quote_ = 0;
    at_start_ = true;  // after a quoted scalar yaml-cpp is at a token start
  }

  // A block collection entry at `col`: the same collection as the innermost
  // one at that column, or a new, nested one.
  bool Enter(long col, bool seq) {
    // A sequence may sit at its parent mapping's column (`a:` / `- x`); a
    // mapping key at that column ends it.
    if (!seq && !blocks_.empty() && blocks_.back().col == col && blocks_.back().seq) {
      blocks_.pop_back();
    }
    if (!blocks_.empty() && blocks_.back().col == col && blocks_.back().seq == seq) return true;
    blocks_.push_back({col, seq});
    Node();
    return CheckDepth();
  }

  bool CheckDepth() {
    if (static_cast<long>(blocks_.size()) + flow_ > limits_.max_depth) {
      Fail("nests deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    return error_.empty();
  }

  void Node() {
    if (++nodes_ > limits_.max_nodes) {
      Fail("has more than " + std::to_string(limits_.max_nodes) + " nodes");
    }
  }

  void Fail(std::string reason) {
    if (error_.empty()) error_ = std::move(reason);
  }

  std::size_t Spaces(std::size_t p, std::size_t e) const {
    std::size_t n = 0;
    while (p + n < e && s_[p + n] == ' ') ++n;
    return n;
  }

  bool Blank(std::size_t p, std::size_t e) const {
    for (; p < e; ++p) {
      if (!IsSpace(s_[p])) return false;
    }
    return true;
  }

  // `---` or `...` at the start of a line, alone or followed by a space.
  bool DocumentMarker(std::size_t b, std::size_t e) const {
    if (e - b < 3) return false;
    const std::string_view head = s_.substr(b, 3);
    return (head == "---" || head == "...") && (e - b == 3 || IsSpace(s_[b + 3]));
  }

  std::string_view s_;
  YamlScanLimits limits_;
  std::vector<Block> blocks_;  // at most max_depth + 1 entries
  long flow_ = 0;
  char quote_ = 0;  // inside a quoted scalar: its quote
  bool at_start_ = true;
  bool block_scalar_ = false;
  long block_scalar_parent_ = -1;
  int nodes_ = 0, anchors_ = 0, aliases_ = 0;
  std::string error_;
};

}  // namespace

std::string PrescanYaml(std::string_view text, const YamlScanLimits& limits) {
  return Prescan(text, limits).Run();
}

}  // namespace wasd::workloadbuilder

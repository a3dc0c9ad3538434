#include "workloadbuilder/yaml_prescan.h"

#include <catch2/catch.hpp>
#include <string>

namespace wb = wasd::workloadbuilder;

namespace {

const wb::YamlScanLimits kLimits{4, 30, 2, 3};  // small, to count exactly

std::string Scan(const std::string& text) { return wb::PrescanYaml(text, kLimits); }

}  // namespace

TEST_CASE("PrescanYaml counts flow and block nesting together", "[unit]") {
  CHECK(Scan("[[[[x]]]]").empty());
  CHECK(Scan("[[[[[x]]]]]") == "nests deeper than 4 levels");
  CHECK(Scan("a: {b: [c, {d: 1}]}").empty());              // map, map, seq, map: 4
  CHECK_FALSE(Scan("a:\n  b: {c: [d, {e: 1}]}").empty());  // 5
  CHECK(Scan("- - - - x").empty());
  CHECK_FALSE(Scan("- - - - - x").empty());
  CHECK(Scan("a:\n  b:\n    c:\n      d: 1\n").empty());
  CHECK_FALSE(Scan("a:\n  b:\n    c:\n      d:\n        e: 1\n").empty());
  // Dedenting closes collections; siblings do not nest.
  CHECK(Scan("a:\n  b:\n    c: 1\nd:\n  e:\n    f: 1\n").empty());
  // A sequence at its parent key's column, then the next key.
  CHECK(Scan("a:\n- x\n- y\nb:\n- z\n").empty());
  CHECK(Scan("- a: 1\n  b: [1]\n- c: {d: 1}\n").empty());
  // Flow collections spanning lines.
  CHECK(Scan("a: [\n  1,\n  {b: 2}\n]\n").empty());
  CHECK_FALSE(Scan("a: [\n  [\n    [\n      [\n        1]]]]\n").empty());
}

TEST_CASE("PrescanYaml skips quoted scalars, comments and block scalars", "[unit]") {
  CHECK(Scan("a: \"[[[[[[[[\"\n").empty());
  CHECK(Scan("a: '[[[[[[[[ it''s [[['\n").empty());
  CHECK(Scan("a: \"multi\n  [[[[[[[[ line\"\n").empty());
  CHECK(Scan("a: x # [[[[[[[[\n").empty());
  CHECK(Scan("# [[[[[[[[\na: 1\n").empty());
  CHECK(Scan("a: |\n  [[[[[[[[\n  {{{{{{\nb: 1\n").empty());
  CHECK(Scan("- >-\n  [[[[[[[[\n- x\n").empty());
  CHECK(Scan("a: b[[[[[[[[c\n").empty());  // brackets inside a plain scalar (block context)
  // A flow collection after a closing quote or bracket is a new token.
  CHECK_FALSE(Scan("\"a\" [[[[[").empty());
  CHECK_FALSE(Scan("[x] [[[[[").empty());
}

TEST_CASE("PrescanYaml bounds nodes, anchors and aliases", "[unit]") {
  std::string many = "[";
  for (int i = 0; i < 29; ++i) many += "1, ";
  CHECK(Scan(many + "1]").size() > 0);  // 30 scalars + the sequence
  CHECK(Scan("[1, 2, 3]").empty());
  CHECK(Scan("a: &x 1\nb: &y 2\n").empty());
  CHECK(Scan("a: &x 1\nb: &y 2\nc: &z 3\n") == "has more than 2 anchors");
  CHECK(Scan("a: &x 1\nb: [*x, *x, *x]\n").empty());
  CHECK(Scan("a: &x 1\nb: [*x, *x, *x, *x]\n") == "has more than 3 aliases");
  CHECK(Scan("a: 'x&y *z'\nb: x&y\n").empty());  // not at a node's start: plain text
}

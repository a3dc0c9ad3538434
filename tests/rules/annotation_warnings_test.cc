// AnnotationWarnings: a misspelt opt-in key, another wasd.io/ key, the
// annotation on the pod template — warned about whatever the carrier.
#include <catch2/catch.hpp>

#include "rules/deployment_rules.h"

namespace wasd::rules {
namespace {

using nlohmann::json;

json WithAnnotations(json annotations) {
  return {{"metadata", {{"name", "d"}, {"annotations", std::move(annotations)}}}};
}

TEST_CASE("AnnotationWarnings: misspelt and unknown wasd.io/ keys", "[unit]") {
  CHECK(AnnotationWarnings(WithAnnotations({{"wasd.io/scheduling", "{}"}})).empty());
  CHECK(AnnotationWarnings(json::object()).empty());
  CHECK(AnnotationWarnings(WithAnnotations({{"app.kubernetes.io/name", "x"}})).empty());
  for (const char* typo : {"wasd.io/schedulng", "wasd.io/Scheduling", "wasd.io/scheduling ",
                           "wasdio/scheduling", "wasd.io/sheduling"}) {
    INFO(typo);
    const auto w = AnnotationWarnings(WithAnnotations({{typo, "{}"}}));
    REQUIRE(w.size() == 1);
    CHECK(w[0] == "annotation " + std::string(typo) +
                      " is not read by wasd: did you mean wasd.io/scheduling?");
  }
  const auto other = AnnotationWarnings(WithAnnotations({{"wasd.io/queue", "q"}}));
  REQUIRE(other.size() == 1);
  CHECK(other[0] == "annotation wasd.io/queue is not read by wasd (it reads wasd.io/scheduling)");
  // The webhook's view: only wasd.io/ keys (its decoder keeps no others).
  CHECK(AnnotationWarnings(WithAnnotations({{"wasdio/scheduling", "{}"}}), true).empty());
  CHECK(AnnotationWarnings(WithAnnotations({{"wasd.io/schedulng", "{}"}}), true).size() == 1);
  // Far from the key and not ours: silence.
  CHECK(AnnotationWarnings(WithAnnotations({{"example.com/scheduling-notes", "x"}})).empty());
  // A key longer than any valid one is not measured.
  CHECK(AnnotationWarnings(WithAnnotations({{std::string(400, 'a'), "x"}})).empty());
}

TEST_CASE("AnnotationWarnings: the annotation on the pod template", "[unit]") {
  json d = WithAnnotations(json::object());
  d["spec"]["template"]["metadata"]["annotations"]["wasd.io/scheduling"] = "{}";
  const auto w = AnnotationWarnings(d);
  REQUIRE(w.size() == 1);
  CHECK(w[0] ==
        "wasd.io/scheduling on the pod template is ignored: put it in the Deployment's "
        "metadata.annotations");
  for (const std::string& s : w) CHECK(s.size() <= 120);
}

}  // namespace
}  // namespace wasd::rules

// The annotation's size and repeated keys through a whole review (H3/Q16 and
// L3 of the 2026-12 review): denied with kube-style causes, type and path.
#include <catch2/catch.hpp>
#include <string>

#include "admission/review.h"
#include "tests/admission/review_fixtures.h"

using nlohmann::json;
using wasd::admission::Review;
using wasd::admission::Webhook;

namespace {

json CauseOf(const std::string& annotation) {
  const json d = wasd::testing::WebDeployment({{"wasd.io/scheduling", annotation}});
  const json resp = wasd::testing::ResponseOf(
      Review(Webhook::kValidateDeployment,
             wasd::testing::ReviewOf(wasd::testing::kDeployments, "CREATE", d).dump(), {}));
  REQUIRE(resp.at("allowed") == false);
  REQUIRE(resp.at("status").at("details").at("causes").size() == 1);
  return resp["status"]["details"]["causes"][0];
}

}  // namespace

TEST_CASE("an annotation over 256 KiB is denied as TooLong before it is parsed", "[unit]") {
  const json cause = CauseOf(std::string(262145, '['));
  CHECK(cause.at("reason") == "FieldValueTooLong");
  CHECK(cause.at("field") == "metadata.annotations[wasd.io/scheduling]");
  CHECK(cause.at("message") == "Too long: must have at most 262144 bytes");
}

TEST_CASE("a repeated key in the annotation is denied as Duplicate", "[unit]") {
  for (const char* text :
       {R"({"schedulingPolicy":{"gang":{"minCount":2}},"schedulingPolicy":{"basic":{}}})",
        "schedulingPolicy:\n  gang: {minCount: 2}\nschedulingPolicy:\n  basic: {}\n"}) {
    INFO(text);
    const json cause = CauseOf(text);
    CHECK(cause.at("reason") == "FieldValueDuplicate");
    CHECK(cause.at("field") == "metadata.annotations[wasd.io/scheduling].schedulingPolicy");
  }
}

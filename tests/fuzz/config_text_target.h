// Fuzz target config_text: arbitrary bytes as the text of the
// wasd.io/scheduling annotation, through everything that reads it:
// workloadbuilder::ParseConfigText (JSON, else YAML), ReadSchedulingConfig on
// a Deployment carrying the text (annotation alone, then with an equal
// spec.scheduling field), strict ValidateSchedulingConfig, and, for a config
// that validates, BuildWorkload and BuildPodGroup.
//
// Invariants: nothing throws; when base::ParseJsonWithin (ParseConfigText's
// first reader) accepts the text, nlohmann::json::parse gives the same
// document and ParseConfigText returns it; a failed parse has a null value and a reason
// that is one line of valid UTF-8; a parsed value nests at most
// kMaxConfigDepth levels and serialises (dump() without a replacement
// handler, as the API client sends objects);
// the Deployment's carrier errors appear exactly when the text does not parse
// to an object, and an equal field carrier adds no error; every field error
// renders; a config without errors builds a Workload and a PodGroup whose
// text serialises too.
//
// Header-only so that the libFuzzer entry (config_text_fuzz.cc) and the Catch2
// corpus replay (tests/workloadbuilder/fuzz_replay_test.cc) share one body.
// Thread-safe (no state).
#ifndef WASD_TESTS_FUZZ_CONFIG_TEXT_TARGET_H_
#define WASD_TESTS_FUZZ_CONFIG_TEXT_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/json_projection.h"
#include "objects/json_util.h"
#include "tests/fuzz/check.h"
#include "workloadbuilder/builder.h"
#include "workloadbuilder/config_text.h"
#include "workloadbuilder/scheduling_config.h"
#include "workloadbuilder/validate.h"

namespace wasd::fuzz {

namespace config_text_detail {

using nlohmann::json;
namespace wb = workloadbuilder;

inline json Deployment(const std::string& annotation) {
  json d = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "ml", "uid": "6f1e2d3c-1111-4222-8333-944455556666"},
    "spec": {"replicas": 3, "strategy": {"type": "Recreate"},
             "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "img:v1"}]}}}})");
  d["metadata"]["annotations"][std::string(wb::kSchedulingAnnotation)] = annotation;
  return d;
}

inline const json& ReplicaSet() {
  static const json rs = json::parse(R"({
    "apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "web-5d8f7c9b6", "namespace": "ml", "uid": "0b7e1f6a-0000-4000-8000-000000000002",
                 "labels": {"app": "web", "pod-template-hash": "5d8f7c9b6"}},
    "spec": {"replicas": 3}})");
  return rs;
}

// dump() as the API client does it: throws on invalid UTF-8.
inline void CheckSerialises(const json& v, const char* what) {
  try {
    (void)v.dump();
  } catch (const json::exception& e) {
    Fail("serialises", __FILE__, __LINE__, std::string(what) + ": " + e.what());
  }
}

inline void CheckErrors(const wb::FieldErrorList& errors) {
  for (const wb::FieldError& e : errors) {
    const std::string line = e.ToString();
    FUZZ_CHECK(!e.path.empty() && !line.empty(), line);
  }
  (void)wb::AggregateMessage(errors);
}

}  // namespace config_text_detail

inline int ConfigTextOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace config_text_detail;  // NOLINT: local to this target
  const std::string text(reinterpret_cast<const char*>(data), size);
  const wb::ParsedText parsed = wb::ParseConfigText(text);
  {
    json fast;
    if (base::ParseJsonWithin(text, wb::kMaxConfigDepth, wb::kMaxConfigValues, &fast) ==
        base::PruneStatus::kOk) {
      const json whole = json::parse(text, nullptr, false);
      FUZZ_CHECK(!whole.is_discarded() && whole.dump() == fast.dump(), text);
      FUZZ_CHECK(parsed.ok() && parsed.value.dump() == fast.dump(), text);
    }
  }
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.value.is_null(), "");
    // One line of valid UTF-8: no control bytes, serialisable.
    for (const char c : parsed.error)
      FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20, parsed.error);
    CheckSerialises(json(parsed.error), "parse error");
  } else {
    FUZZ_CHECK(!parsed.value.is_discarded(), "");
    FUZZ_CHECK(!objects::DepthExceeds(parsed.value, wb::kMaxConfigDepth), "");
    CheckSerialises(parsed.value, "parsed annotation");
  }
  const bool object = parsed.ok() && parsed.value.is_object();

  json deployment = Deployment(text);
  const wb::SchedulingConfig alone = wb::ReadSchedulingConfig(deployment);
  FUZZ_CHECK(alone.carrier == wb::Carrier::kAnnotation, "");
  FUZZ_CHECK(alone.errors.empty() == object, parsed.error);
  FUZZ_CHECK(alone.usable() == object, "");
  if (object) FUZZ_CHECK(alone.config == parsed.value, "");
  CheckErrors(alone.errors);

  const wb::FieldErrorList errors =
      wb::ValidateSchedulingConfig(parsed.value, alone.path, /*strict=*/true);
  CheckErrors(errors);

  if (object) {
    // Next to spec.scheduling (the in-tree integration's), wasd still reads
    // the annotation alone, and the field reads back as written.
    deployment["spec"]["scheduling"] = parsed.value;
    const wb::SchedulingConfig ours = wb::ReadSchedulingConfig(deployment);
    FUZZ_CHECK(ours.carrier == wb::Carrier::kAnnotation, "");
    FUZZ_CHECK(ours.config == alone.config, "");
    const wb::SchedulingConfig field = wb::ReadInTreeSchedulingConfig(deployment);
    FUZZ_CHECK(field.carrier == wb::Carrier::kField, "");
    if (!parsed.value.contains(std::string(wb::kBackendsMember))) {
      FUZZ_CHECK(field.errors.empty(), wb::AggregateMessage(field.errors));
      FUZZ_CHECK(field.config == parsed.value, "");
    }
    CheckErrors(wb::ValidateSchedulingConfig(field.config, field.path, /*strict=*/false));
    deployment["spec"].erase("scheduling");
  }

  if (object && errors.empty()) {
    const wb::BuildResult workload = wb::BuildWorkload(deployment, parsed.value);
    FUZZ_CHECK(workload.ok(), workload.error);
    CheckSerialises(workload.object, "Workload");
    json stored = workload.object;  // as read back from the API server
    stored["metadata"]["uid"] = "3c2b1a09-2222-4333-8444-a55566667777";
    const wb::BuildResult group = wb::BuildPodGroup(stored, ReplicaSet());
    FUZZ_CHECK(group.ok(), group.error);
    CheckSerialises(group.object, "PodGroup");
  }
  return 0;
}

}  // namespace wasd::fuzz

#endif  // WASD_TESTS_FUZZ_CONFIG_TEXT_TARGET_H_

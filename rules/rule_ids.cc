#include "rules/rule_ids.h"

#include <algorithm>
#include <array>
#include <string>

namespace wasd::rules {

namespace wb = workloadbuilder;

namespace {

constexpr std::string_view kFieldCarrier = "spec.scheduling";
// The start of the H5 error's detail (in_tree_rule.cc).
constexpr std::string_view kBothCarriersDetail = "may not be set together with";
constexpr std::string_view kAnnotationCarrier = "metadata.annotations[wasd.io/scheduling]";
constexpr std::string_view kBackendAnnotationPath = "metadata.annotations[wasd.io/backend]";
constexpr std::string_view kBackendTemplateLabelPath =
    "spec.template.metadata.labels[wasd.io/backend]";

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The path with list indexes written as [] ("a[3].b" -> "a[].b"); map keys
// (the annotation name) are kept.
std::string WithoutIndexes(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '[' && i + 1 < path.size() && path[i + 1] >= '0' && path[i + 1] <= '9') {
      const std::size_t close = path.find(']', i);
      if (close == std::string_view::npos) break;
      out += "[]";
      i = close;
      continue;
    }
    out.push_back(path[i]);
  }
  return out;
}

// Wrong JSON types, unknown members and repeated keys (a Duplicate whose value
// is the key; S11's carries the item): the annotation-only structure rule.
bool IsShapeError(const wb::FieldError& e) {
  return Contains(e.detail, "unknown field") || e.detail.rfind("must be a", 0) == 0 ||
         e.detail.rfind("must fit in", 0) == 0 || e.type == wb::ErrorType::kTooLong ||
         (e.type == wb::ErrorType::kDuplicate && e.value.is_string());
}

// A union error carries "" (no member) or "{a, b}" (several) as its value.
std::string_view UnionRule(const wb::FieldError& e, std::string_view none, std::string_view many) {
  if (!e.value.is_string()) return {};
  const std::string& v = e.value.get_ref<const std::string&>();
  if (v.empty()) return none;
  if (v.front() == '{') return many;
  return {};
}

// An update rule: Invalid with a null value (or Forbidden, the older form).
bool IsUpdateForm(const wb::FieldError& e) {
  if (IsShapeError(e)) return false;
  return (e.type == wb::ErrorType::kInvalid && e.value.is_null()) ||
         (e.type == wb::ErrorType::kForbidden && !Contains(e.detail, "not supported"));
}

std::string_view InCarrier(const wb::FieldError& e, std::string_view rel) {
  if (rel.empty()) {
    if (IsUpdateForm(e)) return Contains(e.detail, "clear") ? "U2" : "U1";
    return "S17";  // not an object, not parsable, too long
  }
  if (rel == ".schedulingPolicy") {
    if (IsUpdateForm(e)) return "U3";
    if (auto id = UnionRule(e, "S2", "S3"); !id.empty()) return id;
    return "S17";
  }
  if (rel == ".schedulingPolicy.basic" || rel == ".schedulingPolicy.gang") {
    if (e.type == wb::ErrorType::kForbidden && Contains(e.detail, "not supported")) return "B2";
    if (IsUpdateForm(e)) return rel == ".schedulingPolicy.basic" ? "U4" : "U5";
    return "S17";
  }
  if (rel == ".schedulingPolicy.gang.minCount") {
    if (Contains(e.detail, "replicas")) return "H1";
    if (Contains(e.detail, "greater than or equal to 1")) return "S4";
    return "S17";
  }
  if (rel == ".schedulingConstraints") return IsUpdateForm(e) ? "U7" : "S17";
  if (rel == ".schedulingConstraints.topology") {
    return e.type == wb::ErrorType::kTooMany ? "S5" : "S17";
  }
  if (rel == ".schedulingConstraints.topology[].key") {
    if (e.type == wb::ErrorType::kRequired) return "S6";
    return IsShapeError(e) ? "S17" : "S7";
  }
  if (rel == ".disruptionMode") {
    if (e.type == wb::ErrorType::kForbidden && Contains(e.detail, "not supported")) return "B3";
    if (IsUpdateForm(e)) return "U8";
    if (auto id = UnionRule(e, "S8", "S9"); !id.empty()) return id;
    if (Contains(e.detail, "Basic")) return "B1";
    return "S17";
  }
  if (rel == ".resourceClaims") {
    if (e.type == wb::ErrorType::kTooMany) return "S10";
    return IsUpdateForm(e) ? "U9" : "S17";
  }
  if (rel == ".resourceClaims[]") {
    if (e.type == wb::ErrorType::kDuplicate) return "S11";
    if (auto id = UnionRule(e, "S14", "S15"); !id.empty()) return id;
    return "S17";
  }
  if (rel == ".resourceClaims[].name") {
    if (e.type == wb::ErrorType::kRequired) return "S12";
    return IsShapeError(e) ? "S17" : "S13";
  }
  if (rel == ".resourceClaims[].resourceClaimName" ||
      rel == ".resourceClaims[].resourceClaimTemplateName") {
    return IsShapeError(e) ? "S17" : "S16";
  }
  return "S17";  // any other member: unknown field or wrong type
}

}  // namespace

std::string_view RuleIdOf(const wb::FieldError& e) {
  const std::string path = WithoutIndexes(e.path.String());
  if (path == "spec.strategy.type") return "H2";
  if (path == "spec.template.spec.schedulingGroup") return "H3";
  if (path == "spec.replicas") return "H4";
  if (path == kBackendAnnotationPath || path == kBackendTemplateLabelPath) {
    return Contains(e.detail, "immutable") ? "K2" : "K1";
  }
  if (path == "spec.template.spec.schedulerName") return "K4";
  if (path == kFieldCarrier && Contains(e.detail, kBothCarriersDetail)) return "H5";
  for (std::string_view carrier : {kAnnotationCarrier, kFieldCarrier}) {
    if (path.rfind(carrier, 0) != 0) continue;
    const std::string_view rel = std::string_view(path).substr(carrier.size());
    if (!rel.empty() && rel.front() != '.') continue;  // e.g. spec.schedulingFoo
    if (e.detail.rfind("not supported by backend", 0) == 0 ||
        e.detail.rfind("settings for backend", 0) == 0) {
      return "K3";
    }
    if (rel == ".backends" || rel.rfind(".backends.", 0) == 0) return "K5";
    if (!rel.empty() && IsShapeError(e)) return "S17";
    return InCarrier(e, rel);
  }
  return "other";
}

std::vector<std::string_view> RuleIdsOf(const wb::FieldErrorList& errors) {
  // One RuleIdOf per error (it builds the error's path), not one per error and
  // id: on a denied request this ran 35 times per error, ~90,000 instructions
  // for two errors (bench/README.md).
  std::array<bool, kRuleIds.size()> seen{};
  for (const wb::FieldError& e : errors) {
    const std::string_view id = RuleIdOf(e);
    const auto* it = std::find(kRuleIds.begin(), kRuleIds.end(), id);
    if (it == kRuleIds.end())
      it = kRuleIds.end() - 1;  // "other" (RuleIdOf returns ids of kRuleIds)
    seen[static_cast<std::size_t>(it - kRuleIds.begin())] = true;
  }
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < kRuleIds.size(); ++i) {
    if (seen[i]) out.push_back(kRuleIds[i]);
  }
  return out;
}

}  // namespace wasd::rules

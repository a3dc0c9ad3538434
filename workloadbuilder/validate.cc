// ValidateSchedulingConfig: rules S2–S17 and B1 (docs/api.md §b.1, §b.4).
#include "workloadbuilder/validate.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_set>

#include "objects/json_util.h"
#include "workloadbuilder/backend_capabilities.h"
#include "workloadbuilder/scheduling_config.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

// Schema limits of the building blocks (v1alpha3 `+k8s:maxItems`).
constexpr std::size_t kMaxTopologyItems = 1;
constexpr std::size_t kMaxResourceClaims = 4;

// Walks one configuration, appending errors. `strict` adds the S17 checks
// (unknown members, wrong JSON types) that the API server would have done for
// a typed field; without it, a member of the wrong type is silently skipped.
class ConfigChecker {
 public:
  ConfigChecker(bool strict, FieldErrorList& errors) : strict_(strict), errors_(errors) {}

  // `old_config`: see ValidateSchedulingConfig.
  void Check(const json& config, const FieldPath& path, const json* old_config);

 private:
  enum class Policy { kBroken, kBasic, kGang };

  Policy CheckPolicy(const json* policy, const json* old_policy, const FieldPath& path);
  void CheckConstraints(const json& constraints, const FieldPath& path);
  // Returns true when the mode is exactly `all` (the only input B1 needs).
  bool CheckDisruptionMode(const json& mode, const json* old_mode, const FieldPath& path);
  void CheckResourceClaims(const json& claims, const json* old_claims, const FieldPath& path);
  void CheckResourceClaim(const json& claim, const json* old_claim, const FieldPath& path);
  void CheckMinCount(const json& min_count, const FieldPath& path);

  // True when `value` is an object; otherwise, in strict mode, an error.
  bool ExpectObject(const json& value, const FieldPath& path);
  bool ExpectList(const json& value, const FieldPath& path);
  const std::string* ExpectString(const json& value, const FieldPath& path);
  // Strict mode: one error per member of `object` not in `known`.
  void RejectUnknown(const json& object, const FieldPath& path,
                     std::initializer_list<std::string_view> known);
  // Exactly-one-of check over `members` (declaration order), skipped when
  // `old_object` (the stored counterpart, or null) has the same members set.
  // Returns the number of members set.
  // `none`, `many`: the rules broken by no member set and by several.
  int CheckUnion(const json& object, const json* old_object, const FieldPath& path,
                 std::initializer_list<std::string_view> members, RuleId none, RuleId many);
  // Invalid per message of a format check, each breaking `rule`.
  void CheckFormat(const std::vector<std::string>& messages, const std::string& value,
                   const FieldPath& path, RuleId rule);

  bool strict_;
  FieldErrorList& errors_;
};

// The member `name` of `old` when `old` is an object; null otherwise.
const json* OldMember(const json* old, std::string_view name) {
  return old != nullptr ? objects::Member(*old, name) : nullptr;
}

void ConfigChecker::Check(const json& config, const FieldPath& path, const json* old_config) {
  if (!config.is_object()) {
    errors_.push_back(Invalid(path, config, "must be an object").For(RuleId::kS17));
    return;
  }
  RejectUnknown(config, path,
                {"schedulingPolicy", "schedulingConstraints", "disruptionMode", "resourceClaims",
                 kBackendsMember});

  const Policy policy =
      CheckPolicy(objects::Member(config, "schedulingPolicy"),
                  OldMember(old_config, "schedulingPolicy"), path.Child("schedulingPolicy"));
  if (const json* c = objects::Member(config, "schedulingConstraints")) {
    CheckConstraints(*c, path.Child("schedulingConstraints"));
  }
  bool mode_all = false;
  const FieldPath mode_path = path.Child("disruptionMode");
  if (const json* m = objects::Member(config, "disruptionMode")) {
    mode_all = CheckDisruptionMode(*m, OldMember(old_config, "disruptionMode"), mode_path);
  }
  if (const json* rc = objects::Member(config, "resourceClaims")) {
    CheckResourceClaims(*rc, OldMember(old_config, "resourceClaims"), path.Child("resourceClaims"));
  }
  // The annotation's backend-only knobs (always strict: no schema decoded them).
  if (const json* backends = objects::Member(config, kBackendsMember)) {
    Append(errors_, ValidateBackendKnobs(*backends, path.Child(kBackendsMember)));
  }
  // B1: `all` needs a gang; an omitted policy means Basic.
  if (mode_all && policy == Policy::kBasic) {
    errors_.push_back(Invalid(mode_path, "all",
                              "the disruptionMode `all` is not supported with the Basic "
                              "scheduling policy")
                          .For(RuleId::kB1));
  }
}

ConfigChecker::Policy ConfigChecker::CheckPolicy(const json* policy, const json* old_policy,
                                                 const FieldPath& path) {
  if (policy == nullptr) return Policy::kBasic;
  if (!ExpectObject(*policy, path)) return Policy::kBroken;
  RejectUnknown(*policy, path, {"basic", "gang"});
  const int set =
      CheckUnion(*policy, old_policy, path, {"basic", "gang"}, RuleId::kS2, RuleId::kS3);
  const json* basic = objects::Member(*policy, "basic");
  const json* gang = objects::Member(*policy, "gang");
  if (basic != nullptr && ExpectObject(*basic, path.Child("basic"))) {
    RejectUnknown(*basic, path.Child("basic"), {});
  }
  if (gang != nullptr && ExpectObject(*gang, path.Child("gang"))) {
    const FieldPath gang_path = path.Child("gang");
    RejectUnknown(*gang, gang_path, {"minCount"});
    if (const json* mc = objects::Member(*gang, "minCount"))
      CheckMinCount(*mc, gang_path.Child("minCount"));
  }
  if (set != 1) return Policy::kBroken;
  return gang != nullptr ? Policy::kGang : Policy::kBasic;
}

void ConfigChecker::CheckMinCount(const json& min_count, const FieldPath& path) {
  const std::optional<std::int64_t> n = objects::AsInt(&min_count);
  if (!n) {
    if (strict_)
      errors_.push_back(Invalid(path, min_count, "must be an integer").For(RuleId::kS17));
    return;
  }
  if (strict_ && (*n > INT32_MAX || *n < INT32_MIN)) {
    errors_.push_back(Invalid(path, min_count, "must fit in a 32-bit integer").For(RuleId::kS17));
    return;
  }
  if (*n < 1) {
    errors_.push_back(Invalid(path, *n, "must be greater than or equal to 1").For(RuleId::kS4));
  }
}

void ConfigChecker::CheckConstraints(const json& constraints, const FieldPath& path) {
  if (!ExpectObject(constraints, path)) return;
  RejectUnknown(constraints, path, {"topology"});
  const json* topology = objects::Member(constraints, "topology");
  const FieldPath topo_path = path.Child("topology");
  if (topology == nullptr || !ExpectList(*topology, topo_path)) return;
  if (topology->size() > kMaxTopologyItems) {  // S5; items are not checked past the limit
    errors_.push_back(
        TooMany(topo_path, static_cast<std::int64_t>(topology->size()), kMaxTopologyItems)
            .For(RuleId::kS5));
    return;
  }
  for (std::size_t i = 0; i < topology->size(); ++i) {
    const json& item = (*topology)[i];
    const FieldPath item_path = topo_path.Index(i);
    if (!ExpectObject(item, item_path)) continue;
    RejectUnknown(item, item_path, {"key"});
    const FieldPath key_path = item_path.Child("key");
    const json* key = objects::Member(item, "key");
    const std::string* text = key != nullptr ? ExpectString(*key, key_path) : nullptr;
    if (key != nullptr && text == nullptr) continue;  // wrong type
    if (text == nullptr || text->empty()) {
      errors_.push_back(Required(key_path).For(RuleId::kS6));
      continue;
    }
    CheckFormat(IsQualifiedName(*text), *text, key_path, RuleId::kS7);
  }
}

bool ConfigChecker::CheckDisruptionMode(const json& mode, const json* old_mode,
                                        const FieldPath& path) {
  if (!ExpectObject(mode, path)) return false;
  RejectUnknown(mode, path, {"single", "all"});
  const int set = CheckUnion(mode, old_mode, path, {"single", "all"}, RuleId::kS8, RuleId::kS9);
  for (std::string_view member : {"single", "all"}) {
    const json* m = objects::Member(mode, member);
    if (m != nullptr && ExpectObject(*m, path.Child(member))) {
      RejectUnknown(*m, path.Child(member), {});
    }
  }
  return set == 1 && objects::Member(mode, "all") != nullptr;
}

void ConfigChecker::CheckResourceClaims(const json& claims, const json* old_claims,
                                        const FieldPath& path) {
  if (!ExpectList(claims, path)) return;
  if (claims.size() > kMaxResourceClaims) {  // S10; items are not checked past the limit
    errors_.push_back(TooMany(path, static_cast<std::int64_t>(claims.size()), kMaxResourceClaims)
                          .For(RuleId::kS10));
    return;
  }
  // S11: list-map keyed by name; a repeated name is reported at the later item.
  std::unordered_set<std::string> seen;
  for (std::size_t j = 0; j < claims.size(); ++j) {
    const std::string* name = objects::AsString(objects::Member(claims[j], "name"));
    if (name == nullptr || name->empty()) continue;
    if (!seen.insert(*name).second) {
      errors_.push_back(Duplicate(path.Index(j), json{{"name", *name}}).For(RuleId::kS11));
    }
  }
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const json* old_claim =
        old_claims != nullptr && old_claims->is_array() && i < old_claims->size()
            ? &(*old_claims)[i]
            : nullptr;
    CheckResourceClaim(claims[i], old_claim, path.Index(i));
  }
}

void ConfigChecker::CheckResourceClaim(const json& claim, const json* old_claim,
                                       const FieldPath& path) {
  if (!ExpectObject(claim, path)) return;
  RejectUnknown(claim, path, {"name", "resourceClaimName", "resourceClaimTemplateName"});
  const FieldPath name_path = path.Child("name");
  const json* name = objects::Member(claim, "name");
  const std::string* name_text = name != nullptr ? ExpectString(*name, name_path) : nullptr;
  if (name == nullptr || (name_text != nullptr && name_text->empty())) {
    errors_.push_back(Required(name_path).For(RuleId::kS12));
  } else if (name_text != nullptr) {
    CheckFormat(IsDNS1123Label(*name_text), *name_text, name_path, RuleId::kS13);
  }
  CheckUnion(claim, old_claim, path, {"resourceClaimName", "resourceClaimTemplateName"},
             RuleId::kS14, RuleId::kS15);
  for (std::string_view member : {"resourceClaimName", "resourceClaimTemplateName"}) {
    const json* source = objects::Member(claim, member);
    if (source == nullptr) continue;
    const FieldPath source_path = path.Child(member);
    if (const std::string* text = ExpectString(*source, source_path)) {
      CheckFormat(IsDNS1123Subdomain(*text), *text, source_path, RuleId::kS16);
    }
  }
}

bool ConfigChecker::ExpectObject(const json& value, const FieldPath& path) {
  if (value.is_object()) return true;
  if (strict_) errors_.push_back(Invalid(path, value, "must be an object").For(RuleId::kS17));
  return false;
}

bool ConfigChecker::ExpectList(const json& value, const FieldPath& path) {
  if (value.is_array()) return true;
  if (strict_) errors_.push_back(Invalid(path, value, "must be a list").For(RuleId::kS17));
  return false;
}

const std::string* ConfigChecker::ExpectString(const json& value, const FieldPath& path) {
  if (value.is_string()) return &value.get_ref<const std::string&>();
  if (strict_) errors_.push_back(Invalid(path, value, "must be a string").For(RuleId::kS17));
  return nullptr;
}

void ConfigChecker::RejectUnknown(const json& object, const FieldPath& path,
                                  std::initializer_list<std::string_view> known) {
  if (!strict_) return;
  for (const auto& [key, value] : object.items()) {
    bool is_known = false;
    for (std::string_view k : known) is_known = is_known || k == key;
    if (!is_known) errors_.push_back(Invalid(path, key, "unknown field").For(RuleId::kS17));
  }
}

int ConfigChecker::CheckUnion(const json& object, const json* old_object, const FieldPath& path,
                              std::initializer_list<std::string_view> members, RuleId none,
                              RuleId many) {
  bool same_as_old = old_object != nullptr && old_object->is_object();
  int set = 0;
  std::string set_names;
  std::string all_names;
  for (std::string_view m : members) {
    if (!all_names.empty()) all_names += ", ";
    all_names += "`" + std::string(m) + "`";
    const bool member_set = objects::Member(object, m) != nullptr;
    if (same_as_old && member_set != (objects::Member(*old_object, m) != nullptr))
      same_as_old = false;
    if (member_set) {
      ++set;
      if (!set_names.empty()) set_names += ", ";
      set_names += m;
    }
  }
  if (same_as_old) return set;  // ratcheting: membership unchanged since the stored object
  if (set == 0) {
    errors_.push_back(Invalid(path, "", "must specify one of: " + all_names).For(none));
  } else if (set > 1) {
    errors_.push_back(
        Invalid(path, "{" + set_names + "}", "must specify exactly one of: " + all_names)
            .For(many));
  }
  return set;
}

void ConfigChecker::CheckFormat(const std::vector<std::string>& messages, const std::string& value,
                                const FieldPath& path, RuleId rule) {
  for (const std::string& m : messages) errors_.push_back(Invalid(path, value, m).For(rule));
}

}  // namespace

FieldErrorList ValidateSchedulingConfig(const json& config, const FieldPath& path, bool strict,
                                        const json* old_config) {
  FieldErrorList errors;
  ConfigChecker(strict, errors).Check(config, path, old_config);
  return errors;
}

}  // namespace wasd::workloadbuilder

// H2: gang scheduling needs the Recreate strategy (KEP-6276 alpha): a rolling
// update would run two revisions' gangs at once. The API server has already
// defaulted an omitted strategy to RollingUpdate, hence the hint in the text.
#include <string>

#include "objects/json_util.h"
#include "rules/rule_context.h"
#include "workloadbuilder/builder.h"

namespace wasd::rules {

namespace wb = workloadbuilder;

void CheckStrategyForGang(const DeploymentView& view, FieldErrorList& errors) {
  if (!view.config.usable() || !wb::IsGang(view.config.config)) return;
  const nlohmann::json* type = objects::MemberPath(*view.object, {"spec", "strategy", "type"});
  const std::string* text = objects::AsString(type);
  if (text != nullptr && *text == "Recreate") return;
  nlohmann::json value = type != nullptr ? *type : nlohmann::json("RollingUpdate");
  errors.push_back(wb::Invalid(wb::FieldPath::Parse("spec.strategy.type"), std::move(value),
                               "gang scheduling requires Recreate; RollingUpdate is also the "
                               "default when spec.strategy is omitted")
                       .For(wb::RuleId::kH2));
}

}  // namespace wasd::rules

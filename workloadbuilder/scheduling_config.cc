#include "workloadbuilder/scheduling_config.h"

#include <string>

#include "objects/json_util.h"
#include "workloadbuilder/config_text.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

namespace {

// How much of a broken annotation is echoed back in the error value: enough
// to recognise it, short enough to keep the denial readable (an annotation
// may be 256 KiB).
constexpr std::size_t kMaxEchoedText = 200;

FieldPath AnnotationPath() {
  return FieldPath::Parse("metadata").Child("annotations").Key(kSchedulingAnnotation);
}

FieldPath FieldCarrierPath() { return FieldPath::Parse("spec.scheduling"); }

json EchoedText(const std::string& text) {
  if (text.size() <= kMaxEchoedText) return text;
  std::size_t cut = kMaxEchoedText;
  // Do not split a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// The annotation member itself (any JSON type), or nullptr when absent/null.
const json* AnnotationValue(const json& deployment) {
  const json* annotations = objects::MemberPath(deployment, {"metadata", "annotations"});
  if (annotations == nullptr) return nullptr;
  return objects::Member(*annotations, kSchedulingAnnotation);
}

const json* FieldValue(const json& deployment) {
  return objects::MemberPath(deployment, {"spec", "scheduling"});
}

// Parses the annotation member into `out`; appends carrier errors.
void ReadAnnotation(const json& member, json& out, FieldErrorList& errors) {
  const FieldPath path = AnnotationPath();
  const std::string* text = objects::AsString(&member);
  if (text == nullptr) {
    errors.push_back(
        Invalid(path, member, "must be a string holding a JSON or YAML object").For(RuleId::kS17));
    return;
  }
  TextOptions options;
  options.base = path;
  ParsedText parsed = ParseConfigText(*text, options);
  switch (parsed.kind) {
    case TextError::kNone: break;
    case TextError::kTooLong:  // refused before any parse (docs/design.md Q16)
      errors.push_back(TooLong(path, parsed.error).For(RuleId::kS17));
      return;
    case TextError::kDuplicateKey:  // as strict decoding refuses a repeated field
      errors.push_back(Duplicate(parsed.where, parsed.key).For(RuleId::kS17));
      return;
    case TextError::kInvalid:
      errors.push_back(Invalid(path, EchoedText(*text), parsed.error).For(RuleId::kS17));
      return;
  }
  if (!parsed.value.is_object()) {
    errors.push_back(
        Invalid(path, EchoedText(*text), "must be a JSON or YAML object").For(RuleId::kS17));
    return;
  }
  out = std::move(parsed.value);
}

}  // namespace

bool HasSchedulingCarrier(const json& deployment) { return AnnotationValue(deployment) != nullptr; }

bool HasInTreeScheduling(const json& deployment) { return FieldValue(deployment) != nullptr; }

SchedulingConfig ReadSchedulingConfig(const json& deployment) {
  SchedulingConfig result;
  const json* annotation = AnnotationValue(deployment);
  if (annotation == nullptr) return result;
  result.carrier = Carrier::kAnnotation;
  result.path = AnnotationPath();
  ReadAnnotation(*annotation, result.config, result.errors);
  return result;
}

SchedulingConfig ReadInTreeSchedulingConfig(const json& deployment) {
  SchedulingConfig result;
  const json* field = FieldValue(deployment);
  if (field == nullptr) return result;
  result.carrier = Carrier::kField;
  result.path = FieldCarrierPath();
  if (!field->is_object()) {
    result.errors.push_back(
        Invalid(FieldCarrierPath(), *field, "must be an object").For(RuleId::kS17));
    return result;
  }
  result.config = *field;
  // spec.scheduling is the KEP's type: backend-only knobs have no place in it.
  if (result.config.erase(std::string(kBackendsMember)) > 0) {
    result.errors.push_back(
        Forbidden(FieldCarrierPath().Child(kBackendsMember),
                  "backend-only settings are not part of spec.scheduling; they belong in wasd's " +
                      std::string(kSchedulingAnnotation) + " annotation")
            .For(RuleId::kK5));
  }
  return result;
}

}  // namespace wasd::workloadbuilder

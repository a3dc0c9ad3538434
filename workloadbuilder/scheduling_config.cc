#include "workloadbuilder/scheduling_config.h"

#include <string>

#include "workloadbuilder/config_text.h"
#include "workloadbuilder/json_util.h"

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
  const json* annotations = MemberPath(deployment, {"metadata", "annotations"});
  if (annotations == nullptr) return nullptr;
  return Member(*annotations, kSchedulingAnnotation);
}

const json* FieldValue(const json& deployment) {
  return MemberPath(deployment, {"spec", "scheduling"});
}

// Parses the annotation member into `out`; appends carrier errors.
void ReadAnnotation(const json& member, json& out, FieldErrorList& errors) {
  const FieldPath path = AnnotationPath();
  const std::string* text = AsString(&member);
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

bool HasSchedulingCarrier(const json& deployment) {
  return FieldValue(deployment) != nullptr || AnnotationValue(deployment) != nullptr;
}

SchedulingConfig ReadSchedulingConfig(const json& deployment) {
  SchedulingConfig result;
  const json* field = FieldValue(deployment);
  const json* annotation = AnnotationValue(deployment);
  if (field == nullptr && annotation == nullptr) return result;

  json from_annotation;
  if (annotation != nullptr) ReadAnnotation(*annotation, from_annotation, result.errors);

  if (field != nullptr && !field->is_object()) {
    result.errors.push_back(
        Invalid(FieldCarrierPath(), *field, "must be an object").For(RuleId::kS17));
  }

  if (field == nullptr) {
    result.carrier = Carrier::kAnnotation;
    result.path = AnnotationPath();
    result.config = std::move(from_annotation);
    return result;
  }
  result.path = FieldCarrierPath();
  if (field->is_object()) {
    result.config = *field;
    // spec.scheduling is the KEP's type: backend-only knobs have no place in it.
    if (result.config.erase(std::string(kBackendsMember)) > 0) {
      result.errors.push_back(
          Forbidden(FieldCarrierPath().Child(kBackendsMember),
                    "backend-only settings are not part of spec.scheduling; put them in the " +
                        std::string(kSchedulingAnnotation) + " annotation")
              .For(RuleId::kK5));
    }
  }
  if (annotation == nullptr) {
    result.carrier = Carrier::kField;
    return result;
  }
  // Both carriers (H5): they must say the same thing. A broken annotation has
  // already been reported above. The annotation's `backends` block is not
  // compared (spec.scheduling cannot hold one) and is kept: the KEP-shaped
  // part comes from the field, the backend knobs from the annotation.
  result.carrier = Carrier::kBoth;
  if (from_annotation.is_object()) {
    json backends;
    if (auto it = from_annotation.find(std::string(kBackendsMember)); it != from_annotation.end()) {
      backends = std::move(*it);
      from_annotation.erase(it);
    }
    if (!SemanticEqual(from_annotation, result.config)) {
      result.errors.push_back(Invalid(AnnotationPath(), EchoedText(*AsString(annotation)),
                                      "must equal spec.scheduling when both are set")
                                  .For(RuleId::kH5));
    } else if (!backends.is_null() && result.config.is_object()) {
      result.config[std::string(kBackendsMember)] = std::move(backends);
    }
  }
  return result;
}

}  // namespace wasd::workloadbuilder

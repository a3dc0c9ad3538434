// FieldError and FieldErrorList: validation errors that render exactly like
// Kubernetes' `k8s.io/apimachinery/pkg/util/validation/field` errors
// (docs/api.md §b.0):
//
//   <path>: <Type>[: <value>][: <detail>]
//
// Types form a closed set. The value is omitted for Required, Forbidden,
// TooLong and Internal; strings print Go-quoted, numbers and booleans bare,
// null prints as "null", objects and arrays as compact JSON (a stated
// deviation: Go prints structs in Go syntax). A list aggregates to the single
// message, or `[e1, e2, …]` with exact duplicates dropped.
//
// Each error also carries the id of the rule it breaks (rule_id.h), set by the
// rule that makes it: `Invalid(path, v, "…").For(RuleId::kS4)`. The id is for
// counting and never changes the message.
//
// Plain values; no shared state. Thread-safe as any const value.
#ifndef WASD_WORKLOADBUILDER_FIELD_ERROR_H_
#define WASD_WORKLOADBUILDER_FIELD_ERROR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloadbuilder/field_path.h"
#include "workloadbuilder/rule_id.h"

namespace wasd::workloadbuilder {

enum class ErrorType {
  kRequired,      // "Required value"
  kInvalid,       // "Invalid value"
  kForbidden,     // "Forbidden"
  kTooMany,       // "Too many"
  kTooLong,       // "Too long"
  kDuplicate,     // "Duplicate value"
  kNotSupported,  // "Unsupported value"
  kInternal,      // "Internal error"
};

// The words Kubernetes prints for the type, e.g. "Invalid value".
std::string_view ErrorTypeText(ErrorType t);
// The metav1.StatusCause reason, e.g. "FieldValueInvalid".
std::string_view ErrorTypeReason(ErrorType t);

struct FieldError {
  ErrorType type = ErrorType::kInvalid;
  FieldPath path;
  nlohmann::json value;  // the offending value; ignored for types that omit it
  std::string detail;
  RuleId rule = RuleId::kOther;  // the rule this error breaks

  // This error, marked as breaking rule `id`.
  FieldError For(RuleId id) && {
    rule = id;
    return std::move(*this);
  }

  // "<Type>[: <value>][: <detail>]" — the message without the path (what a
  // StatusCause carries).
  std::string Body() const;
  // "<path>: <Body()>".
  std::string ToString() const;
};

// Constructors named like apimachinery's, so rules read like Kubernetes code.
FieldError Required(FieldPath path, std::string detail = {});
FieldError Invalid(FieldPath path, nlohmann::json value, std::string detail);
FieldError Forbidden(FieldPath path, std::string detail = {});
FieldError TooMany(FieldPath path, std::int64_t actual, std::int64_t max);
FieldError TooLong(FieldPath path, std::string detail);
FieldError Duplicate(FieldPath path, nlohmann::json value);
FieldError NotSupported(FieldPath path, nlohmann::json value,
                        const std::vector<std::string>& supported);
FieldError InternalError(FieldPath path, std::string detail);

using FieldErrorList = std::vector<FieldError>;

// Appends every error of `more` to `list`.
void Append(FieldErrorList& list, const FieldErrorList& more);

// The aggregate message: "" for no errors, the one message for one error,
// "[e1, e2, …]" for several; exact duplicate messages are printed once.
std::string AggregateMessage(const FieldErrorList& errors);
// The same from messages already rendered, each an error's ToString() in the
// order of the errors (for a caller that needs them anyway).
std::string AggregateMessageOf(const std::vector<std::string>& messages);

// Go's strconv.Quote for a UTF-8 string: "…" with \" \\ \n \t and \u/\x
// escapes for non-printable bytes.
std::string GoQuote(std::string_view s);

}  // namespace wasd::workloadbuilder

#endif  // WASD_WORKLOADBUILDER_FIELD_ERROR_H_

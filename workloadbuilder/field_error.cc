#include "workloadbuilder/field_error.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "base/utf8.h"

namespace wasd::workloadbuilder {

std::string_view ErrorTypeText(ErrorType t) {
  switch (t) {
    case ErrorType::kRequired: return "Required value";
    case ErrorType::kInvalid: return "Invalid value";
    case ErrorType::kForbidden: return "Forbidden";
    case ErrorType::kTooMany: return "Too many";
    case ErrorType::kTooLong: return "Too long";
    case ErrorType::kDuplicate: return "Duplicate value";
    case ErrorType::kNotSupported: return "Unsupported value";
    case ErrorType::kInternal: return "Internal error";
  }
  return "Invalid value";
}

std::string_view ErrorTypeReason(ErrorType t) {
  switch (t) {
    case ErrorType::kRequired: return "FieldValueRequired";
    case ErrorType::kInvalid: return "FieldValueInvalid";
    case ErrorType::kForbidden: return "FieldValueForbidden";
    case ErrorType::kTooMany: return "FieldValueTooMany";
    case ErrorType::kTooLong: return "FieldValueTooLong";
    case ErrorType::kDuplicate: return "FieldValueDuplicate";
    case ErrorType::kNotSupported: return "FieldValueNotSupported";
    case ErrorType::kInternal: return "InternalError";
  }
  return "FieldValueInvalid";
}

namespace {

bool OmitsValue(ErrorType t) {
  return t == ErrorType::kRequired || t == ErrorType::kForbidden || t == ErrorType::kTooLong ||
         t == ErrorType::kInternal;
}

std::string RenderValue(const nlohmann::json& v) {
  if (v.is_null()) return "\"null\"";
  if (v.is_string()) return GoQuote(v.get_ref<const std::string&>());
  // Numbers, booleans, objects and arrays: compact JSON. Invalid UTF-8 inside
  // is replaced rather than thrown, since values come from untrusted input.
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string GoQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = base::Utf8SequenceLength(s, i);
    if (n == 0) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\v': out += "\\v"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string FieldError::Body() const {
  std::string s(ErrorTypeText(type));
  if (!OmitsValue(type)) {
    s += ": ";
    s += RenderValue(value);
  }
  if (!detail.empty()) {
    s += ": ";
    s += detail;
  }
  return s;
}

std::string FieldError::ToString() const {
  std::string s = path.String();
  s += ": ";
  s += Body();
  return s;
}

FieldError Required(FieldPath path, std::string detail) {
  return {ErrorType::kRequired, std::move(path), nullptr, std::move(detail)};
}
FieldError Invalid(FieldPath path, nlohmann::json value, std::string detail) {
  return {ErrorType::kInvalid, std::move(path), std::move(value), std::move(detail)};
}
FieldError Forbidden(FieldPath path, std::string detail) {
  return {ErrorType::kForbidden, std::move(path), nullptr, std::move(detail)};
}
FieldError TooMany(FieldPath path, std::int64_t actual, std::int64_t max) {
  return {ErrorType::kTooMany, std::move(path), actual,
          "must have at most " + std::to_string(max) + " items"};
}
FieldError TooLong(FieldPath path, std::string detail) {
  return {ErrorType::kTooLong, std::move(path), nullptr, std::move(detail)};
}
FieldError Duplicate(FieldPath path, nlohmann::json value) {
  return {ErrorType::kDuplicate, std::move(path), std::move(value), {}};
}
FieldError NotSupported(FieldPath path, nlohmann::json value,
                        const std::vector<std::string>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (std::size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(supported[i]);
    }
  }
  return {ErrorType::kNotSupported, std::move(path), std::move(value), std::move(detail)};
}
FieldError InternalError(FieldPath path, std::string detail) {
  return {ErrorType::kInternal, std::move(path), nullptr, std::move(detail)};
}

void Append(FieldErrorList& list, const FieldErrorList& more) {
  list.insert(list.end(), more.begin(), more.end());
}

std::string AggregateMessage(const FieldErrorList& errors) {
  std::vector<std::string> messages;
  messages.reserve(errors.size());
  for (const FieldError& e : errors) messages.push_back(e.ToString());
  return AggregateMessageOf(messages);
}

std::string AggregateMessageOf(const std::vector<std::string>& messages) {
  if (messages.empty()) return {};
  if (messages.size() == 1) return messages.front();
  // Denials carry a few errors: those are compared with the ones kept so far;
  // a long list (up to the config's value limit) goes through a hash set.
  constexpr std::size_t kLinearUpTo = 16;
  std::vector<std::string_view> kept;
  kept.reserve(messages.size());
  std::unordered_set<std::string_view> seen;
  for (const std::string& m : messages) {
    if (messages.size() <= kLinearUpTo) {
      if (std::find(kept.begin(), kept.end(), m) != kept.end()) continue;
    } else if (!seen.insert(m).second) {
      continue;
    }
    kept.push_back(m);
  }
  if (kept.size() == 1) return std::string(kept.front());
  std::size_t size = 1;
  for (const std::string_view m : kept) size += m.size() + 2;
  std::string out;
  out.reserve(size);
  out += '[';
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (i > 0) out += ", ";
    out += kept[i];
  }
  out += ']';
  return out;
}

}  // namespace wasd::workloadbuilder

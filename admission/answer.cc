#include "admission/answer.h"

#include <string>
#include <vector>

#include "admission/json_access.h"
#include "base/base64.h"
#include "base/json_text.h"
#include "rules/rule_ids.h"
#include "workloadbuilder/field_error.h"

namespace wasd::admission {

namespace {

using nlohmann::json;
using workloadbuilder::ErrorTypeReason;
using workloadbuilder::FieldErrorList;

// metav1.Status of a denial: 422 Invalid, the aggregated field errors as the
// message and, unless turned off, one cause per field error with the kind and
// name of the object, as the API server's own validation reports them.
json DenialStatus(const FieldErrorList& errors, const json& request, bool with_causes) {
  json status = {{"metadata", json::object()},
                 {"status", "Failure"},
                 {"message", workloadbuilder::AggregateMessage(errors)},
                 {"reason", "Invalid"},
                 {"code", 422}};
  if (!with_causes) return status;
  json causes = json::array();
  for (const auto& e : errors) {
    causes.push_back(
        {{"reason", ErrorTypeReason(e.type)}, {"message", e.Body()}, {"field", e.path.String()}});
  }
  json details = {{"causes", std::move(causes)}};
  const std::string_view name = StringOr(Member(&request, "name"));
  if (!name.empty()) details["name"] = name;
  const std::string_view kind = StringOr(Path(&request, {"kind", "kind"}));
  if (!kind.empty()) {
    details["group"] = StringOr(Path(&request, {"kind", "group"}));
    details["kind"] = kind;
  }
  status["details"] = std::move(details);
  return status;
}

// Appends `s` as a JSON string exactly as nlohmann's dump(-1, ' ', false,
// error_handler_t::replace) writes it, so the direct text and the document's
// dump() are the same bytes.
void AppendJsonString(std::string& out, std::string_view s) {
  base::AppendJsonString(&out, s, base::JsonEscaping::kLikeNlohmann);
}

// `"key":"value"` (keys are ours: plain ASCII).
void AppendMember(std::string& out, std::string_view key, std::string_view value) {
  out += '"';
  out += key;
  out += "\":";
  AppendJsonString(out, value);
}

// The body of an answer written as text, the members of each object in the
// sorted order nlohmann (std::map) writes them, so the bytes are the same as
// EncodeWithNlohmann's: the review tests compare the two on every case. A
// denial's answer cost ~70,000 instructions through a json document and
// dump(), most of it the document (tools/bench/RESULTS.md).
std::string AnswerText(const Envelope& env, const json& request, const Verdict& v, bool with_causes,
                       const std::string& patch_base64) {
  std::string out;
  out.reserve(256 + patch_base64.size());
  out += '{';
  AppendMember(out, "apiVersion", env.api_version);
  out += ",\"kind\":\"AdmissionReview\",\"response\":{\"allowed\":";
  out += v.allowed ? "true" : "false";
  if (v.allowed && !v.patch.empty()) {
    out += ',';
    AppendMember(out, "patch", patch_base64);
    out += ",\"patchType\":\"JSONPatch\"";
  }
  if (!v.allowed) {
    // Each error rendered once, "<path>: <body>": the cause's field and
    // message are its two parts, the status message aggregates them.
    std::vector<std::string> messages;
    std::vector<std::size_t> path_sizes;
    messages.reserve(v.errors.size());
    path_sizes.reserve(v.errors.size());
    for (const auto& e : v.errors) {
      messages.push_back(e.path.String());
      path_sizes.push_back(messages.back().size());
      messages.back() += ": ";
      messages.back() += e.Body();
    }
    out += ",\"status\":{\"code\":422";
    if (with_causes) {
      out += ",\"details\":{\"causes\":[";
      for (std::size_t i = 0; i < v.errors.size(); ++i) {
        const std::string_view message = messages[i];
        out += i == 0 ? "{" : ",{";
        AppendMember(out, "field", message.substr(0, path_sizes[i]));
        out += ',';
        AppendMember(out, "message", message.substr(path_sizes[i] + 2));
        out += ',';
        AppendMember(out, "reason", ErrorTypeReason(v.errors[i].type));
        out += '}';
      }
      out += ']';
      const std::string_view kind = StringOr(Path(&request, {"kind", "kind"}));
      if (!kind.empty()) {
        out += ',';
        AppendMember(out, "group", StringOr(Path(&request, {"kind", "group"})));
        out += ',';
        AppendMember(out, "kind", kind);
      }
      const std::string_view name = StringOr(Member(&request, "name"));
      if (!name.empty()) {
        out += ',';
        AppendMember(out, "name", name);
      }
      out += '}';
    }
    out += ',';
    AppendMember(out, "message", workloadbuilder::AggregateMessageOf(messages));
    out += R"(,"metadata":{},"reason":"Invalid","status":"Failure"})";
  }
  out += ',';
  AppendMember(out, "uid", env.uid);
  if (!v.warnings.empty()) {
    out += ",\"warnings\":[";
    for (std::size_t i = 0; i < v.warnings.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonString(out, v.warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

// The same answer through a json document and nlohmann's dump(): the
// reference AnswerText is tested against (Options::write_answer_directly).
std::string EncodeWithNlohmann(const Envelope& env, const json& request, const Verdict& v,
                               bool with_causes, const std::string& patch_base64) {
  json response = {{"uid", env.uid}, {"allowed", v.allowed}};
  if (!v.allowed) {
    response["status"] = DenialStatus(v.errors, request, with_causes);
  } else if (!v.patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = patch_base64;
  }
  if (!v.warnings.empty()) response["warnings"] = v.warnings;
  return json{{"apiVersion", env.api_version},
              {"kind", "AdmissionReview"},
              {"response", std::move(response)}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Result BadRequest(std::string reason, Summary summary) {
  Result r;
  r.http_status = 400;
  r.content_type = "text/plain; charset=utf-8";
  summary.code = 400;
  summary.allowed = false;
  summary.error = reason;
  r.body = std::move(reason);
  r.body += '\n';
  r.summary = std::move(summary);
  return r;
}

Result Encode(const Envelope& env, const json& request, Verdict& v, Summary summary,
              bool with_causes, bool write_directly) {
  if (!v.bad_request.empty()) return BadRequest(std::move(v.bad_request), std::move(summary));
  std::string patch_base64;
  if (!v.allowed) {
    summary.code = 422;
    summary.denied_rules = rules::RuleIdsOf(v.errors);
  } else {
    summary.code = 200;
    if (!v.patch.empty()) {
      patch_base64 = base::Base64Encode(v.patch.Json());
      summary.patched = true;
    }
  }
  summary.allowed = v.allowed;
  Result r;
  r.body = write_directly ? AnswerText(env, request, v, with_causes, patch_base64)
                          : EncodeWithNlohmann(env, request, v, with_causes, patch_base64);
  r.summary = std::move(summary);
  return r;
}

}  // namespace wasd::admission

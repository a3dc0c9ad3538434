// One manifest's verdict in `wasd check` (check/check.cc judges it) and the
// reports it is printed in: text/yaml lines, -o json (CheckResult), -o junit.
#ifndef WASD_CHECK_VERDICT_H_
#define WASD_CHECK_VERDICT_H_

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/manifest_reader.h"
#include "workloadbuilder/field_error.h"

namespace wasd::check {

// Who would manage a Deployment (docs/design.md Q22).
enum class Manager { kNone, kWasd, kInTree };

std::string_view ManagerName(Manager m);

enum class Result { kAllowed, kIgnored, kDenied, kSkipped };

std::string_view ResultName(Result r);

// What `wasd check` found for one manifest: the webhook's verdict, the
// warnings it would send, and the objects the reconciler would create.
struct Verdict {
  const Manifest* manifest = nullptr;
  std::string kind;
  std::string api_version;
  std::string name;
  std::string ns;
  Result result = Result::kAllowed;
  Manager manager = Manager::kNone;
  workloadbuilder::FieldErrorList errors;  // kDenied
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  nlohmann::json objects = nlohmann::json::array();
};

// What kubectl prints when the webhook denies the Deployment: the API server
// passes wasd's status (reason Invalid, details with kind, name and one cause
// per field error) through, and kubectl renders the causes, one line for one
// error and a "* " list for several, as it does for the API server's own
// validation errors.
std::string KubectlDenial(const std::string& name, const workloadbuilder::FieldErrorList& errors);

// The text report of one verdict on `report` (stdout for -o text, where the
// objects follow; stderr for -o yaml).
void PrintVerdict(const Verdict& v, std::FILE* report, bool text);
// -o json: one item per manifest, for CI pipelines (a contract: README).
nlohmann::json VerdictsJson(const std::vector<Verdict>& verdicts, int checked, int denied);
// One item of VerdictsJson's `items` (for a streamed CheckResult).
nlohmann::json VerdictItemJson(const Verdict& v);
// VerdictsJunit in pieces, for a streamed report: the header (counts of
// `total` manifests), one testcase per verdict, the footer.
std::string JunitHeader(std::size_t total, int checked, int denied);
std::string VerdictJunitCase(const Verdict& v);
std::string JunitFooter();
// -o junit: one test case per manifest.
std::string VerdictsJunit(const std::vector<Verdict>& verdicts, int checked, int denied);

}  // namespace wasd::check

#endif  // WASD_CHECK_VERDICT_H_

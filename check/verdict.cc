// The reports of `wasd check`'s verdicts (check/verdict.h).
#include "check/verdict.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "check/yaml_output.h"

namespace wasd::check {

using nlohmann::json;

std::string_view ManagerName(Manager m) {
  switch (m) {
    case Manager::kNone: return "none";
    case Manager::kWasd: return "wasd";
    case Manager::kInTree: return "in-tree";
  }
  return "none";
}

std::string_view ResultName(Result r) {
  switch (r) {
    case Result::kAllowed: return "allowed";
    case Result::kIgnored: return "ignored";
    case Result::kDenied: return "denied";
    case Result::kSkipped: return "skipped";
  }
  return "allowed";
}

// What kubectl prints when the webhook denies the Deployment: the API server
// passes wasd's status (reason Invalid, details with kind, name and one cause
// per field error) through, and kubectl renders the causes, one line for one
// error and a "* " list for several, as it does for the API server's own
// validation errors.
std::string KubectlDenial(const std::string& name, const workloadbuilder::FieldErrorList& errors) {
  std::vector<std::string> lines;
  for (const auto& e : errors) {
    std::string line = e.ToString();
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
  }
  std::string out = "The Deployment \"" + name + "\" is invalid: ";
  if (lines.size() == 1) return out + lines.front();
  for (const std::string& l : lines) out += "\n* " + l;
  return out;
}

namespace {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 has no place for other control characters.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

// -o junit: one test case per manifest (a denial is a failure, another kind
// is skipped), the JUnit XML that CI systems display.
}  // namespace

void PrintVerdict(const Verdict& v, std::FILE* report, bool text) {
  const std::string& source = v.manifest->source;
  if (v.result == Result::kSkipped) {
    std::fprintf(report, "skipped: %s %s (%s): wasd checks only apps/v1 Deployments\n",
                 v.kind.empty() ? "<no kind>" : v.kind.c_str(), v.name.c_str(), source.c_str());
    return;
  }
  const std::string ref = "deployment.apps/" + v.name;
  const char* in_tree = v.manager == Manager::kInTree ? " (in-tree: spec.scheduling)" : "";
  if (v.result == Result::kDenied) {
    std::fprintf(report, "%s (%s): denied%s\n%s\n", ref.c_str(), source.c_str(), in_tree,
                 KubectlDenial(v.name, v.errors).c_str());
  } else if (v.result == Result::kIgnored) {
    std::fprintf(report,
                 "%s (%s): allowed; no wasd.io/scheduling annotation, so wasd leaves it "
                 "alone\n",
                 ref.c_str(), source.c_str());
  } else if (v.manager == Manager::kInTree) {
    std::fprintf(report, "%s (%s): allowed%s\n", ref.c_str(), source.c_str(), in_tree);
  } else {
    std::fprintf(report, "%s (%s): allowed\n", ref.c_str(), source.c_str());
  }
  for (const std::string& w : v.warnings) std::fprintf(report, "Warning: %s\n", w.c_str());
  for (const std::string& n : v.notes) std::fprintf(report, "note: %s\n", n.c_str());
  if (text && !v.objects.empty()) {
    std::printf("objects wasd would create for %s in namespace %s:\n", ref.c_str(), v.ns.c_str());
    for (const json& o : v.objects) std::printf("---\n%s", ToYaml(o).c_str());
  }
}

// -o json: one item per manifest, for CI pipelines (a contract: README).
json VerdictItemJson(const Verdict& v) {
  {
    json causes = json::array();
    for (const auto& e : v.errors) {
      causes.push_back({{"type", std::string(workloadbuilder::ErrorTypeReason(e.type))},
                        {"field", e.path.String()},
                        {"message", e.Body()}});
    }
    json item = {{"source", v.manifest->source},
                 {"document", v.manifest->index},
                 {"apiVersion", v.api_version},
                 {"kind", v.kind},
                 {"name", v.name},
                 {"namespace", v.ns},
                 {"verdict", ResultName(v.result)},
                 {"managedBy", ManagerName(v.manager)},
                 {"allowed", v.result != Result::kDenied},
                 {"causes", std::move(causes)},
                 {"warnings", v.warnings},
                 {"notes", v.notes},
                 {"objects", v.objects}};
    if (v.result == Result::kDenied) item["message"] = KubectlDenial(v.name, v.errors);
    return item;
  }
}

json VerdictsJson(const std::vector<Verdict>& verdicts, int checked, int denied) {
  json items = json::array();
  for (const Verdict& v : verdicts) items.push_back(VerdictItemJson(v));
  return {{"apiVersion", "wasd.io/v1alpha1"},
          {"kind", "CheckResult"},
          {"checked", checked},
          {"denied", denied},
          {"items", std::move(items)}};
}

std::string JunitHeader(std::size_t total, int checked, int denied) {
  const std::string skipped = std::to_string(static_cast<int>(total) - checked);
  const std::string counts = " tests=\"" + std::to_string(total) + "\" failures=\"" +
                             std::to_string(denied) + "\" skipped=\"" + skipped + "\">\n";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"wasd check\"" + counts +
         "  <testsuite name=\"wasd check\"" + counts;
}

std::string JunitFooter() { return "  </testsuite>\n</testsuites>\n"; }

std::string VerdictJunitCase(const Verdict& v) {
  std::string out;
  {
    const std::string name = (v.kind.empty() ? std::string("<no kind>") : v.kind) + "/" + v.name;
    out += "    <testcase classname=\"" + XmlEscape(v.manifest->source) + "\" name=\"" +
           XmlEscape(name) + " (document " + std::to_string(v.manifest->index) + ")\">\n";
    if (v.result == Result::kDenied) {
      const std::string message = KubectlDenial(v.name, v.errors);
      out += "      <failure type=\"Invalid\" message=\"" + XmlEscape(message) + "\">" +
             XmlEscape(message) + "</failure>\n";
    } else if (v.result == Result::kSkipped) {
      out += "      <skipped message=\"wasd checks only apps/v1 Deployments\"/>\n";
    }
    if (!v.warnings.empty()) {
      std::string text;
      for (const std::string& w : v.warnings) text += "Warning: " + w + "\n";
      out += "      <system-out>" + XmlEscape(text) + "</system-out>\n";
    }
    out += "    </testcase>\n";
  }
  return out;
}

std::string VerdictsJunit(const std::vector<Verdict>& verdicts, int checked, int denied) {
  std::string out = JunitHeader(verdicts.size(), checked, denied);
  for (const Verdict& v : verdicts) out += VerdictJunitCase(v);
  return out + JunitFooter();
}

}  // namespace wasd::check

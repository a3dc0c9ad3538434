// The capability table as text (`wasd check --capabilities`) and as
// Markdown (docs), from workloadbuilder/backend_capabilities.cc's rows.
#include <string>

#include "workloadbuilder/backend.h"
#include "workloadbuilder/backend_capabilities.h"
#include "workloadbuilder/builder.h"

namespace wasd::workloadbuilder {

namespace {

// Width of the field column of CapabilityTableText: the longest field,
// "backends.coscheduling.scheduleTimeoutSeconds", and one space.
constexpr std::size_t kFieldColumn = 45;

}  // namespace

std::string CapabilityTableText(const Backend* only) {
  std::string out;
  for (Backend b : kAllBackends) {
    if (only != nullptr && *only != b) continue;
    if (!out.empty()) out += '\n';
    const BackendInfo& info = Info(b);
    out += "backend " + std::string(info.name) + " (" + GroupVersion(b) + " " +
           std::string(info.kind) + (info.has_workload ? " + Workload" : "") + ")\n";
    for (const CapabilityRow& row : CapabilityTable()) {
      const Capability& c = CapabilityOf(row, b);
      std::string field(row.field);
      if (const std::size_t at = field.find("<backend>"); at != std::string::npos) {
        field.replace(at, 9, info.name);
      }
      out += "  " + std::string(SupportSymbol(c.support)) + " " + field;
      if (field.size() < kFieldColumn) out.append(kFieldColumn - field.size(), ' ');
      out += " " + std::string(c.note) + "\n";
    }
  }
  out += "\n✔ maps directly  ◐ maps under the stated condition, denied otherwise  ✘ denied\n";
  return out;
}

std::string CapabilityTableMarkdown() {
  std::string out = "| intent field |";
  for (Backend b : kAllBackends) out += " " + std::string(BackendName(b)) + " |";
  out += "\n| --- |";
  for (std::size_t i = 0; i < kAllBackends.size(); ++i) out += " --- |";
  out += '\n';
  for (const CapabilityRow& row : CapabilityTable()) {
    out += "| `" + std::string(row.field) + "` |";
    for (Backend b : kAllBackends) {
      const Capability& c = CapabilityOf(row, b);
      out += " " + std::string(SupportSymbol(c.support)) + " " + std::string(c.note) + " |";
    }
    out += '\n';
  }
  return out;
}

}  // namespace wasd::workloadbuilder

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "admission/options.h"

namespace wasd::admission {

namespace {

std::size_t IndexOf(workloadbuilder::Backend backend) {
  for (std::size_t i = 0; i < workloadbuilder::kAllBackends.size(); ++i) {
    if (workloadbuilder::kAllBackends[i] == backend) return i;
  }
  return 0;
}

std::optional<PodHold> ParseMode(std::string_view text) {
  if (text == "scheduler") return PodHold::kScheduler;
  if (text == "gate") return PodHold::kGate;
  return std::nullopt;
}

std::string Allowed() {
  std::string backends;
  for (workloadbuilder::Backend b : workloadbuilder::kAllBackends) {
    backends += (backends.empty() ? "" : ", ") + std::string(workloadbuilder::BackendName(b));
  }
  return "want BACKEND=MODE pairs separated by commas, BACKEND one of " + backends +
         ", MODE scheduler or gate";
}

}  // namespace

std::string_view PodHoldName(PodHold hold) {
  return hold == PodHold::kScheduler ? "scheduler" : "gate";
}

PodHold PodHolds::For(workloadbuilder::Backend backend) const {
  return by_backend[IndexOf(backend)];
}

void PodHolds::Set(workloadbuilder::Backend backend, PodHold hold) {
  by_backend[IndexOf(backend)] = hold;
}

std::string PodHolds::Text() const {
  std::string out;
  for (workloadbuilder::Backend b : workloadbuilder::kAllBackends) {
    out += (out.empty() ? "" : ",") + std::string(workloadbuilder::BackendName(b)) + "=" +
           std::string(PodHoldName(For(b)));
  }
  return out;
}

std::string ParsePodHolds(std::string_view text, PodHolds* holds) {
  PodHolds next = *holds;
  std::array<bool, workloadbuilder::kAllBackends.size()> seen{};
  // At most one item per character: the loop ends.
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      return "\"" + std::string(item) + "\": " + Allowed();
    }
    const std::optional<workloadbuilder::Backend> backend =
        workloadbuilder::ParseBackend(item.substr(0, eq));
    const std::optional<PodHold> mode = ParseMode(item.substr(eq + 1));
    if (!backend || !mode) return "\"" + std::string(item) + "\": " + Allowed();
    if (seen[IndexOf(*backend)]) {
      return "\"" + std::string(item) + "\": backend " +
             std::string(workloadbuilder::BackendName(*backend)) + " given twice";
    }
    seen[IndexOf(*backend)] = true;
    next.Set(*backend, *mode);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  *holds = next;
  return {};
}

}  // namespace wasd::admission

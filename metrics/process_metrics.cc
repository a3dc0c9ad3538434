#include "metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <vector>

#include "metrics/exposition.h"
#include "runtime/file_util.h"

// WASD_VERSION, WASD_REVISION: the generated header of cmake/build_version.cmake
// when the build has it, else compile definitions (CMakeLists.txt).
#if __has_include("build_version.h")
#include "build_version.h"
#endif
#ifndef WASD_VERSION
#define WASD_VERSION "dev"
#endif
#ifndef WASD_REVISION
#define WASD_REVISION "unknown"
#endif

namespace wasd::metrics {

namespace {

bool ToU64(std::string_view s, std::uint64_t* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Reads a small /proc file; /proc files report size 0, so read to the end.
// The bound keeps a surprise from growing without limit (stat is < 1 KiB,
// /proc/stat a few KiB per CPU).
std::optional<std::string> ReadProcFile(const char* path) {
  constexpr std::size_t kMaxBytes = 1 << 20;
  base::Result<std::string> text = runtime::ReadSmallFile(path, kMaxBytes);
  if (!text.ok()) return std::nullopt;
  return std::move(text).value();
}

// Counts entries of /proc/self/fd (minus the one opendir itself holds).
std::optional<double> CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;
}

void AppendGauge(std::string* out, std::string_view name, std::string_view type,
                 std::string_view help, const std::optional<double>& value) {
  if (!value) return;
  AppendHeader(out, name, type, help);
  AppendSample(out, name, "", *value);
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // Fields from 3 (state) on, split by single spaces.
  std::vector<std::string_view> fields;
  std::size_t pos = close + 1;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n')) ++pos;
    const std::size_t end = text.find_first_of(" \n", pos);
    const std::size_t stop = end == std::string_view::npos ? text.size() : end;
    if (stop > pos) fields.push_back(text.substr(pos, stop - pos));
    pos = stop;
  }
  // fields[0] is field 3; field k is fields[k - 3].
  constexpr std::size_t kRss = 24 - 3;
  if (fields.size() <= kRss) return std::nullopt;
  ProcStat s;
  if (!ToU64(fields[14 - 3], &s.utime_ticks) || !ToU64(fields[15 - 3], &s.stime_ticks) ||
      !ToU64(fields[22 - 3], &s.start_ticks) || !ToU64(fields[23 - 3], &s.vsize_bytes) ||
      !ToU64(fields[kRss], &s.rss_pages)) {
    return std::nullopt;
  }
  return s;
}

std::optional<std::int64_t> ParseBootTime(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (line.rfind("btime ", 0) == 0) {
      std::uint64_t v = 0;
      if (!ToU64(line.substr(6), &v)) return std::nullopt;
      return static_cast<std::int64_t>(v);
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return std::nullopt;
}

ProcessSample ReadProcessSample() {
  ProcessSample sample;
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  if (auto text = ReadProcFile("/proc/self/stat"); text && ticks > 0 && page > 0) {
    if (auto stat = ParseProcStat(*text)) {
      sample.cpu_seconds =
          static_cast<double>(stat->utime_ticks + stat->stime_ticks) / static_cast<double>(ticks);
      sample.resident_bytes = static_cast<double>(stat->rss_pages) * static_cast<double>(page);
      sample.virtual_bytes = static_cast<double>(stat->vsize_bytes);
      if (auto boot_text = ReadProcFile("/proc/stat")) {
        if (auto boot = ParseBootTime(*boot_text)) {
          sample.start_time_seconds =
              static_cast<double>(*boot) +
              static_cast<double>(stat->start_ticks) / static_cast<double>(ticks);
        }
      }
    }
  }
  sample.open_fds = CountOpenFds();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    sample.max_fds = static_cast<double>(limit.rlim_cur);
  }
  return sample;
}

void AppendProcessMetrics(std::string* out, const ProcessSample& s) {
  AppendGauge(out, "process_cpu_seconds_total", "counter",
              "CPU time used by the process (user + system), in seconds.", s.cpu_seconds);
  AppendGauge(out, "process_resident_memory_bytes", "gauge",
              "Resident set size (RSS) of the process, in bytes.", s.resident_bytes);
  AppendGauge(out, "process_virtual_memory_bytes", "gauge",
              "Virtual address space of the process, in bytes.", s.virtual_bytes);
  AppendGauge(out, "process_open_fds", "gauge", "File descriptors the process has open.",
              s.open_fds);
  AppendGauge(out, "process_max_fds", "gauge",
              "Soft limit on open file descriptors (RLIMIT_NOFILE).", s.max_fds);
  AppendGauge(out, "process_start_time_seconds", "gauge",
              "When the process started, in Unix seconds.", s.start_time_seconds);
}

std::string_view BuildVersion() { return WASD_VERSION; }
std::string_view BuildRevision() {
  // "" outside git (cmake/build_version.cmake): a label value that says so.
  const std::string_view revision = WASD_REVISION;
  return revision.empty() ? std::string_view("unknown") : revision;
}

void AppendBuildInfo(std::string* out) {
  AppendHeader(out, "wasd_build_info", "gauge",
               "Always 1; the labels name the wasd version and git revision of this binary.");
  std::string labels = "version=\"";
  AppendLabelValue(&labels, BuildVersion());
  labels += "\",revision=\"";
  AppendLabelValue(&labels, BuildRevision());
  labels += "\"";
  AppendSample(out, "wasd_build_info", labels, 1);
}

}  // namespace wasd::metrics

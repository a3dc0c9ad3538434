// The standard process_* metrics (the names every Prometheus client library
// exports, so "restarts / memory / file descriptors" panels and alerts work
// for wasd as for any Go controller) and wasd_build_info, for both
// components' /metrics.
//
//   process_cpu_seconds_total       counter  user + system CPU time
//   process_resident_memory_bytes   gauge    RSS
//   process_virtual_memory_bytes    gauge    virtual memory size
//   process_open_fds                gauge    open file descriptors
//   process_max_fds                 gauge    RLIMIT_NOFILE (soft)
//   process_start_time_seconds      gauge    Unix time the process started
//   wasd_build_info{version,revision} gauge  always 1
//
// Read from /proc (Linux) at scrape time; the parsers are pure functions so
// they are tested on fixed text. A value that cannot be read is left out
// rather than reported as 0.
//
// Thread-safe: no shared state.
#ifndef WASD_METRICS_PROCESS_METRICS_H_
#define WASD_METRICS_PROCESS_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wasd::metrics {

// The fields of /proc/<pid>/stat that the metrics use.
struct ProcStat {
  std::uint64_t utime_ticks = 0;  // field 14
  std::uint64_t stime_ticks = 0;  // field 15
  std::uint64_t start_ticks = 0;  // field 22, clock ticks after boot
  std::uint64_t vsize_bytes = 0;  // field 23
  std::uint64_t rss_pages = 0;    // field 24
};

// Parses the text of /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'. Empty
// when the text is malformed.
std::optional<ProcStat> ParseProcStat(std::string_view text);

// The boot time ("btime" line, Unix seconds) from the text of /proc/stat.
std::optional<std::int64_t> ParseBootTime(std::string_view text);

// A snapshot of the process's metrics; nullopt members could not be read.
struct ProcessSample {
  std::optional<double> cpu_seconds;
  std::optional<double> resident_bytes;
  std::optional<double> virtual_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;
  std::optional<double> start_time_seconds;
};

// Reads the calling process's sample from /proc/self and getrlimit.
ProcessSample ReadProcessSample();

// Appends the process_* families of `sample` (HELP, TYPE, value).
void AppendProcessMetrics(std::string* out, const ProcessSample& sample);

// Appends wasd_build_info{version="…",revision="…"} 1 for this binary
// (version and revision are fixed at build time; "unknown" when the build had
// no git revision).
void AppendBuildInfo(std::string* out);

// The version and revision compiled in.
std::string_view BuildVersion();
std::string_view BuildRevision();

}  // namespace wasd::metrics

#endif  // WASD_METRICS_PROCESS_METRICS_H_

// Which gangs get wasd_gang_members series (--gang-member-metrics): seven
// series per gang, so 10,000 gangs would mean 70,000 series if every gang had
// them. By default only the gangs worth looking at do — those not Scheduled,
// and those with members bound before their group existed — at most
// --gang-member-metrics-max-gangs of them. Pure; no I/O.
#ifndef WASD_RECONCILER_GANG_MEMBER_SERIES_H_
#define WASD_RECONCILER_GANG_MEMBER_SERIES_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace wasd::reconciler {

enum class GangMemberSeries {
  kNotScheduled,  // "not-scheduled": gangs not Scheduled, or with bound_before_group > 0
  kAll,           // "all": every diagnosed gang
  kNone,          // "none": no wasd_gang_members at all (wasd_gangs stays)
};

inline constexpr std::size_t kDefaultGangMemberMaxGangs = 1000;

inline std::optional<GangMemberSeries> ParseGangMemberSeries(std::string_view v) {
  if (v == "not-scheduled") return GangMemberSeries::kNotScheduled;
  if (v == "all") return GangMemberSeries::kAll;
  if (v == "none") return GangMemberSeries::kNone;
  return std::nullopt;
}

inline std::string_view GangMemberSeriesName(GangMemberSeries s) {
  switch (s) {
    case GangMemberSeries::kAll: return "all";
    case GangMemberSeries::kNone: return "none";
    case GangMemberSeries::kNotScheduled: break;
  }
  return "not-scheduled";
}

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_GANG_MEMBER_SERIES_H_

// ToJson (see diagnosis.h): a diagnosis as `wasd explain -o json` prints it.
#include "doctor/diagnosis.h"
#include "objects/quantity.h"

namespace wasd::doctor {

using nlohmann::json;

nlohmann::json ToJson(const Diagnosis& d) {
  json counts = {{"replicas", d.counts.replicas},
                 {"minCount", d.counts.min_count},
                 {"created", d.counts.created},
                 {"gatedByWasd", d.counts.gated_wasd},
                 {"gatedByOthers", d.counts.gated_other},
                 {"bound", d.counts.bound},
                 {"running", d.counts.running},
                 {"failed", d.counts.failed},
                 {"boundBeforeGroup", d.counts.bound_before_group}};
  json fit = json::object();
  if (d.fit.computed) {
    json requests = json::object();
    for (const auto& [name, v] : d.fit.requests)
      requests[name] = objects::FormatQuantityMilli(name, v);
    json short_by = json::object();
    for (const auto& [name, v] : d.fit.short_by)
      short_by[name] = objects::FormatQuantityMilli(name, v);
    json domains = json::array();
    for (const DomainFit& dom : d.fit.domains) {
      domains.push_back({{"domain", dom.domain}, {"nodes", dom.nodes}, {"room", dom.room}});
    }
    fit = {{"topologyKey", d.fit.topology_key},
           {"needed", d.fit.needed},
           {"requests", requests},
           {"domains", domains},
           {"short", short_by},
           {"fits", d.fit.fits},
           {"summary", d.fit.text}};
  }
  json timeline = json::array();
  for (const TimelineEntry& e : d.timeline) {
    timeline.push_back({{"time", e.time}, {"pod", e.pod}, {"event", e.what}});
  }
  return {{"status", d.scheduled ? "True" : "False"},
          {"reason", d.reason},
          {"message", d.message},
          {"nextStep", d.next_step},
          {"backend", d.backend},
          {"replicaSet", d.replicaset},
          {"group", {{"name", d.group_name}, {"kind", d.group_kind}, {"summary", d.group_summary}}},
          {"schedulerMessage", d.scheduler_said},
          {"counts", counts},
          {"fit", fit},
          {"timeline", timeline}};
}

}  // namespace wasd::doctor

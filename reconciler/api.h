// Api: the reconciler's door to the API server, as an interface — the calls
// the executor, the Event recorder, the leader elector and the controller's
// checks make. KubeApi (kube_api.h) is the production implementation over
// kube::Client; tests/reconciler/fake_api.h keeps objects in memory and
// scripts failures, so the code that writes to the cluster is tested in
// milliseconds. Also names the resources the reconciler uses beyond
// kube/resource.h.
//
// Every call blocks until the answer (or its failure) and never throws: a
// failure is the returned Status (an HTTP error with its code and reason, or
// no answer at all).
//
// Implementations must be thread-safe: workers, the elector and the
// API-check loop call concurrently.
#ifndef WASD_RECONCILER_API_H_
#define WASD_RECONCILER_API_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/status.h"
#include "kube/client.h"
#include "kube/resource.h"
#include "reconciler/scheduling_api.h"
#include "workloadbuilder/backend.h"

namespace wasd::reconciler {

// Workloads and PodGroups through the scheduling.k8s.io version in use
// (scheduling_api.h: found by discovery; the default, v1beta1, is what a
// Kubernetes 1.37 cluster serves, for tests).
kube::Resource Workloads(const SchedulingApi& api = SchedulingApi{"v1beta1"});
kube::Resource PodGroups(const SchedulingApi& api = SchedulingApi{"v1beta1"});
// The group objects of `backend`: PodGroups(api) for native, else
// Info(backend) group/version/resource (scheduling.volcano.sh/v1beta1
// podgroups, …).
kube::Resource GroupResource(workloadbuilder::Backend backend,
                             const SchedulingApi& api = SchedulingApi{"v1beta1"});
kube::Resource PriorityClasses();  // scheduling.k8s.io/v1 priorityclasses (cluster-scoped)

class Api {
 public:
  virtual ~Api() = default;

  // The object, or NotFound (404) and the like.
  // Discovery: the APIResourceList of `group_version`
  // ("scheduling.k8s.io/v1"); NotFound (404) when it is not served.
  virtual base::Result<nlohmann::json> GetGroupVersion(std::string_view group_version) = 0;
  virtual base::Result<nlohmann::json> Get(const kube::Resource& r, std::string_view ns,
                                           std::string_view name) = 0;
  // One page of at most `limit` objects ("" = every namespace); limit 0:
  // every object in one answer.
  virtual base::Result<kube::ListResult> ListPage(const kube::Resource& r, std::string_view ns,
                                                  std::int64_t limit) = 0;
  // The stored object; AlreadyExists (409, reason "AlreadyExists") when the
  // name is taken.
  virtual base::Result<nlohmann::json> Create(const kube::Resource& r, std::string_view ns,
                                              const nlohmann::json& object) = 0;
  // Create of an object already encoded as JSON text (an Event, written
  // without building a DOM first). By default decoded and passed to Create.
  virtual base::Result<nlohmann::json> CreateEncoded(const kube::Resource& r, std::string_view ns,
                                                     const std::string& body);
  // PUT; Conflict (409) when object's resourceVersion is not the stored one.
  virtual base::Result<nlohmann::json> Update(const kube::Resource& r, std::string_view ns,
                                              std::string_view name,
                                              const nlohmann::json& object) = 0;
  // RFC 6902 patch; a failed `test` operation is refused (422, or 500 from
  // older API servers).
  virtual base::Result<nlohmann::json> JsonPatch(const kube::Resource& r, std::string_view ns,
                                                 std::string_view name,
                                                 const nlohmann::json& patch) = 0;
  // Preconditions: uid always; resourceVersion when not empty (a mismatch is
  // a Conflict). The answer is the object when finalizers keep it
  // (Terminating), else a Status object.
  virtual base::Result<nlohmann::json> Delete(const kube::Resource& r, std::string_view ns,
                                              std::string_view name,
                                              std::string_view precondition_uid,
                                              std::string_view precondition_resource_version) = 0;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_API_H_

// Api: the reconciler's door to the API server — kube::Client calls with a
// per-call timeout and a count of every request in Metrics (verb, code).
// Also names the resources the reconciler uses beyond kube/resource.h.
//
// Thread-safe, as kube::Client.
#ifndef WASD_RECONCILER_API_H_
#define WASD_RECONCILER_API_H_

#include <chrono>
#include <nlohmann/json.hpp>
#include <string_view>

#include "kube/client.h"
#include "reconciler/metrics.h"

namespace wasd::reconciler {

kube::Resource Workloads();        // scheduling.k8s.io/v1beta1 workloads
kube::Resource PodGroups();        // scheduling.k8s.io/v1beta1 podgroups
kube::Resource PriorityClasses();  // scheduling.k8s.io/v1 priorityclasses (cluster-scoped)

// One API call may take this long, retries included: long enough for a busy
// API server, short enough that a worker (and the Lease renewal, which must
// succeed within the 10 s renew deadline) is never stuck behind it.
inline constexpr std::chrono::seconds kCallTimeout{5};

class Api {
 public:
  Api(kube::Client& client, Metrics& metrics) : client_(client), metrics_(metrics) {}

  base::Result<nlohmann::json> Get(const kube::Resource& r, std::string_view ns,
                                   std::string_view name);
  base::Result<kube::ListResult> ListPage(const kube::Resource& r, std::string_view ns,
                                          std::int64_t limit);
  base::Result<nlohmann::json> Create(const kube::Resource& r, std::string_view ns,
                                      const nlohmann::json& object);
  base::Result<nlohmann::json> Update(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, const nlohmann::json& object);
  base::Result<nlohmann::json> JsonPatch(const kube::Resource& r, std::string_view ns,
                                         std::string_view name, const nlohmann::json& patch);
  // Preconditions: uid always; resourceVersion when not empty.
  base::Result<nlohmann::json> Delete(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, std::string_view precondition_uid,
                                      std::string_view precondition_resource_version = {});

  kube::Client& client() { return client_; }

 private:
  template <typename T>
  base::Result<T> Count(std::string_view verb, base::Result<T> result);

  kube::Client& client_;
  Metrics& metrics_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_API_H_

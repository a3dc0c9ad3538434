// KubeApi: Api (api.h) over kube::Client — every call with a per-call
// timeout (kCallTimeout), and every request counted in Metrics by verb and
// HTTP code (0: no answer). The answers nobody reads are not decoded: an
// Event's POST and a deployments/status patch return an empty object.
//
// Thread-safe, as kube::Client and Metrics.
#ifndef WASD_RECONCILER_KUBE_API_H_
#define WASD_RECONCILER_KUBE_API_H_

#include <chrono>
#include <string_view>

#include "kube/client.h"
#include "reconciler/api.h"
#include "reconciler/metrics.h"

namespace wasd::reconciler {

// One API call may take this long, retries included: long enough for a busy
// API server, short enough that a worker (and the Lease renewal, which must
// succeed within the 10 s renew deadline) is never stuck behind it.
inline constexpr std::chrono::seconds kCallTimeout{5};

class KubeApi : public Api {
 public:
  // `client` and `metrics` must outlive this object.
  KubeApi(kube::Client& client, Metrics& metrics) : client_(client), metrics_(metrics) {}

  base::Result<nlohmann::json> GetGroupVersion(std::string_view group_version) override;
  base::Result<nlohmann::json> Get(const kube::Resource& r, std::string_view ns,
                                   std::string_view name) override;
  base::Result<kube::ListResult> ListPage(const kube::Resource& r, std::string_view ns,
                                          std::int64_t limit) override;
  base::Result<nlohmann::json> Create(const kube::Resource& r, std::string_view ns,
                                      const nlohmann::json& object) override;
  base::Result<nlohmann::json> CreateEncoded(const kube::Resource& r, std::string_view ns,
                                             const std::string& body) override;
  base::Result<nlohmann::json> Update(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, const nlohmann::json& object) override;
  base::Result<nlohmann::json> JsonPatch(const kube::Resource& r, std::string_view ns,
                                         std::string_view name,
                                         const nlohmann::json& patch) override;
  base::Result<nlohmann::json> Delete(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, std::string_view precondition_uid,
                                      std::string_view precondition_resource_version) override;

 private:
  template <typename T>
  base::Result<T> Count(std::string_view verb, base::Result<T> result);

  kube::Client& client_;
  Metrics& metrics_;
};

}  // namespace wasd::reconciler

#endif  // WASD_RECONCILER_KUBE_API_H_

// Resource addressing and URL building, pure: which REST path and query
// string a call on a resource type, namespace and name turns into.
//
//   Resource{"apps/v1", "deployments"} , "ns", "web"
//     -> /apis/apps/v1/namespaces/ns/deployments/web
//   Resource{"v1", "pods"}.Sub("status"), "ns", "p"
//     -> /api/v1/namespaces/ns/pods/p/status
//   Resource{"admissionregistration.k8s.io/v1", "validatingwebhookconfigurations",
//            /*namespaced=*/false}, "", "wasd"
//     -> /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wasd
//
// Path segments and query values are percent-escaped. Also parses the
// server URL of a Config.
//
// Plain values and free functions; thread-safe.
#ifndef WASD_KUBE_RESOURCE_H_
#define WASD_KUBE_RESOURCE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace wasd::kube {

using base::Result;
using base::Status;

struct Resource {
  Resource() = default;
  Resource(std::string gv, std::string plural_name, bool is_namespaced = true, std::string sub = {})
      : group_version(std::move(gv)),
        plural(std::move(plural_name)),
        namespaced(is_namespaced),
        subresource(std::move(sub)) {}

  std::string group_version;  // "v1" (core) or "group/version", as in apiVersion
  std::string plural;         // "deployments"
  bool namespaced = true;
  std::string subresource;  // "", "status", "scale", …

  Resource Sub(std::string sub) const {
    Resource r = *this;
    r.subresource = std::move(sub);
    return r;
  }
};

// Well-known resources wasd uses.
Resource Deployments();                      // apps/v1 deployments
Resource ReplicaSets();                      // apps/v1 replicasets
Resource Pods();                             // v1 pods
Resource Events();                           // v1 events
Resource Leases();                           // coordination.k8s.io/v1 leases
Resource ValidatingWebhookConfigurations();  // admissionregistration.k8s.io/v1, cluster-scoped
Resource MutatingWebhookConfigurations();    // admissionregistration.k8s.io/v1, cluster-scoped

// "/api/v1" or "/apis/<group>/<version>".
std::string GroupVersionPrefix(std::string_view group_version);

// The REST path for a resource. `ns` empty on a namespaced resource means
// "all namespaces" (only sensible for list/watch); `name` empty means the
// collection. Never includes a query string.
std::string ResourcePath(const Resource& resource, std::string_view ns, std::string_view name);

// RFC 3986 percent-encoding of everything outside unreserved characters
// (A-Z a-z 0-9 - . _ ~).
std::string PercentEscape(std::string_view s);

// "?k1=v1&k2=v2" with keys and values escaped, in the given order; "" when
// empty.
using Query = std::vector<std::pair<std::string, std::string>>;
std::string QueryString(const Query& query);

// A parsed Config::server.
struct ServerUrl {
  bool tls = true;                 // https
  std::string host;                // without brackets for IPv6
  std::string port;                // "443" / "80" when the URL gave none
  std::string base_path;           // "" or "/prefix" (no trailing slash)
  std::string HostHeader() const;  // "host[:port]", IPv6 bracketed
};
// Accepts http:// and https:// URLs (no user info); a bare host[:port] is
// taken as https. Fails with kInvalidArgument naming the problem.
Result<ServerUrl> ParseServerUrl(std::string_view url);

}  // namespace wasd::kube

#endif  // WASD_KUBE_RESOURCE_H_

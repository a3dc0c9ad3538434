// Client: wasd's own Kubernetes API client — JSON over HTTPS (Beast +
// OpenSSL), blocking calls meant for worker threads (never an I/O thread of
// another io_context).
//
//   auto cfg = kube::LoadConfig(kube::SourcesFromEnvironment(flag));
//   if (!cfg.ok()) { log(cfg.status().ToString()); return 2; }
//   kube::Client client(cfg.value());
//   auto d = client.Get(kube::Deployments(), "ns", "web", {.timeout = 2s});
//   if (d.ok())                          -> d.value() is the Deployment
//   else if (d.status().not_found())     -> 404
//   else if (d.status().unreachable())   -> d.status().message() says why
//
// Objects are nlohmann::json values as the API server sends them.
//
// Behaviour:
//  * TLS verifies the server certificate chain against Config::ca_pem (or the
//    system store) and the host name or IP against the certificate, unless
//    insecure_skip_tls_verify. A verification failure is Status kTlsVerify:
//    "server certificate of HOST:PORT did not verify (checked name N): <the
//    OpenSSL reason, e.g. unable to get local issuer certificate>".
//  * The bearer token file, when configured, is re-read on every request so
//    rotated service-account tokens are picked up; if a read fails the last
//    good token is used.
//  * Keep-alive connections are pooled (up to kMaxIdleConnections idle). A
//    request that fails on a reused connection before any answer is retried
//    once on a new connection when that cannot duplicate a write.
//  * Retries (bounded by Config::retry and always by the call's timeout):
//    429 — after Retry-After (clamped) or backoff; 5xx with Retry-After on
//    GET/LIST; connect failures (request never sent) — with backoff.
//    Nothing else is retried: 409 is returned as conflict() for the caller's
//    read-modify-write loop.
//  * Limits (Config::limits): non-watch response bodies ≤ 64 MiB, watch
//    event lines ≤ 16 MiB, response headers ≤ 64 KiB; over a limit the call
//    fails with kBadResponse.
//
// Thread-safe: any number of threads may call any method concurrently; each
// call uses its own connection. The Client must outlive calls in progress.
#ifndef WASD_KUBE_CLIENT_H_
#define WASD_KUBE_CLIENT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_projection.h"
#include "base/status.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "kube/watch_decoder.h"

namespace wasd::kube {

using base::Result;
using base::Status;

// The default response body limit (Config::limits explains the number).
inline constexpr std::size_t kMaxResponseBytes = Limits{}.max_response_bytes;
// Idle keep-alive connections kept per Client: one per concurrent worker is
// plenty for a controller; more would just hold API server sockets.
inline constexpr std::size_t kMaxIdleConnections = 8;

struct RequestOptions {
  // Overrides Config::timeouts.request for this call (whole call, retries
  // included). The webhook passes ~2 s.
  std::optional<std::chrono::milliseconds> timeout;
  // Stops waiting (and retrying) when requested; the call returns kCancelled.
  std::stop_token stop;
  // Writes (Create, Update, Patch, Delete) only: dryRun=All, the server runs
  // admission and validation and stores nothing.
  bool dry_run = false;
  // Writes only: fieldValidation=Strict, the server refuses a body with a
  // field it does not know (or a duplicate) instead of dropping it with a
  // warning, so a write never lands incomplete without a word.
  bool strict_field_validation = false;
  // Members of the answer kept (nullptr: all), decoded straight from the
  // body (base/json_projection.h): a caller that keeps only a few fields of a
  // large object never builds the rest. Must outlive the call.
  const base::JsonProjection* projection = nullptr;
  // The caller does not read a successful answer: its body is not decoded
  // and the call returns an empty object (an Event's POST, a status patch
  // whose only result is that it was stored). Errors are decoded as always.
  bool discard_answer = false;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  // Page size (limit); 0 = no paging (server default: everything).
  std::int64_t limit = 500;
  // Members of each item kept (nullptr: all); the items are decoded with it
  // straight from the body. Must outlive the call.
  const base::JsonProjection* projection = nullptr;
  // Start token for a single-page ListPage() call.
  std::string continue_token;
  // "" = most recent (quorum read); "0" = any cached version.
  std::string resource_version;
  RequestOptions request;
};

struct ListResult {
  std::vector<nlohmann::json> items;
  std::string resource_version;  // metadata.resourceVersion of the list
  std::string continue_token;    // non-empty when more pages follow (ListPage only)
};

struct WatchOptions {
  std::string resource_version;  // start after this version ("" = from now, with initial ADDs)
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;  // allowWatchBookmarks
  // Asks the server to end the watch after this long (timeoutSeconds); the
  // caller re-watches from the last resourceVersion.
  std::int64_t timeout_seconds = 300;
  std::stop_token stop;
  // Members of each event's object kept (nullptr: all); ERROR events are
  // always decoded whole. Must outlive the call.
  const base::JsonProjection* projection = nullptr;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902), patch is an array
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kApply,           // application/apply-patch+yaml (server-side apply; JSON is valid YAML)
};

struct PatchOptions {
  std::string field_manager;  // required by the server for kApply
  bool force = false;         // kApply: take ownership of conflicting fields
  RequestOptions request;
};

struct DeleteOptions {
  // Preconditions: the delete fails with 409 Conflict unless they hold.
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::string propagation_policy;  // "", "Foreground", "Background", "Orphan"
  std::optional<std::int64_t> grace_period_seconds;
  RequestOptions request;
};

class Client {
 public:
  // Copies the config. Never fails: problems (bad server URL, unparsable
  // PEM) surface as kInvalidArgument from each call.
  explicit Client(Config config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const;

  // GET one object. 404 -> not_found().
  Result<nlohmann::json> Get(const Resource& resource, std::string_view ns, std::string_view name,
                             const RequestOptions& options = {});

  // Discovery: GET /apis/<group>/<version> (or /api/v1), the
  // APIResourceList naming the resources that group version serves. 404 ->
  // not_found(): the group version is not served.
  Result<nlohmann::json> GetGroupVersion(std::string_view group_version,
                                         const RequestOptions& options = {});

  // LIST every page (following continue tokens) into one result. The
  // resource_version is the first page's (all pages share one snapshot).
  // A continue token that expires mid-way (410) is returned as gone(): the
  // caller lists again.
  Result<ListResult> List(const Resource& resource, std::string_view ns,
                          const ListOptions& options = {});
  // One page (options.continue_token to resume).
  Result<ListResult> ListPage(const Resource& resource, std::string_view ns,
                              const ListOptions& options);

  // POST. 409 AlreadyExists -> already_exists().
  Result<nlohmann::json> Create(const Resource& resource, std::string_view ns,
                                const nlohmann::json& object, const RequestOptions& options = {});
  // POST of an object already encoded as JSON text (sent as is).
  Result<nlohmann::json> CreateEncoded(const Resource& resource, std::string_view ns,
                                       const std::string& body, const RequestOptions& options = {});
  // PUT. The object's metadata.resourceVersion is the optimistic-concurrency
  // precondition: a stale one gives conflict().
  Result<nlohmann::json> Update(const Resource& resource, std::string_view ns,
                                std::string_view name, const nlohmann::json& object,
                                const RequestOptions& options = {});
  // PATCH with the given patch type; returns the patched object.
  Result<nlohmann::json> Patch(const Resource& resource, std::string_view ns, std::string_view name,
                               PatchType type, const nlohmann::json& patch,
                               const PatchOptions& options = {});
  // DELETE. Returns the server's body (the object, or a Status). A failed
  // precondition gives conflict().
  Result<nlohmann::json> Delete(const Resource& resource, std::string_view ns,
                                std::string_view name, const DeleteOptions& options = {});

  // WATCH: opens a watch and calls `on_event` for each ADDED, MODIFIED,
  // DELETED and BOOKMARK event, on the calling thread, in order. Blocks until:
  //  * the server ends the stream (timeoutSeconds)         -> OK
  //  * on_event returns false                              -> OK
  //  * options.stop is requested                           -> kCancelled
  //  * an ERROR event arrives                              -> its Status (410 -> gone())
  //  * the connection drops, stays silent past
  //    Timeouts::watch_idle, or sends a malformed line    -> unreachable()/timed_out()/kBadResponse
  //  * the watch request itself fails                      -> that Status
  // Does not reconnect: Informer does (re-watch, or relist on gone()).
  Status Watch(const Resource& resource, std::string_view ns, const WatchOptions& options,
               const std::function<bool(const WatchEvent&)>& on_event);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The Content-Type a patch type is sent with.
std::string_view PatchContentType(PatchType type);

}  // namespace wasd::kube

#endif  // WASD_KUBE_CLIENT_H_

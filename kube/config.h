// Config: how to reach and authenticate to one Kubernetes API server, and
// where it comes from.
//
// Sources, first match wins (LoadConfig):
//   1. --kubeconfig FILE
//   2. $KUBECONFIG — the colon-separated list, merged as kubectl merges it
//      (MergeKubeconfigs): files in list order, empty entries ignored,
//      missing files skipped (all missing is an error); a file that exists
//      but cannot be read or parsed is an error naming it. --kubeconfig
//      FILE is that one file only.
//   3. in-cluster: $KUBERNETES_SERVICE_HOST/PORT plus the service account's
//      token, ca.crt and namespace files
//   4. ~/.kube/config
//
// Supported kubeconfig fields (current-context, or --context; --cluster and
// --user override the context's: KubeconfigSelection):
//   cluster: server, certificate-authority, certificate-authority-data,
//            insecure-skip-tls-verify, tls-server-name
//   user:    client-certificate(-data), client-key(-data), token, tokenFile,
//            exec (credential plugins: kube/exec_credential.h)
//   context: cluster, user, namespace
// `auth-provider` and username/password users are refused with a clear error
// rather than silently sending no credentials.
//
// Relative file paths in a kubeconfig are resolved against the directory of
// the kubeconfig file that holds them (as kubectl does, also per file of a
// merged list). File contents (CA, client cert and
// key) are read once by LoadConfig; the token file is only named here — the
// Client re-reads it for every request so rotated service-account tokens work.
//
// The environment is never read below this header's SourcesFromEnvironment():
// everything else takes a ConfigSources value, so tests inject their own.
//
// Plain values and free functions; thread-safe.
#ifndef WASD_KUBE_CONFIG_H_
#define WASD_KUBE_CONFIG_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kube/backoff.h"
#include "kube/exec_credential.h"

namespace wasd::kube {

using base::Result;
using base::Status;

// Every deadline of the client in one place (Boost.Redis-style).
struct Timeouts {
  // TCP connect to the API server. Generous for a loaded control plane, short
  // enough that an unreachable server is reported within a probe period.
  std::chrono::milliseconds connect{10'000};
  // TLS handshake after connect.
  std::chrono::milliseconds handshake{10'000};
  // Whole request: write + read of headers and body of a non-watch call,
  // including retries. Per-call RequestOptions::timeout overrides it (the
  // webhook uses ~2 s so a slow API server cannot stall an admission review).
  std::chrono::milliseconds request{30'000};
  // Watch: the longest silence tolerated on an open watch before it is
  // treated as dead and reconnected. Watches ask the server to end them after
  // WatchOptions::timeout_seconds (default 300 s); 30 s more covers a server
  // that is slow to close.
  std::chrono::milliseconds watch_idle{330'000};
};

// When and how often a call is retried by the Client itself.
struct RetryPolicy {
  // Attempts beyond the first for 429, 5xx with Retry-After, and connect
  // failures (the request never reached the server). client-go allows 10;
  // 5 keeps a blocked worker's wait bounded (with max_retry_after, ≤ ~2.5 min
  // worst case, and never beyond the call's timeout).
  int max_retries = 5;
  // Largest Retry-After honoured; a bigger value is clamped. The API server's
  // priority-and-fairness sends 1 s; anything past 30 s is a misbehaving
  // proxy and waiting longer would stall workers.
  std::chrono::seconds max_retry_after{30};
  // Backoff between retries without a Retry-After (connect failures).
  BackoffPolicy backoff;
};

// Size limits on what the API server sends back.
struct Limits {
  // A LIST page holds up to `limit` objects. 64 MiB bounds memory per call
  // even for a page of 500 large objects (etcd caps one object at 1.5 MiB by
  // default; typical Deployments/Pods are 5–50 KiB, so a 500-item page is
  // ~25 MiB at worst in practice); beyond it the call fails and the caller
  // lowers `limit` instead of the process running out of memory.
  std::size_t max_response_bytes = std::size_t{64} * 1024 * 1024;
  // One watch event line carries one object: the API server refuses request
  // bodies over 3 MiB, so 16 MiB leaves room for escaping and managedFields
  // growth while bounding memory per watch.
  std::size_t max_watch_line_bytes = std::size_t{16} * 1024 * 1024;
};

// The client-side request rate limit (kube/rate_limiter.h): every request
// (each retry too, and each watch opened) takes a token. qps 0 = no limit.
// The reconciler sets --kube-api-qps/--kube-api-burst (default 20/30, as
// controller-runtime's); other commands leave it off.
struct RateLimit {
  double qps = 0;
  int burst = 1;
};

struct Config {
  // "https://host:port" (an optional path prefix is kept), or "http://…" for
  // a local proxy such as `kubectl proxy`.
  std::string server;
  // Name checked against the server certificate (and sent as SNI) instead of
  // the server URL's host: kubeconfig `tls-server-name`.
  std::string tls_server_name;
  // PEM bundle of CAs that sign the server certificate; empty means the
  // system default trust store.
  std::string ca_pem;
  // PEM client certificate (chain) and key for mutual TLS; both or neither.
  std::string client_cert_pem;
  std::string client_key_pem;
  // Bearer token. When token_file is set it wins and is re-read per request;
  // `token` then only holds the value read at load time.
  std::string token;
  std::string token_file;
  // A kubeconfig exec credential plugin: when set, every request's bearer
  // token comes from it (cached until it expires).
  std::optional<ExecConfig> exec;
  // Skip server certificate (and hostname) verification. Only from an
  // explicit kubeconfig `insecure-skip-tls-verify: true`.
  bool insecure_skip_tls_verify = false;
  // Namespace of the context, or of the service account in-cluster;
  // "default" when neither says.
  std::string namespace_ = "default";
  // Human-readable origin for logs and errors, e.g.
  // "kubeconfig /home/u/.kube/config (context kind-wasd)" or "in-cluster".
  std::string source;

  Timeouts timeouts;
  RetryPolicy retry;
  Limits limits;
  RateLimit rate_limit;
};

// Where LoadConfig may look. Values are plain strings; empty means "unset".
struct ConfigSources {
  std::string kubeconfig_flag;  // --kubeconfig
  std::string context;          // a context name overriding current-context (--context)
  std::string cluster;          // a cluster name overriding the context's (--cluster)
  std::string user;             // a user name overriding the context's (--user)
  std::string kubeconfig_env;   // $KUBECONFIG
  std::string home;             // $HOME (for ~/.kube/config)
  std::string service_host;     // $KUBERNETES_SERVICE_HOST
  std::string service_port;     // $KUBERNETES_SERVICE_PORT
  // Directory with the service account's token, ca.crt and namespace.
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

// The only function that reads the process environment: fills the env-backed
// fields of ConfigSources. Call it once at the top of a command.
ConfigSources SourcesFromEnvironment(std::string kubeconfig_flag, std::string context = {});

// Resolves the sources in order (see the header comment) and loads the first
// that applies. Fails with kInvalidArgument and a message naming the file,
// context or field when the chosen source is unusable (missing file, unknown
// context, no server, unreadable CA, unsupported auth kind), or when no source
// applies at all (the message lists what was tried). A flag or $KUBECONFIG
// naming a broken file is an error; it does not fall through to in-cluster.
Result<Config> LoadConfig(const ConfigSources& sources);

// Which entries of a kubeconfig to use, as kubectl's --context, --cluster and
// --user choose them: each non-empty name overrides current-context, the
// context's cluster and the context's user. A name that is not in the file
// is an error in kubectl's words: `context "x" does not exist` (likewise
// cluster, user). With --cluster given, a missing current-context is no
// error (the namespace is then "default" and the user --user's, if any).
struct KubeconfigSelection {
  std::string context;
  std::string cluster;
  std::string user;
};

// Pure: parses kubeconfig YAML text. `base_dir` resolves relative file paths;
// `selection` overrides current-context and the context's cluster and user.
// File-backed fields are NOT read: the result's *_pem fields hold decoded
// *-data values, and file references come back in `files` as absolute paths
// for the caller to read.
struct KubeconfigFiles {
  std::string certificate_authority;
  std::string client_certificate;
  std::string client_key;
};
struct ParsedKubeconfig {
  Config config;
  KubeconfigFiles files;
  std::string context;  // the context actually used ("" when none: --cluster alone)
  std::string cluster;  // the cluster actually used
  std::string user;     // the user actually used ("" when none)
  // KubeconfigDocument::path of the document that defined the cluster.
  std::string cluster_file;
};
Result<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text, std::string_view base_dir,
                                         const KubeconfigSelection& selection);
// The same with only a context override.
Result<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text, std::string_view base_dir,
                                         std::string_view context = {});

// One kubeconfig file's text, for MergeKubeconfigs. `path` names it in
// errors (may be empty for a single document); `base_dir` resolves the
// relative file paths of the entries it defines.
struct KubeconfigDocument {
  std::string path;
  std::string text;
  std::string base_dir;
};

// Pure: kubectl's merge of a $KUBECONFIG list, then the selection as in
// ParseKubeconfig. current-context comes from the first document that sets
// one; a context, cluster or user name resolves to the entry of the FIRST
// document that defines that name — the whole entry, fields are never
// combined across documents, so a context of one file may name a cluster of
// another. Every document must be valid YAML with list-typed sections even
// if none of its entries is used; an empty document adds nothing. With more
// than one document, errors about one of them name its path. ParseKubeconfig
// is this with one document.
Result<ParsedKubeconfig> MergeKubeconfigs(const std::vector<KubeconfigDocument>& documents,
                                          const KubeconfigSelection& selection);

// Pure: the in-cluster server URL for KUBERNETES_SERVICE_HOST/PORT
// ("https://10.96.0.1:443", IPv6 hosts bracketed); empty when host is empty.
std::string InClusterServer(std::string_view host, std::string_view port);

}  // namespace wasd::kube

#endif  // WASD_KUBE_CONFIG_H_

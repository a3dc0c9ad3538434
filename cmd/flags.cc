#include "cmd/flags.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "certs/issuer.h"
#include "runtime/listen.h"
#include "workloadbuilder/validate.h"

namespace wasd::cmd {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Upper bound for --max-request-bytes: far above any AdmissionReview (see
// the default's comment), low enough that a typo cannot let one request
// claim gigabytes.
constexpr std::uint64_t kMaxRequestBytesCeiling = 64ull * 1024 * 1024;
// Upper bound for thread-count flags: beyond this threads only add contention.
constexpr int kMaxThreads = 256;
// Largest --workers: more threads than this only queue on the API server's
// priority-and-fairness limits and the 2-core controllers they run on.
constexpr int kMaxWorkers = 64;
// Far above what one API server grants a controller; a bound, not a target.
constexpr int kMaxKubeApiQps = 100'000;
constexpr int kMaxKubeApiBurst = 100'000;
// The smallest deadline a flag takes: anything shorter is a typo (1ms for 1m).
constexpr milliseconds kMinDeadline{1};

constexpr char kKubeconfigHelp[] =
    "API server config (else $KUBECONFIG, in-cluster, ~/.kube/config)";

runtime::FlagSet::Apply AddressTo(runtime::ListenAddress* target) {
  return [target](std::string_view v) -> std::string {
    if (!runtime::ParseListenAddress(v, target))
      return "want HOST:PORT with an IP address, :PORT, or 0";
    return {};
  };
}

std::string AddressText(const runtime::ListenAddress& a) {
  if (!a.enabled) return "0";
  return (a.host == "0.0.0.0" ? "" : a.host) + ":" + std::to_string(a.port);
}

// --health-probe-bind-address and --metrics-bind-address, as
// controller-runtime names them: shared by the webhook and the reconciler.
// --metrics-secure and its certificate pair, as controller-runtime's secure
// metrics spell them. `default_cert` says what an empty pair means.
void AddProbeFlags(runtime::FlagSet& f, runtime::ListenAddress* probes,
                   runtime::ListenAddress* metrics, runtime::MetricsServing* serving,
                   const char* default_cert) {
  f.Custom("health-probe-bind-address", "ADDR:PORT",
           "/healthz and /readyz, plain HTTP (0 disables)", AddressTo(probes))
      .Default(AddressText(*probes));
  f.Custom("metrics-bind-address", "ADDR:PORT", "/metrics (0 disables)", AddressTo(metrics))
      .Default(AddressText(*metrics));
  f.Bool("metrics-secure", &serving->secure,
         "serve /metrics over HTTPS to a bearer token that the API server authenticates\n"
         "(TokenReview) and allows to get /metrics (SubjectAccessReview); false: plain\n"
         "HTTP, readable by anyone who reaches the port");
  f.String("metrics-cert-file", &serving->cert_file, "FILE",
           "PEM certificate (chain) of the HTTPS /metrics, re-read when it changes")
      .Default(default_cert);
  f.String("metrics-key-file", &serving->key_file, "FILE", "PEM private key of --metrics-cert-file")
      .Default(default_cert);
}

// --key-type, --days, --ca-days, --extra-san: shared by generate and rotate.
void AddIssueFlags(runtime::FlagSet& flags, certs::KeyType* key_type, int* days, int* ca_days,
                   std::vector<std::string>* extra_sans) {
  flags
      .Custom("key-type", "ecdsa|rsa", "key type: ECDSA P-256 or RSA 2048",
              [key_type](std::string_view v) -> std::string {
                if (!certs::ParseKeyType(v, key_type)) return "want ecdsa or rsa";
                return {};
              })
      .Default(std::string(certs::KeyTypeName(*key_type)));
  flags.Int("days", days, 1, certs::kMaxDays, "serving certificate lifetime in days");
  flags.Int("ca-days", ca_days, 1, certs::kMaxDays, "CA lifetime in days");
  flags.List("extra-san", extra_sans, "NAME|IP",
             "additional subjectAltName (e.g. localhost, 127.0.0.1)", true, true);
}

// Splits a list value at commas; empty items are an error.
bool SplitList(std::string_view v, std::vector<std::string_view>* out) {
  while (true) {
    const std::size_t comma = v.find(',');
    const std::string_view item = v.substr(0, comma);
    if (item.empty()) return false;
    out->push_back(item);
    if (comma == std::string_view::npos) return true;
    v.remove_prefix(comma + 1);
  }
}

std::string BackendNames() {
  std::string out;
  for (workloadbuilder::Backend b : workloadbuilder::kAllBackends) {
    out += (out.empty() ? "" : ", ") + std::string(workloadbuilder::BackendName(b));
  }
  return out;
}

std::vector<std::string> BackendNameList() {
  std::vector<std::string> out;
  for (workloadbuilder::Backend b : workloadbuilder::kAllBackends) {
    out.emplace_back(workloadbuilder::BackendName(b));
  }
  return out;
}

// "" when `key` is a node-label key (a qualified name), else why not.
std::string LabelKeyError(std::string_view key) {
  const std::vector<std::string> problems = workloadbuilder::IsQualifiedName(key);
  if (problems.empty()) return {};
  return "\"" + std::string(key) + "\" is not a node-label key: " + problems.front();
}

std::string NameError(std::string_view name) {
  const std::vector<std::string> problems = workloadbuilder::IsDNS1123Subdomain(name);
  if (problems.empty()) return {};
  return problems.front();
}

}  // namespace

void AddKubeconfigFlags(runtime::FlagSet& f, const KubeconfigFlagTargets& t) {
  f.String("kubeconfig", t.kubeconfig, "FILE", kKubeconfigHelp);
  f.String("context", t.context, "NAME",
           "the kubeconfig context to use (default: its current-context)");
  f.String("cluster", t.cluster, "NAME", "the kubeconfig cluster to use (default: the context's)");
  f.String("user", t.user, "NAME", "the kubeconfig user to use (default: the context's)");
}

void AddConnectionFlags(runtime::FlagSet& f, ConnectionSettings* s) {
  AddKubeconfigFlags(f, {&s->kubeconfig, &s->context, &s->cluster, &s->user});
  f.Duration("request-timeout", &s->request_timeout, kMinDeadline, "deadline of each request");
}

void AddDeprecatedTimeoutFlag(runtime::FlagSet& f, ConnectionSettings* s) {
  f.Duration("timeout", &s->deprecated_timeout, kMinDeadline,
             "DEPRECATED: use --request-timeout (the same deadline of each request)")
      .Default("");
}

std::string DeprecatedTimeoutWarning(const runtime::FlagSet& flags, ConnectionSettings* s) {
  if (!flags.Given("timeout")) return {};
  if (!flags.Given("request-timeout")) s->request_timeout = s->deprecated_timeout;
  return "--timeout is deprecated, use --request-timeout (the deadline of each request); "
         "--timeout will mean the overall wait, as on wasd migrate";
}

base::Result<kube::Config> LoadKubeconfig(const std::string& kubeconfig,
                                          const kube::KubeconfigSelection& selection) {
  kube::ConfigSources sources = kube::SourcesFromEnvironment(kubeconfig, selection.context);
  sources.cluster = selection.cluster;
  sources.user = selection.user;
  return kube::LoadConfig(sources);
}

base::Result<kube::Config> LoadConnection(const ConnectionSettings& s) {
  base::Result<kube::Config> config = LoadKubeconfig(s.kubeconfig, {s.context, s.cluster, s.user});
  if (config.ok()) config.value().timeouts.request = s.request_timeout;
  return config;
}

void AddBackendFlags(runtime::FlagSet& f, workloadbuilder::BackendSettings* s) {
  namespace wb = workloadbuilder;
  f.Custom("backend", "NAME",
           "gang scheduler of a Deployment without the annotation wasd.io/backend:\n"
           "native (scheduling.k8s.io Workload + PodGroup), volcano, kai or coscheduling",
           [s](std::string_view v) -> std::string {
             const std::optional<wb::Backend> b = wb::ParseBackend(v);
             if (!b) return "want one of " + BackendNames();
             s->backend = *b;
             return {};
           })
      .Default(std::string(wb::BackendName(s->backend)))
      .Values(BackendNameList());
  f.Custom("allowed-backends", "NAME,...",
           "backends the annotation wasd.io/backend may name; must include --backend",
           [s](std::string_view v) -> std::string {
             std::vector<std::string_view> items;
             if (!SplitList(v, &items)) return "want backend names separated by commas";
             for (std::string_view item : items) {
               const std::optional<wb::Backend> b = wb::ParseBackend(item);
               if (!b) return "\"" + std::string(item) + "\": want one of " + BackendNames();
               if (!s->Allows(*b) || s->allowed.empty()) s->allowed.push_back(*b);
             }
             return {};
           })
      .Default("the --backend value");
  f.Custom("volcano-topology-tiers", "KEY=TIER,...",
           "Volcano: the HyperNode tier built from node label KEY, by number\n"
           "(networkTopology.highestTierAllowed) or tier name (highestTierName);\n"
           "a topology key not listed is denied on Volcano",
           [s](std::string_view v) -> std::string {
             std::vector<std::string_view> items;
             if (!SplitList(v, &items)) return "want KEY=TIER items separated by commas";
             for (std::string_view item : items) {
               const std::size_t eq = item.find('=');
               if (eq == std::string_view::npos || eq + 1 == item.size()) {
                 return "\"" + std::string(item) + "\": want KEY=TIER";
               }
               const std::string_view key = item.substr(0, eq);
               const std::string_view tier = item.substr(eq + 1);
               if (std::string e = LabelKeyError(key); !e.empty()) return e;
               wb::VolcanoTier t;
               int number = 0;
               const char* end = tier.data() + tier.size();
               auto [p, ec] = std::from_chars(tier.data(), end, number);
               if (ec == std::errc() && p == end) {
                 if (number < 1) return "\"" + std::string(item) + "\": tiers start at 1";
                 t.number = number;
               } else {
                 if (std::string e = NameError(tier); !e.empty()) {
                   return "\"" + std::string(tier) + "\" is not a tier number or name: " + e;
                 }
                 t.name = std::string(tier);
               }
               s->facts.volcano_tiers.emplace_back(std::string(key), std::move(t));
             }
             return {};
           });
  f.String("volcano-queue", &s->facts.volcano_queue, "NAME",
           "Volcano: spec.queue when the Deployment names none\n"
           "(backends.volcano.queue); empty: Volcano's queue \"default\"");
  f.String("kai-queue", &s->facts.kai_queue, "NAME",
           "KAI: spec.queue when the Deployment names none (backends.kai.queue)");
  f.String("kai-topology", &s->facts.kai_topology, "NAME",
           "KAI: the Topology (kai.scheduler/v1alpha1) a topology constraint names");
  f.Custom("kai-topology-levels", "KEY,...",
           "KAI: the node-label keys that Topology lists (spec.levels[].nodeLabel);\n"
           "a topology key not listed is denied on KAI",
           [s](std::string_view v) -> std::string {
             std::vector<std::string_view> items;
             if (!SplitList(v, &items)) return "want node-label keys separated by commas";
             for (std::string_view key : items) {
               if (std::string e = LabelKeyError(key); !e.empty()) return e;
               s->facts.kai_topology_levels.emplace_back(key);
             }
             return {};
           });
  f.Custom("coscheduling-scheduler-name", "NAME",
           "coscheduling: the schedulerName of the scheduler-plugins scheduler",
           [s](std::string_view v) -> std::string {
             if (v.empty()) return "want a scheduler name";
             s->facts.coscheduling_scheduler_name = std::string(v);
             return {};
           })
      .Default(s->facts.coscheduling_scheduler_name);
}

std::string BackendFlagsError(const workloadbuilder::BackendSettings& s) {
  if (!s.allowed.empty() && !s.Allows(s.backend)) {
    return "--backend " + std::string(workloadbuilder::BackendName(s.backend)) +
           " is not among --allowed-backends";
  }
  if (!s.facts.kai_topology_levels.empty() && s.facts.kai_topology.empty()) {
    return "--kai-topology-levels needs --kai-topology (the Topology that lists them)";
  }
  for (const std::string* q : {&s.facts.volcano_queue, &s.facts.kai_queue}) {
    if (q->empty()) continue;
    if (std::string e = NameError(*q); !e.empty()) return "queue \"" + *q + "\": " + e;
  }
  return {};
}

runtime::FlagSet WebhookFlags(server::WebhookConfig* c) {
  runtime::FlagSet f(
      "wasd webhook", "wasd webhook --tls-cert-file FILE --tls-key-file FILE [flags]",
      "HTTPS admission server for AdmissionReview admission.k8s.io/v1:\n"
      "  POST /validate-apps-v1-deployment   Deployments and deployments/scale\n"
      "  POST /mutate-apps-v1-deployment     Deployments (pod-template marker label)\n"
      "  POST /mutate-v1-pod                 Pods (PodGroup reference, scheduling gate)\n"
      "Probes (/healthz, /readyz) and /metrics are plain HTTP on their own addresses.");
  f.String("tls-cert-file", &c->tls_cert_file, "FILE",
           "PEM serving certificate (chain); reloaded on change")
      .Required();
  f.String("tls-key-file", &c->tls_key_file, "FILE",
           "PEM private key of the certificate; reloaded on change")
      .Required();
  f.String("client-ca-file", &c->client_ca_file, "FILE",
           "require client certificates signed by this CA");
  // API server access for deployments/scale lookups.
  AddKubeconfigFlags(f, {&c->kubeconfig, &c->kube_selection.context, &c->kube_selection.cluster,
                         &c->kube_selection.user});
  f.Custom("bind-address", "ADDR", "admission listen address (an IP literal)",
           [c](std::string_view v) -> std::string {
             std::string host(v);
             if (!runtime::IsIpLiteral(host)) return "want an IP address such as 0.0.0.0 or ::";
             c->bind_address = host;
             return {};
           })
      .Default(c->bind_address);
  f.Custom("port", "N", "admission port (0: any free port)",
           [c](std::string_view v) -> std::string {
             std::uint16_t port = 0;
             const char* end = v.data() + v.size();
             auto [p, ec] = std::from_chars(v.data(), end, port);
             if (v.empty() || ec != std::errc() || p != end) {
               return "want a port from 0 (any free port) to 65535";
             }
             c->port = port;
             return {};
           })
      .Default(std::to_string(c->port));
  AddProbeFlags(f, &c->health_probe_address, &c->metrics_address, &c->metrics_serving,
                "the serving pair, --tls-cert-file and --tls-key-file");
  f.Uint64("max-request-bytes", &c->max_request_bytes, 1024, kMaxRequestBytesCeiling,
           "largest request body in bytes");
  f.Bool("pod-scheduling-gate", &c->pod_scheduling_gate,
         "add the wasd.io/pod-group gate to pods (false: on no backend, whatever --pod-hold says)");
  f.Custom(
       "pod-hold", "BACKEND=MODE,...",
       "who holds a new pod until its group exists, per backend: scheduler (the\n"
       "backend's scheduler does; no gate, except for a pod sent to another scheduler)\n"
       "or gate (wasd.io/pod-group, lifted by the reconciler); backends not named keep\n"
       "their default (docs/design.md Q23)",
       [c](std::string_view v) -> std::string { return admission::ParsePodHolds(v, &c->pod_hold); })
      .Default(admission::PodHolds{}.Text());
  f.Duration("api-check-interval", &c->api_check_interval, std::chrono::milliseconds(100),
             "how often to discover whether scheduling.k8s.io Workloads and PodGroups\n"
             "are served (native pods get the scheduler hold only while they are, else\n"
             "the gate; /readyz waits for the first answer); at most 30s");
  f.Bool("in-tree-deployment-integration", &c->in_tree_deployment_integration,
         "the cluster runs kube-controller-manager's Workload integration for\n"
         "Deployments (feature gate WorkloadWithDeployment, KEP-6276): a new Deployment\n"
         "that opts in to wasd with the wasd.io/scheduling annotation gets a warning\n"
         "naming spec.scheduling and `wasd migrate`. Whatever this says, a Deployment\n"
         "with spec.scheduling is never managed by wasd (left to the in-tree\n"
         "controller, warnings only) and one with both is denied");
  f.Bool("denial-causes", &c->denial_causes,
         "denials carry one status cause per field error, so kubectl prints\n"
         "them like API-server validation errors; false: the message only");
  f.Duration("tls-handshake-timeout", &c->handshake_timeout, kMinDeadline,
             "TLS handshake deadline");
  f.Duration("read-timeout", &c->read_timeout, kMinDeadline, "deadline for reading one request");
  f.Duration("write-timeout", &c->write_timeout, kMinDeadline, "deadline for writing one response");
  f.Duration("idle-timeout", &c->idle_timeout, kMinDeadline, "keep-alive wait between requests");
  f.Duration("shutdown-delay", &c->shutdown_delay, milliseconds(0),
             "SIGTERM: keep accepting and answering this long after readiness\n"
             "turns off, while endpoints drop the pod (0s closes the port at once)");
  f.Duration("shutdown-grace-period", &c->shutdown_grace_period, kMinDeadline,
             "SIGTERM: after the delay, wait this long for requests in progress");
  f.Duration("cert-reload-interval", &c->cert_reload_interval, kMinDeadline,
             "how often certificate files are checked");
  f.Duration("lookup-timeout", &c->lookup_timeout, kMinDeadline,
             "deadline of a deployments/scale lookup");
  f.Int("io-threads", &c->io_threads, 0, kMaxThreads, "I/O threads (0: one per CPU)");
  f.Int("lookup-workers", &c->lookup_workers, 1, kMaxThreads, "threads for Deployment lookups");
  f.Int("max-pending-scale-lookups", &c->max_pending_scale_lookups, 1, 100000,
        "deployments/scale reviews that may wait for or do a Deployment lookup at once;\n"
        "beyond it a scale review is answered 503 at once (a review whose timeout passed\n"
        "while it waited is also answered 503, without the lookup)");
  AddBackendFlags(f, &c->backends);
  f.LogFlags(&c->log);
  f.SetEpilog(
      "Durations as Go writes them: 500ms, 10s, 1m30s, 1.5h. Logs: one line per event on stderr.\n"
      "SIGTERM/SIGINT: readiness off, keep serving for --shutdown-delay, stop accepting, answer\n"
      "requests in progress, exit 0. A second signal exits at once.\n"
      "No --request-timeout: its API calls, deployments/scale lookups and discovery, have\n"
      "--lookup-timeout as their deadline.\n");
  return f;
}

runtime::FlagSet ReconcilerFlags(ReconcilerSettings* s) {
  runtime::FlagSet f(
      "wasd reconciler", "wasd reconciler [flags]",
      "The companion controller: one Workload per opted-in Deployment, one PodGroup "
      "per\nReplicaSet revision, and it lifts the pods' wasd.io/pod-group scheduling "
      "gate once\ntheir PodGroup exists. Several replicas may run: a Lease elects the "
      "one that writes.");
  reconciler::ControllerOptions& o = s->options;
  AddKubeconfigFlags(
      f, {&s->kubeconfig, &s->selection.context, &s->selection.cluster, &s->selection.user});
  f.Bool("leader-elect", &o.leader_elect,
         "hold the Lease before writing (false for a single replica)");
  f.String("lease-namespace", &s->lease_namespace, "NS", "namespace of the Lease wasd-reconciler")
      .Default("own namespace in-cluster, else wasd-system");
  AddProbeFlags(f, &o.probe_address, &o.metrics_address, &o.metrics_serving,
                "a self-signed pair made at start");
  f.Int("workers", &o.workers, 1, kMaxWorkers, "concurrent reconciles");
  f.Duration("api-check-interval", &o.api_check_interval, seconds(1),
             "re-check each backend's group API this often, served or not (native: which\n"
             "scheduling.k8s.io version, v1 or v1beta1, serves Workloads and PodGroups)");
  f.Duration("resync-period", &o.resync, seconds(1),
             "re-check every Deployment this often (e.g. 30s, 5m, 1h30m)");
  f.Bool("gang-status", &o.gang_status,
         "publish the gang doctor's diagnosis: the GangScheduled condition and Events on\n"
         "each Deployment and the wasd_gang_* metrics (also watches Nodes and bound pods\n"
         "once a gang is Unschedulable)");
  f.Duration("gang-status-delay", &o.gang_status_delay, milliseconds(0),
             "write a GangScheduled condition that is not Scheduled only once it has held\n"
             "this long (a gang on its way passes through transient reasons; 0: at once)");
  f.Bool("controller-runtime-metrics", &o.controller_runtime_metrics,
         "DEPRECATED: also export controller_runtime_reconcile_total, _reconcile_errors_total,\n"
         "_reconcile_time_seconds, workqueue_depth, workqueue_queue_duration_seconds and\n"
         "leader_election_master_status, which count what wasd_reconciler_* counts\n"
         "(default false from 0.2.0, removed in 0.3.0 at the earliest: docs/support.md)");
  f.Custom("gang-member-metrics", "not-scheduled|all|none",
           "which gangs get wasd_gang_members series (7 per gang): not-scheduled (gangs\n"
           "not Scheduled, or with members bound before their group), all, or none",
           [&o](std::string_view v) -> std::string {
             const std::optional<reconciler::GangMemberSeries> m =
                 reconciler::ParseGangMemberSeries(v);
             if (!m) return "want not-scheduled, all or none";
             o.gang_member_series = *m;
             return {};
           })
      .Default(std::string(reconciler::GangMemberSeriesName(o.gang_member_series)));
  f.Uint64("gang-member-metrics-max-gangs", &o.gang_member_max_gangs, 0, 1000000,
           "at most this many gangs get wasd_gang_members series, in namespace/name order\n"
           "(the rest: wasd_gang_members_omitted_gangs); 0: no limit");
  f.Bool("normal-events", &o.normal_events,
         "post Normal Events (WorkloadCreated, PodGroupCreated, Scheduled, ...) too;\n"
         "Warning Events are always posted");
  f.Custom("kube-api-qps", "N",
           "requests per second to the API server, on average (client-side token\n"
           "bucket; 0 turns the client-side limit off, the API server's priority\n"
           "and fairness still applies)",
           [s](std::string_view v) -> std::string {
             const std::string text(v);
             char* end = nullptr;
             errno = 0;
             const double qps = std::strtod(text.c_str(), &end);
             if (text.empty() || end != text.c_str() + text.size() || errno != 0 ||
                 !std::isfinite(qps) || qps < 0 || qps > kMaxKubeApiQps) {
               return "want a number from 0 (no limit) to " + std::to_string(kMaxKubeApiQps);
             }
             s->kube_api_qps = qps;
             return {};
           })
      .Default("20");
  f.Int("kube-api-burst", &s->kube_api_burst, 1, kMaxKubeApiBurst,
        "requests that may go at once above --kube-api-qps");
  AddBackendFlags(f, &s->backends);
  f.LogFlags(&s->log);
  f.SetEpilog(
      "Durations as Go writes them: 500ms, 10s, 1m30s, 1.5h. Logs: one line per event on "
      "stderr.\nSIGTERM/SIGINT: readiness off, workers stop, the Lease is released, exit 0.\n"
      "No --request-timeout: the API calls have fixed deadlines of their own (reads and\n"
      "writes 5s, informer LIST pages 30s; a watch silent for 330s is reopened).\n");
  return f;
}

runtime::FlagSet CheckFlags(CheckSettings* s) {
  runtime::FlagSet f(
      "wasd check",
      "wasd check -f FILE|DIR|- [-f ...] [-R] [-o text|yaml|json|junit] "
      "[--backend NAME]\n"
      "       wasd check --capabilities [--backend NAME]",
      "Runs wasd's admission rules on Deployment manifests without a cluster, after\n"
      "applying the defaults the API server applies (replicas 1, strategy\n"
      "RollingUpdate, ...), and shows the objects wasd would create: a Workload\n"
      "and a PodGroup (native), or the backend's PodGroup (volcano, kai,\n"
      "coscheduling; --backend, or the Deployment's annotation wasd.io/backend).\n"
      "Without -f (or with --capabilities): prints what each backend can express\n"
      "of the scheduling intent (only the --backend one when given) and exits.\n"
      "A YAML stream is judged one document at a time (memory: the file's text and\n"
      "one document); all input is read and judged before the first verdict is\n"
      "printed, so an unusable document anywhere is an error and no partial report.\n"
      "Progress goes to stderr when it is a terminal and stdout is not.");
  f.List("filename", &s->files, "FILE",
         "manifest file (YAML stream or JSON; '-' for stdin), or a directory\n"
         "(its *.yaml, *.yml and *.json files); more files may follow",
         /*split_commas=*/false, /*following=*/true)
      .Alias('f');
  f.Bool("recursive", &s->recursive, "also read the subdirectories of a directory given to -f")
      .Alias('R');
  f.Choice("output", &s->output, {"text", "yaml", "json", "junit"},
           "text: verdicts, denials as kubectl prints them, and the objects as\n"
           "YAML; yaml: the objects on stdout, verdicts and denials on stderr;\n"
           "json: one verdict per manifest (source, verdict, allowed, causes\n"
           "with type/field/message, warnings, objects); junit: JUnit XML, a\n"
           "test case per manifest (a denial fails it, another kind is skipped)")
      .Alias('o');
  f.Bool("capabilities", &s->capabilities,
         "print the capability table (intent field x backend) instead of checking");
  f.Choice("scheduling-api-version", &s->scheduling_api_version, {"v1", "v1beta1"},
           "apiVersion scheduling.k8s.io/VERSION of the Workload and PodGroup printed\n"
           "for the native backend: v1 (GA, Kubernetes 1.38 and later) or v1beta1\n"
           "(1.37); in a cluster wasd uses the version the API server serves");
  AddBackendFlags(f, &s->backends);
  f.SetEpilog(
      "wasd's carrier is the annotation wasd.io/scheduling: it alone makes the objects\n"
      "shown. spec.scheduling belongs to kube-controller-manager's Workload\n"
      "integration (feature gate WorkloadWithDeployment): it is judged by the KEP's\n"
      "rules, as that integration would, and nothing is shown for it; both on one\n"
      "Deployment are denied.\n"
      "\n"
      "Other kinds are skipped; kind: List is expanded. Without metadata.uid the\n"
      "Workload name is computed from the placeholder UID "
      "00000000-0000-0000-0000-000000000000;\n"
      "the PodGroup is named after a placeholder pod-template-hash (only the\n"
      "Deployment controller knows the real one).\n"
      "\n"
      "Exit status: 0 all allowed, 1 some denied, 2 unusable input.\n");
  return f;
}

runtime::FlagSet GenerateFlags(GenerateSettings* s) {
  certs::GenerateOptions& o = s->options;
  runtime::FlagSet f(
      "wasd certs generate",
      "wasd certs generate --service NAME --namespace NS --out-dir DIR [flags]",
      "Makes a CA (or reuses ca.crt/ca.key already in DIR) and a serving certificate for\n"
      "NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local. Writes ca.crt, ca.key,\n"
      "tls.crt and tls.key (keys 0600), each replaced atomically. Files not written by\n"
      "this command are never overwritten unless --force.");
  f.String("service", &o.service, "NAME", "the webhook Service").Required();
  f.String("namespace", &o.ns, "NS", "its namespace").Required();
  f.String("out-dir", &o.out_dir, "DIR", "output directory, created if missing").Required();
  AddIssueFlags(f, &o.key_type, &o.leaf_days, &o.ca_days, &o.extra_sans);
  f.Bool("force", &o.force, "replace files this command did not write");
  f.LogFlags(&s->log);
  return f;
}

runtime::FlagSet InjectCaFlags(InjectCaSettings* s) {
  runtime::FlagSet f(
      "wasd certs inject-ca",
      "wasd certs inject-ca --ca-file FILE --webhook-config NAME... [--kubeconfig FILE]",
      "Sets clientConfig.caBundle of every webhook in each named Mutating- or\n"
      "ValidatingWebhookConfiguration (a name may be either or both) to the CA in FILE.\n"
      "Webhooks that already carry it are left alone; concurrent edits are not clobbered.");
  f.String("ca-file", &s->ca_file, "FILE", "PEM CA certificate(s)").Required();
  f.List("webhook-config", &s->webhook_configs, "NAME", "configuration name (or a,b)", true, true)
      .Required();
  AddConnectionFlags(f, &s->connection);
  f.LogFlags(&s->log);
  f.SetEpilog(
      "Exit status: 0 done; 1 the CA file is unusable or a write failed; 2 bad\n"
      "flags or no client configuration.\n");
  return f;
}

runtime::FlagSet RotateFlags(RotateSettings* s) {
  certs::RotationOptions& o = s->options;
  runtime::FlagSet f(
      "wasd certs rotate",
      "wasd certs rotate --service NAME --secret NAME [--namespace NS]\n"
      "                         [--webhook-config NAME...] [flags]",
      "Keeps the kubernetes.io/tls Secret (ca.crt, ca.key, tls.crt, tls.key) valid: creates\n"
      "it when absent, signs a new serving certificate with the same CA when the current one\n"
      "expires within --renew-before, and injects the CA into the webhook configurations.\n"
      "A Secret without the annotation wasd.io/managed-certificate: \"true\" (supplied by a\n"
      "user or cert-manager) is never written. Runs until SIGTERM unless --once.");
  f.String("service", &o.service, "NAME", "the webhook Service").Required();
  f.String("namespace", &o.ns, "NS", "namespace of the Service and Secret")
      .Alias('n')
      .Default("the client's namespace");
  f.String("secret", &o.secret_name, "NAME", "the TLS Secret").Required();
  f.List("webhook-config", &o.webhook_configs, "NAME", "configuration to inject the CA into", true,
         true);
  f.Bool("skip-missing-webhook-config", &o.skip_missing_webhook_configs,
         "a --webhook-config that does not exist yet is skipped (logged), not a failure");
  f.Duration("renew-before", &o.renew_before, seconds(1),
             "renew this long before notAfter (2160h = 90 days)");
  f.Duration("check-interval", &s->interval, seconds(1), "time between checks");
  f.Bool("once", &s->once, "one pass, then exit (0: done, 1: failed)");
  AddIssueFlags(f, &o.key_type, &o.leaf_days, &o.ca_days, &o.extra_sans);
  AddConnectionFlags(f, &s->connection);
  f.LogFlags(&s->log);
  f.SetEpilog(
      "Durations as Go writes them: 90s, 1h30m, 2160h.\n"
      "Exit status (--once): 0 done; 1 a check or write failed; 2 bad flags or no client\n"
      "configuration.\n");
  return f;
}

runtime::FlagSet UninstallFlags(UninstallSettings* s) {
  runtime::FlagSet f(
      "wasd certs uninstall",
      "wasd certs uninstall --webhook-config NAME... [--secret NS/NAME]... [--kubeconfig FILE]",
      "Deletes the Mutating- and ValidatingWebhookConfiguration of each NAME and each\n"
      "Secret made by `wasd certs rotate` (a Secret without the annotation\n"
      "wasd.io/managed-certificate: \"true\" is left alone). Objects already gone count\n"
      "as removed. Exit 0: everything is gone; 1: a delete failed; 2: bad flags or no\n"
      "client configuration.");
  f.List("webhook-config", &s->webhook_configs, "NAME", "configuration name (or a,b)", true, true)
      .Required();
  f.List("secret", &s->secrets, "NS/NAME", "TLS Secret to delete", true, true);
  AddConnectionFlags(f, &s->connection);
  f.LogFlags(&s->log);
  return f;
}

runtime::FlagSet SelftestFlags(SelftestSettings* s) {
  runtime::FlagSet f("wasd selftest",
                     "wasd selftest [-n NS] [--kubeconfig FILE] [--context NAME] "
                     "[--request-timeout DURATION]",
                     "Checks an installed wasd end to end with two server-side dry-run creates\n"
                     "(nothing is stored): a Deployment opting in with gang minCount above its\n"
                     "replicas must be denied by wasd, a valid one must come back with the marker\n"
                     "label wasd.io/managed added by wasd's mutating webhook. Exit 0: both held;\n"
                     "1: a check failed; 2: bad flags or no client configuration.");
  f.String("namespace", &s->ns, "NS", "namespace wasd serves to submit to").Alias('n');
  AddConnectionFlags(f, &s->connection);
  AddDeprecatedTimeoutFlag(f, &s->connection);
  f.LogFlags(&s->log);
  return f;
}

runtime::FlagSet ExplainFlags(ExplainSettings* s) {
  runtime::FlagSet f(
      "wasd explain",
      "wasd explain deployment/NAME|deployment NAME [-n NS] [-o text|json|yaml] "
      "[--kubeconfig FILE] [--context NAME]",
      "Answers \"why is my gang Pending?\" for an opted-in Deployment: reads it, its\n"
      "ReplicaSets and pods, the group object of its backend (and the native\n"
      "Workload), the pods' FailedScheduling Events, the Nodes and the pods bound to\n"
      "them, and prints one diagnosis: a stable reason, the member counts, the next\n"
      "step, the group object's status, a fit preview of the members still to place\n"
      "and the gang's timeline. Also runs as `kubectl wasd explain` (installed as\n"
      "kubectl-wasd).");
  f.String("namespace", &s->ns, "NS",
           "the Deployment's namespace (default: the kubeconfig context's)")
      .Alias('n')
      .Default("");
  f.Choice("output", &s->output, {"text", "json", "yaml"},
           "text: for people; json and yaml: the diagnosis as one object for scripts\n"
           "(status, reason, message, nextStep, counts, group, fit, timeline)")
      .Alias('o');
  AddConnectionFlags(f, &s->connection);
  AddDeprecatedTimeoutFlag(f, &s->connection);
  // The reconciler's flags, so that the same values can be passed here (only
  // the cluster facts matter: the backend is the pod template's label).
  AddBackendFlags(f, &s->backends);
  f.SetEpilog(
      "Reasons, most dominant first: InvalidSchedulingConfiguration, APINotAvailable,\n"
      "UnsupportedProviderCapability, PodGroupMissing, ForeignObject, PodGroupTerminating,\n"
      "WaitingForQuorum, GatedByOther, Unschedulable, QueueBlocked, ScaleUpPending, Scheduled.\n"
      "\n"
      "Exit status: 0 the gang is scheduled, 3 it is pending, 1 an error (not found, no\n"
      "access, not opted in), 2 bad flags or no client configuration.\n");
  return f;
}

runtime::FlagSet VersionFlags(VersionSettings* s) {
  runtime::FlagSet f("wasd version", "wasd version [--short | -o text|json|yaml]",
                     "Prints the release (the VERSION file of the source tree) and how the\n"
                     "binary was built: the git revision when built from a git checkout, the\n"
                     "build date, the compiler, and the OpenSSL and glibc inside.");
  f.Bool("short", &s->short_form, "print the version alone (X.Y.Z)");
  f.Choice("output", &s->output, {"text", "json", "yaml"},
           "text: for people; json and yaml: one object (version, revision,\n"
           "treeState, buildDate, compiler, cplusplus, platform, openssl, glibc)")
      .Alias('o');
  return f;
}

}  // namespace wasd::cmd

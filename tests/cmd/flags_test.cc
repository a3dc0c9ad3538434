// One behaviour for every subcommand's flags (issue 14): the same forms,
// the same duration grammar, the same booleans, the same log flags and the
// same errors, checked against every command table in cmd/flags.h.
#include "cmd/flags.h"
#include "cmd/migrate_flags.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace wasd::cmd {
namespace {

using Outcome = runtime::FlagSet::Outcome;
using namespace std::chrono_literals;

struct Parsed {
  Outcome outcome;
  std::string error;
};

Parsed ParseWith(runtime::FlagSet flags, const std::vector<std::string>& args) {
  std::vector<const char*> argv{"sub"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  Parsed p;
  p.outcome = flags.Parse(static_cast<int>(argv.size()), argv.data());
  p.error = flags.error();
  return p;
}

// Every command, with the flags it requires and one duration flag (if any)
// whose value can be read back, so that one table drives them all.
struct Command {
  std::string name;
  std::vector<std::string> required;
  std::function<runtime::FlagSet()> make;
  std::string duration_flag;
  std::function<std::chrono::milliseconds()> duration;
  std::function<runtime::LogOptions()> log;
};

struct Fixture {
  server::WebhookConfig webhook;
  ReconcilerSettings reconciler;
  GenerateSettings generate;
  InjectCaSettings inject;
  RotateSettings rotate;
  UninstallSettings uninstall;
  SelftestSettings selftest;

  std::vector<Command> Commands() {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    return {
        {"webhook",
         {"--tls-cert-file=c", "--tls-key-file=k"},
         [this] { return WebhookFlags(&webhook); },
         "read-timeout",
         [this] { return webhook.read_timeout; },
         [this] { return webhook.log; }},
        {"reconciler",
         {},
         [this] { return ReconcilerFlags(&reconciler); },
         "resync-period",
         [this] { return reconciler.options.resync; },
         [this] { return reconciler.log; }},
        {"certs generate",
         {"--service=s", "--namespace=n", "--out-dir=d"},
         [this] { return GenerateFlags(&generate); },
         "",
         nullptr,
         [this] { return generate.log; }},
        {"certs inject-ca",
         {"--ca-file=f", "--webhook-config=w"},
         [this] { return InjectCaFlags(&inject); },
         "",
         nullptr,
         [this] { return inject.log; }},
        {"certs rotate",
         {"--service=s", "--secret=x"},
         [this] { return RotateFlags(&rotate); },
         "check-interval",
         [this] { return duration_cast<milliseconds>(rotate.interval); },
         [this] { return rotate.log; }},
        {"certs uninstall",
         {"--webhook-config=w"},
         [this] { return UninstallFlags(&uninstall); },
         "",
         nullptr,
         [this] { return uninstall.log; }},
        {"selftest",
         {},
         [this] { return SelftestFlags(&selftest); },
         "request-timeout",
         [this] { return selftest.connection.request_timeout; },
         [this] { return selftest.log; }},
    };
  }
};

std::vector<std::string> With(const Command& c, const std::vector<std::string>& extra) {
  std::vector<std::string> all = c.required;
  all.insert(all.end(), extra.begin(), extra.end());
  return all;
}

TEST_CASE("every command: required flags, --help, unknown flags, one error style", "[unit][cmd]") {
  Fixture fx;
  for (const Command& c : fx.Commands()) {
    INFO(c.name);
    CHECK(ParseWith(c.make(), c.required).outcome == Outcome::kRun);
    CHECK(ParseWith(c.make(), {"--help"}).outcome == Outcome::kHelp);
    CHECK(ParseWith(c.make(), {"-h"}).outcome == Outcome::kHelp);
    Parsed p = ParseWith(c.make(), With(c, {"--nope"}));
    CHECK(p.outcome == Outcome::kError);
    CHECK(p.error == "unknown flag --nope");
    std::vector<std::string> stray = {"stray"};
    stray.insert(stray.end(), c.required.begin(), c.required.end());
    p = ParseWith(c.make(), stray);
    CHECK(p.outcome == Outcome::kError);
    CHECK(p.error == "unexpected argument \"stray\" (flags start with --)");
    if (!c.required.empty()) {
      p = ParseWith(c.make(), {});
      CHECK(p.outcome == Outcome::kError);
      CHECK(p.error.find("is required") != std::string::npos);
    }
    const std::string usage = c.make().Usage();
    CHECK(usage.rfind("Usage: wasd ", 0) == 0);
    CHECK(usage.find("\nFlags:\n") != std::string::npos);
    CHECK(usage.find("  -h, --help") != std::string::npos);
    CHECK(usage.find("--log-format json|text") != std::string::npos);
  }
}

TEST_CASE("every command: durations are Go's, the same on every flag", "[unit][cmd]") {
  Fixture fx;
  const std::vector<std::pair<std::string, std::chrono::milliseconds>> good = {
      {"1m30s", 90s}, {"90s", 90s}, {"1.5m", 90s}, {"2h", 2h}, {"1h30m", 90min}};
  for (const Command& c : fx.Commands()) {
    if (c.duration_flag.empty()) continue;
    INFO(c.name << " --" << c.duration_flag);
    const std::string flag = "--" + c.duration_flag;
    for (const auto& [text, want] : good) {
      INFO(text);
      REQUIRE(ParseWith(c.make(), With(c, {flag, text})).outcome == Outcome::kRun);
      CHECK(c.duration() == want);
      REQUIRE(ParseWith(c.make(), With(c, {flag + "=" + text})).outcome == Outcome::kRun);
      CHECK(c.duration() == want);
    }
    for (const char* bad : {"90", "1d", "x", "-1s", ""}) {
      INFO(bad);
      Parsed p = ParseWith(c.make(), With(c, {flag + "=" + bad}));
      CHECK(p.outcome == Outcome::kError);
      CHECK(p.error.find("invalid value \"" + std::string(bad) + "\" for " + flag) == 0);
    }
  }
}

TEST_CASE("every command: --log-level, --v and --log-format", "[unit][cmd]") {
  Fixture fx;
  for (const Command& c : fx.Commands()) {
    INFO(c.name);
    REQUIRE(ParseWith(c.make(), With(c, {"--log-format", "text", "--log-level=warn"})).outcome ==
            Outcome::kRun);
    CHECK(c.log().format == runtime::LogFormat::kText);
    CHECK(c.log().level == runtime::LogLevel::kWarn);
    REQUIRE(ParseWith(c.make(), With(c, {"--v=2"})).outcome == Outcome::kRun);
    CHECK(c.log().level == runtime::LogLevel::kDebug);
    Parsed p = ParseWith(c.make(), With(c, {"--log-format=xml"}));
    CHECK(p.error == "invalid value \"xml\" for --log-format: want json or text");
  }
}

TEST_CASE("booleans: bare, =value, and a boolean word after the flag", "[unit][cmd]") {
  ReconcilerSettings s;
  REQUIRE(ParseWith(ReconcilerFlags(&s), {"--leader-elect", "false"}).outcome == Outcome::kRun);
  CHECK_FALSE(s.options.leader_elect);
  REQUIRE(ParseWith(ReconcilerFlags(&s), {"--leader-elect"}).outcome == Outcome::kRun);
  CHECK(s.options.leader_elect);
  REQUIRE(ParseWith(ReconcilerFlags(&s), {"--leader-elect=F"}).outcome == Outcome::kRun);
  CHECK_FALSE(s.options.leader_elect);
  Parsed p = ParseWith(ReconcilerFlags(&s), {"--leader-elect=maybe"});
  CHECK(p.error == "invalid value \"maybe\" for --leader-elect: want true or false");
  server::WebhookConfig w;
  REQUIRE(ParseWith(WebhookFlags(&w), {"--tls-cert-file=c", "--tls-key-file=k",
                                       "--pod-scheduling-gate", "false", "--denial-causes=0"})
              .outcome == Outcome::kRun);
  CHECK_FALSE(w.pod_scheduling_gate);
  CHECK_FALSE(w.denial_causes);
}

TEST_CASE("--pod-hold and --normal-events", "[unit][cmd]") {
  server::WebhookConfig w;
  CHECK(w.pod_hold.Text() == "native=scheduler,volcano=scheduler,kai=scheduler,coscheduling=gate");
  REQUIRE(ParseWith(WebhookFlags(&w), {"--tls-cert-file=c", "--tls-key-file=k", "--pod-hold",
                                       "native=gate,coscheduling=scheduler"})
              .outcome == Outcome::kRun);
  CHECK(w.pod_hold.Text() == "native=gate,volcano=scheduler,kai=scheduler,coscheduling=scheduler");
  server::WebhookConfig bad;
  const Parsed p = ParseWith(WebhookFlags(&bad),
                             {"--tls-cert-file=c", "--tls-key-file=k", "--pod-hold=kai=hold"});
  CHECK(p.outcome != Outcome::kRun);
  CHECK(p.error ==
        "invalid value \"kai=hold\" for --pod-hold: \"kai=hold\": want BACKEND=MODE pairs "
        "separated by commas, BACKEND one of native, volcano, kai, coscheduling, MODE scheduler "
        "or gate");
  ReconcilerSettings r;
  REQUIRE(ParseWith(ReconcilerFlags(&r), {}).outcome == Outcome::kRun);
  CHECK_FALSE(r.options.normal_events);
  REQUIRE(ParseWith(ReconcilerFlags(&r), {"--normal-events"}).outcome == Outcome::kRun);
  CHECK(r.options.normal_events);
}

TEST_CASE("webhook: defaults and values", "[unit][cmd]") {
  server::WebhookConfig c;
  REQUIRE(
      ParseWith(WebhookFlags(&c), {"--tls-cert-file", "c.pem", "--tls-key-file=k.pem", "--port",
                                   "8443", "--bind-address=127.0.0.1", "--max-request-bytes",
                                   "4096", "--health-probe-bind-address", ":9000",
                                   "--metrics-bind-address=0", "--read-timeout=1500ms",
                                   "--idle-timeout", "2m", "--io-threads=3", "--shutdown-delay=0s"})
          .outcome == Outcome::kRun);
  CHECK(c.tls_cert_file == "c.pem");
  CHECK(c.port == 8443);
  CHECK(c.bind_address == "127.0.0.1");
  CHECK(c.max_request_bytes == 4096);
  CHECK(c.health_probe_address.port == 9000);
  CHECK(c.health_probe_address.host == "0.0.0.0");
  CHECK_FALSE(c.metrics_address.enabled);
  CHECK(c.read_timeout == 1500ms);
  CHECK(c.idle_timeout == 2min);
  CHECK(c.io_threads == 3);
  CHECK(c.shutdown_delay == 0ms);
  CHECK(c.write_timeout == 30s);  // untouched default

  server::WebhookConfig d;
  CHECK(ParseWith(WebhookFlags(&d), {"--tls-cert-file=c", "--tls-key-file=k", "--port=99999"})
            .error.find("invalid value \"99999\" for --port") == 0);
  CHECK(ParseWith(WebhookFlags(&d), {"--tls-cert-file=c", "--tls-key-file=k", "--port"}).error ==
        "flag --port needs a value");
  CHECK(ParseWith(WebhookFlags(&d), {"--tls-cert-file=c", "--tls-key-file=k", "--read-timeout=0s"})
            .error.find("must be at least") != std::string::npos);
  CHECK(ParseWith(WebhookFlags(&d),
                  {"--tls-cert-file=c", "--tls-key-file=k", "--bind-address", "example.com"})
            .outcome == Outcome::kError);
  CHECK(ParseWith(WebhookFlags(&d), {"--tls-cert-file=c"}).error ==
        "flag --tls-key-file is required");
}

TEST_CASE("check: -f takes files that follow, -R and -o", "[unit][cmd]") {
  CheckSettings s;
  REQUIRE(ParseWith(CheckFlags(&s), {"-f", "a.yaml", "b.yaml", "-R", "-o", "json", "-f", "-"})
              .outcome == Outcome::kRun);
  CHECK(s.files == std::vector<std::string>{"a.yaml", "b.yaml", "-"});
  CHECK(s.recursive);
  CHECK(s.output == "json");
  CheckSettings t;
  CHECK(ParseWith(CheckFlags(&t), {"-o", "xml"}).error ==
        "invalid value \"xml\" for --output: want text, yaml, json or junit");
  CHECK(ParseWith(CheckFlags(&t), {"a.yaml"}).error.find("unexpected argument") == 0);
}

TEST_CASE("certs: days, key type, lists", "[unit][cmd]") {
  RotateSettings r;
  REQUIRE(ParseWith(RotateFlags(&r),
                    {"--service=s", "--secret=x", "--webhook-config", "a,b", "--webhook-config=c",
                     "--days=30", "--key-type", "rsa", "--renew-before=240h"})
              .outcome == Outcome::kRun);
  CHECK(r.options.webhook_configs == std::vector<std::string>{"a", "b", "c"});
  CHECK(r.options.leaf_days == 30);
  CHECK(r.options.key_type == certs::KeyType::kRsa2048);
  CHECK(r.options.renew_before == 240h);
  RotateSettings bad;
  CHECK(ParseWith(RotateFlags(&bad), {"--service=s", "--secret=x", "--renew-before=1.5s"})
            .error.find("whole number") != std::string::npos);
  CHECK(ParseWith(RotateFlags(&bad), {"--service=s", "--secret=x", "--days=0"}).error ==
        "invalid value \"0\" for --days: want an integer from 1 to 36500");
}

// The backend flags (AddBackendFlags): one table on the webhook, the
// reconciler and check, each parsing into its own BackendSettings.
TEST_CASE("backend flags: the same on webhook, reconciler and check", "[unit][cmd]") {
  namespace wb = workloadbuilder;
  struct Target {
    std::string name;
    std::vector<std::string> required;
    std::function<runtime::FlagSet()> make;
    wb::BackendSettings* settings;
  };
  server::WebhookConfig webhook;
  ReconcilerSettings reconciler;
  CheckSettings check;
  const std::vector<Target> targets = {
      {"webhook",
       {"--tls-cert-file=c", "--tls-key-file=k"},
       [&] { return WebhookFlags(&webhook); },
       &webhook.backends},
      {"reconciler", {}, [&] { return ReconcilerFlags(&reconciler); }, &reconciler.backends},
      {"check", {}, [&] { return CheckFlags(&check); }, &check.backends},
  };
  for (const Target& t : targets) {
    INFO(t.name);
    *t.settings = {};
    REQUIRE(ParseWith(t.make(), t.required).outcome == Outcome::kRun);
    CHECK(t.settings->backend == wb::Backend::kNative);
    CHECK(t.settings->AllowedNames() == std::vector<std::string>{"native"});
    CHECK(t.settings->facts.kai_queue == "default-queue");
    CHECK(t.settings->facts.coscheduling_scheduler_name == "scheduler-plugins-scheduler");
    CHECK(BackendFlagsError(*t.settings).empty());

    *t.settings = {};
    std::vector<std::string> args = t.required;
    for (const char* a :
         {"--backend=volcano", "--allowed-backends", "volcano,kai", "--allowed-backends=kai",
          "--volcano-topology-tiers", "topology.kubernetes.io/zone=2,kubernetes.io/hostname=rack",
          "--volcano-queue=inference", "--kai-queue", "team-a", "--kai-topology=cluster",
          "--kai-topology-levels", "topology.kubernetes.io/zone,kubernetes.io/hostname",
          "--coscheduling-scheduler-name=gang"}) {
      args.emplace_back(a);
    }
    REQUIRE(ParseWith(t.make(), args).outcome == Outcome::kRun);
    const wb::BackendSettings& s = *t.settings;
    CHECK(s.backend == wb::Backend::kVolcano);
    CHECK(s.AllowedNames() == std::vector<std::string>{"volcano", "kai"});
    REQUIRE(s.facts.volcano_tiers.size() == 2);
    CHECK(s.facts.volcano_tiers[0].first == "topology.kubernetes.io/zone");
    CHECK(s.facts.volcano_tiers[0].second.number == 2);
    CHECK(s.facts.volcano_tiers[1].second.name == "rack");
    CHECK_FALSE(s.facts.volcano_tiers[1].second.number.has_value());
    CHECK(s.facts.volcano_queue == "inference");
    CHECK(s.facts.kai_queue == "team-a");
    CHECK(s.facts.kai_topology == "cluster");
    CHECK(s.facts.KaiHasLevel("kubernetes.io/hostname"));
    CHECK(s.facts.coscheduling_scheduler_name == "gang");
    CHECK(BackendFlagsError(s).empty());

    const auto error_of = [&](std::vector<std::string> extra) {
      *t.settings = {};
      std::vector<std::string> all = t.required;
      all.insert(all.end(), extra.begin(), extra.end());
      return ParseWith(t.make(), all).error;
    };
    CHECK(error_of({"--backend=Volcano"}) ==
          "invalid value \"Volcano\" for --backend: want one of native, volcano, kai, "
          "coscheduling");
    CHECK(error_of({"--allowed-backends=native,,kai"}) ==
          "invalid value \"native,,kai\" for --allowed-backends: want backend names separated "
          "by commas");
    CHECK(error_of({"--allowed-backends=native,slurm"}).find("\"slurm\": want one of") !=
          std::string::npos);
    CHECK(error_of({"--volcano-topology-tiers=zone"}).find("want KEY=TIER") != std::string::npos);
    CHECK(error_of({"--volcano-topology-tiers=zone=0"}).find("tiers start at 1") !=
          std::string::npos);
    CHECK(error_of({"--volcano-topology-tiers=bad key=1"}).find("is not a node-label key") !=
          std::string::npos);
    CHECK(
        error_of({"--volcano-topology-tiers=zone=Bad_Tier"}).find("is not a tier number or name") !=
        std::string::npos);
    CHECK(error_of({"--kai-topology-levels=a,,b"}).find("want node-label keys") !=
          std::string::npos);
    CHECK(error_of({"--coscheduling-scheduler-name="}) ==
          "invalid value \"\" for --coscheduling-scheduler-name: want a scheduler name");

    // Combinations, checked after parsing.
    CHECK(error_of({"--backend=kai", "--allowed-backends=native,volcano"}).empty());
    CHECK(BackendFlagsError(*t.settings) == "--backend kai is not among --allowed-backends");
    CHECK(error_of({"--kai-topology-levels=zone"}).empty());
    CHECK(BackendFlagsError(*t.settings) ==
          "--kai-topology-levels needs --kai-topology (the Topology that lists them)");
    CHECK(error_of({"--kai-queue=Team_A"}).empty());
    CHECK(BackendFlagsError(*t.settings).find("queue \"Team_A\": ") == 0);

    const std::string usage = t.make().Usage();
    for (const char* flag : {"--backend NAME", "--allowed-backends NAME,...",
                             "--volcano-topology-tiers KEY=TIER,...", "--kai-topology NAME",
                             "--kai-topology-levels KEY,...", "--coscheduling-scheduler-name"}) {
      CHECK(usage.find(flag) != std::string::npos);
    }
  }
  CheckSettings c;
  REQUIRE(ParseWith(CheckFlags(&c), {"--capabilities", "--backend", "kai"}).outcome ==
          Outcome::kRun);
  CHECK(c.capabilities);
  CHECK(c.files.empty());
}

}  // namespace
}  // namespace wasd::cmd

namespace wasd::cmd {
namespace {

TEST_CASE("pflag's forms: -oyaml, -o=json, --output=json, -f/path, -f=path, -nNS, -Rf",
          "[unit][cmd]") {
  // Each form, on the commands that have the flag, reads as "-o json" does.
  for (const std::vector<std::string>& form : std::vector<std::vector<std::string>>{
           {"-ojson"}, {"-o=json"}, {"--output=json"}, {"-o", "json"}, {"--output", "json"}}) {
    INFO(form.front());
    CheckSettings c;
    REQUIRE(ParseWith(CheckFlags(&c), form).outcome == Outcome::kRun);
    CHECK(c.output == "json");
    ExplainSettings e;
    REQUIRE(ParseWith(ExplainFlags(&e), form).outcome == Outcome::kRun);
    CHECK(e.output == "json");
    VersionSettings v;
    REQUIRE(ParseWith(VersionFlags(&v), form).outcome == Outcome::kRun);
    CHECK(v.output == "json");
  }
  CheckSettings c;
  REQUIRE(ParseWith(CheckFlags(&c), {"-f/tmp/a.yaml", "-f=/tmp/b.yaml", "-f-", "-oyaml"}).outcome ==
          Outcome::kRun);
  CHECK(c.files == std::vector<std::string>{"/tmp/a.yaml", "/tmp/b.yaml", "-"});
  CHECK(c.output == "yaml");
  // Booleans run together with a flag that takes a value: -Rf DIR, -Rfdir.
  CheckSettings r;
  REQUIRE(ParseWith(CheckFlags(&r), {"-Rf", "dir"}).outcome == Outcome::kRun);
  CHECK(r.recursive);
  CHECK(r.files == std::vector<std::string>{"dir"});
  CheckSettings r2;
  REQUIRE(ParseWith(CheckFlags(&r2), {"-Rfdir"}).outcome == Outcome::kRun);
  CHECK(r2.recursive);
  CHECK(r2.files == std::vector<std::string>{"dir"});
  // A boolean alias with =value.
  CheckSettings r3;
  REQUIRE(ParseWith(CheckFlags(&r3), {"-R=false", "-f", "x"}).outcome == Outcome::kRun);
  CHECK_FALSE(r3.recursive);
  for (const std::string form : {"-nml", "-n=ml"}) {
    INFO(form);
    ExplainSettings e;
    REQUIRE(ParseWith(ExplainFlags(&e), {form}).outcome == Outcome::kRun);
    CHECK(e.ns == "ml");
    MigrateSettings m;
    std::vector<const char*> argv{"migrate", form.c_str(), "-yA"};
    runtime::FlagSet mf = MigrateFlags(&m);
    REQUIRE(mf.Parse(static_cast<int>(argv.size()), argv.data()) == Outcome::kRun);
    CHECK(m.ns == "ml");
    CHECK(m.yes);
    CHECK(m.all_namespaces);
  }
  // Mistakes name the letter, and a value is still checked.
  CheckSettings bad;
  CHECK(ParseWith(CheckFlags(&bad), {"-Rx"}).error == "unknown shorthand flag 'x' in -Rx");
  CHECK(ParseWith(CheckFlags(&bad), {"-x"}).error == "unknown flag -x");
  CHECK(ParseWith(CheckFlags(&bad), {"-oxml"}).error ==
        "invalid value \"xml\" for --output: want text, yaml, json or junit");
  CHECK(ParseWith(CheckFlags(&bad), {"-o"}).error == "flag --output needs a value");
  ExplainSettings empty;
  CHECK(ParseWith(ExplainFlags(&empty), {"-n="}).error ==
        "invalid value \"\" for --namespace: must not be empty");
}

TEST_CASE("explain: -n, -o text|json|yaml, --kubeconfig, --request-timeout", "[unit][cmd]") {
  ExplainSettings s;
  REQUIRE(ParseWith(ExplainFlags(&s),
                    {"-n", "ml", "-o", "yaml", "--kubeconfig=k", "--request-timeout=5s"})
              .outcome == Outcome::kRun);
  CHECK(s.ns == "ml");
  CHECK(s.output == "yaml");
  CHECK(s.connection.kubeconfig == "k");
  CHECK(s.connection.request_timeout == std::chrono::seconds(5));
  ExplainSettings t;
  REQUIRE(ParseWith(ExplainFlags(&t), {}).outcome == Outcome::kRun);
  CHECK(t.ns.empty());  // the kubeconfig context's namespace
  CHECK(t.output == "text");
  CHECK(ParseWith(ExplainFlags(&t), {"-o", "wide"}).outcome == Outcome::kError);
  CHECK(ParseWith(ExplainFlags(&t), {"--request-timeout=30"}).outcome == Outcome::kError);
  const std::string usage = ExplainFlags(&t).Usage();
  CHECK(usage.rfind("Usage: wasd explain deployment/NAME", 0) == 0);
  CHECK(usage.find("Exit status: 0 the gang is scheduled, 3 it is pending") != std::string::npos);
}

TEST_CASE("explain: the reconciler's backend flags give the doctor the cluster facts",
          "[unit][cmd]") {
  ExplainSettings s;
  REQUIRE(ParseWith(ExplainFlags(&s),
                    {"--volcano-topology-tiers", "topology.kubernetes.io/zone=2", "--kai-topology",
                     "gpu-topo", "--kai-topology-levels", "topology.kubernetes.io/zone"})
              .outcome == Outcome::kRun);
  REQUIRE(s.backends.facts.VolcanoTierFor("topology.kubernetes.io/zone") != nullptr);
  CHECK(s.backends.facts.VolcanoTierFor("topology.kubernetes.io/zone")->number == 2);
  CHECK(s.backends.facts.KaiHasLevel("topology.kubernetes.io/zone"));
  ExplainSettings t;
  REQUIRE(ParseWith(ExplainFlags(&t), {"--kai-topology-levels", "topology.kubernetes.io/zone"})
              .outcome == Outcome::kRun);
  CHECK_FALSE(BackendFlagsError(t.backends).empty());  // levels without --kai-topology
}

// Every command that talks to a cluster takes kubectl's connection flags into
// its ConnectionSettings, and -n where a namespace applies.
TEST_CASE("connection flags: --kubeconfig, --context, --cluster, --user, --request-timeout",
          "[unit][cmd]") {
  ExplainSettings explain;
  SelftestSettings selftest;
  MigrateSettings migrate;
  InjectCaSettings inject;
  RotateSettings rotate;
  UninstallSettings uninstall;
  struct Case {
    std::string name;
    std::function<runtime::FlagSet()> flags;
    std::vector<std::string> required;
    ConnectionSettings* connection;
    bool namespaced;
  };
  const std::vector<Case> cases = {
      {"explain", [&] { return ExplainFlags(&explain); }, {}, &explain.connection, true},
      {"selftest", [&] { return SelftestFlags(&selftest); }, {}, &selftest.connection, true},
      {"migrate", [&] { return MigrateFlags(&migrate); }, {}, &migrate.connection, true},
      {"certs inject-ca",
       [&] { return InjectCaFlags(&inject); },
       {"--ca-file=c", "--webhook-config=w"},
       &inject.connection,
       false},
      {"certs rotate",
       [&] { return RotateFlags(&rotate); },
       {"--service=s", "--secret=t"},
       &rotate.connection,
       true},
      {"certs uninstall",
       [&] { return UninstallFlags(&uninstall); },
       {"--webhook-config=w"},
       &uninstall.connection,
       false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<std::string> args = c.required;
    for (const char* a : {"--kubeconfig=/k", "--context", "lab", "--cluster=c2", "--user", "u2",
                          "--request-timeout=7s"}) {
      args.emplace_back(a);
    }
    if (c.namespaced) {
      args.emplace_back("-n");
      args.emplace_back("ml");
    }
    REQUIRE(ParseWith(c.flags(), args).outcome == Outcome::kRun);
    CHECK(c.connection->kubeconfig == "/k");
    CHECK(c.connection->context == "lab");
    CHECK(c.connection->cluster == "c2");
    CHECK(c.connection->user == "u2");
    CHECK(c.connection->request_timeout == 7s);
    if (!c.namespaced) {
      std::vector<std::string> with_n = c.required;
      with_n.insert(with_n.end(), {"-n", "x"});
      CHECK(ParseWith(c.flags(), with_n).outcome == Outcome::kError);
    }
  }
  CHECK(explain.ns == "ml");
  CHECK(selftest.ns == "ml");
  CHECK(migrate.ns == "ml");
  CHECK(rotate.options.ns == "ml");
}

// The daemons take the same kubeconfig flags (AddKubeconfigFlags), but no
// --request-timeout: their API calls carry their own deadlines.
TEST_CASE("daemon connection flags: --kubeconfig, --context, --cluster, --user", "[unit][cmd]") {
  const std::vector<std::string> chosen = {"--kubeconfig=/k", "--context", "lab",
                                           "--cluster=c2",    "--user",    "u2"};
  server::WebhookConfig webhook;
  std::vector<std::string> args = {"--tls-cert-file=c", "--tls-key-file=k"};
  args.insert(args.end(), chosen.begin(), chosen.end());
  REQUIRE(ParseWith(WebhookFlags(&webhook), args).outcome == Outcome::kRun);
  CHECK(webhook.kubeconfig == "/k");
  CHECK(webhook.kube_selection.context == "lab");
  CHECK(webhook.kube_selection.cluster == "c2");
  CHECK(webhook.kube_selection.user == "u2");

  ReconcilerSettings reconciler;
  REQUIRE(ParseWith(ReconcilerFlags(&reconciler), chosen).outcome == Outcome::kRun);
  CHECK(reconciler.kubeconfig == "/k");
  CHECK(reconciler.selection.context == "lab");
  CHECK(reconciler.selection.cluster == "c2");
  CHECK(reconciler.selection.user == "u2");

  // Unset: the kubeconfig's own choice.
  server::WebhookConfig plain_webhook;
  REQUIRE(
      ParseWith(WebhookFlags(&plain_webhook), {"--tls-cert-file=c", "--tls-key-file=k"}).outcome ==
      Outcome::kRun);
  CHECK(plain_webhook.kube_selection.context.empty());
  ReconcilerSettings plain;
  REQUIRE(ParseWith(ReconcilerFlags(&plain), {}).outcome == Outcome::kRun);
  CHECK(plain.selection.context.empty());
  CHECK(plain.selection.cluster.empty());
  CHECK(plain.selection.user.empty());

  // The same help text as the CLI commands', one definition.
  ExplainSettings explain;
  const std::string cli = ExplainFlags(&explain).Usage();
  for (const std::string& usage :
       {WebhookFlags(&plain_webhook).Usage(), ReconcilerFlags(&plain).Usage()}) {
    for (const char* line : {"the kubeconfig context to use (default: its current-context)",
                             "the kubeconfig cluster to use (default: the context's)",
                             "the kubeconfig user to use (default: the context's)"}) {
      CHECK(usage.find(line) != std::string::npos);
      CHECK(cli.find(line) != std::string::npos);
    }
    CHECK(usage.find("No --request-timeout") != std::string::npos);
  }
  CHECK(ParseWith(ReconcilerFlags(&plain), {"--request-timeout=5s"}).outcome == Outcome::kError);
}

// Where --timeout was the per-request deadline (explain, selftest) it stays
// accepted with a warning naming --request-timeout; migrate's --timeout is
// the overall wait and is no alias.
TEST_CASE("connection flags: --timeout is a deprecated --request-timeout on explain and selftest",
          "[unit][cmd]") {
  auto run = [](std::vector<std::string> args, ConnectionSettings* out) {
    ExplainSettings s;
    runtime::FlagSet flags = ExplainFlags(&s);
    std::vector<const char*> argv{"explain"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    REQUIRE(flags.Parse(static_cast<int>(argv.size()), argv.data()) == Outcome::kRun);
    const std::string warning = DeprecatedTimeoutWarning(flags, &s.connection);
    *out = s.connection;
    return warning;
  };
  ConnectionSettings c;
  CHECK(run({}, &c).empty());
  CHECK(c.request_timeout == 30s);
  const std::string warning = run({"--timeout=5s"}, &c);
  CHECK_THAT(warning, Catch::Contains("--timeout is deprecated") &&
                          Catch::Contains("use --request-timeout"));
  CHECK(c.request_timeout == 5s);
  CHECK_FALSE(run({"--timeout=5s", "--request-timeout=9s"}, &c).empty());
  CHECK(c.request_timeout == 9s);  // the new name wins

  SelftestSettings st;
  runtime::FlagSet flags = SelftestFlags(&st);
  const char* argv[] = {"selftest", "--timeout", "3s"};
  REQUIRE(flags.Parse(3, argv) == Outcome::kRun);
  CHECK_FALSE(DeprecatedTimeoutWarning(flags, &st.connection).empty());
  CHECK(st.connection.request_timeout == 3s);
  CHECK(SelftestFlags(&st).Usage().find("DEPRECATED: use --request-timeout") != std::string::npos);
}

}  // namespace
}  // namespace wasd::cmd

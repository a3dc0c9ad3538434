#include "server/webhook_config.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace wasd::server {
namespace {

struct Parsed {
  ParseOutcome outcome;
  WebhookConfig config;
  std::string error;
};

Parsed Parse(std::vector<std::string> args) {
  std::vector<const char*> argv{"webhook"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  Parsed p;
  p.outcome = ParseWebhookFlags(static_cast<int>(argv.size()), argv.data(), &p.config, &p.error);
  return p;
}

const std::vector<std::string> kRequired = {"--tls-cert-file", "c.pem", "--tls-key-file=k.pem"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> all = kRequired;
  all.insert(all.end(), extra.begin(), extra.end());
  return all;
}

TEST_CASE("defaults follow the contract", "[unit][server]") {
  Parsed p = Parse(kRequired);
  REQUIRE(p.outcome == ParseOutcome::kRun);
  CHECK(p.config.tls_cert_file == "c.pem");
  CHECK(p.config.tls_key_file == "k.pem");
  CHECK(p.config.bind_address == "0.0.0.0");
  CHECK(p.config.port == 9443);
  CHECK(p.config.health_probe_address.port == 8081);
  CHECK(p.config.metrics_address.port == 8080);
  CHECK(p.config.max_request_bytes == 7340032);
  CHECK(p.config.pod_scheduling_gate);
  CHECK(p.config.handshake_timeout == std::chrono::seconds(10));
  CHECK(p.config.read_timeout == std::chrono::seconds(30));
  CHECK(p.config.write_timeout == std::chrono::seconds(30));
  CHECK(p.config.idle_timeout == std::chrono::seconds(120));
  CHECK(p.config.shutdown_grace_period == std::chrono::seconds(30));
}

TEST_CASE("both --flag value and --flag=value work", "[unit][server]") {
  Parsed p = Parse(With({"--port", "8443", "--bind-address=127.0.0.1", "--max-request-bytes",
                         "4096", "--client-ca-file=ca.pem", "--kubeconfig", "/kc",
                         "--read-timeout=1500ms", "--idle-timeout", "2m", "--io-threads=3"}));
  REQUIRE(p.outcome == ParseOutcome::kRun);
  CHECK(p.config.port == 8443);
  CHECK(p.config.bind_address == "127.0.0.1");
  CHECK(p.config.max_request_bytes == 4096);
  CHECK(p.config.client_ca_file == "ca.pem");
  CHECK(p.config.kubeconfig == "/kc");
  CHECK(p.config.read_timeout == std::chrono::milliseconds(1500));
  CHECK(p.config.idle_timeout == std::chrono::minutes(2));
  CHECK(p.config.io_threads == 3);
}

TEST_CASE("boolean flag forms", "[unit][server]") {
  CHECK_FALSE(Parse(With({"--pod-scheduling-gate=false"})).config.pod_scheduling_gate);
  CHECK(Parse(With({"--pod-scheduling-gate=true"})).config.pod_scheduling_gate);
  CHECK(Parse(With({"--pod-scheduling-gate"})).config.pod_scheduling_gate);
  Parsed bad = Parse(With({"--pod-scheduling-gate=maybe"}));
  CHECK(bad.outcome == ParseOutcome::kError);
  CHECK(bad.error.find("--pod-scheduling-gate") != std::string::npos);
  // A bool does not swallow the next argument.
  CHECK(Parse(With({"--pod-scheduling-gate", "false"})).outcome == ParseOutcome::kError);
}

TEST_CASE("listen addresses", "[unit][server]") {
  Parsed p = Parse(With({"--health-probe-bind-address", ":9000", "--metrics-bind-address=0"}));
  REQUIRE(p.outcome == ParseOutcome::kRun);
  CHECK(p.config.health_probe_address.host == "0.0.0.0");
  CHECK(p.config.health_probe_address.port == 9000);
  CHECK(p.config.health_probe_address.enabled);
  CHECK_FALSE(p.config.metrics_address.enabled);

  ListenAddress a;
  REQUIRE(ParseListenAddress("[::1]:8081", &a));
  CHECK(a.host == "::1");
  CHECK(a.port == 8081);
  REQUIRE(ParseListenAddress("127.0.0.1:0", &a));
  CHECK(a.port == 0);
  CHECK(a.enabled);
  CHECK_FALSE(ParseListenAddress("::1:8081", &a));  // IPv6 needs brackets
  CHECK_FALSE(ParseListenAddress("localhost:8081", &a));
  CHECK_FALSE(ParseListenAddress("127.0.0.1", &a));
  CHECK_FALSE(ParseListenAddress("127.0.0.1:70000", &a));
  CHECK_FALSE(ParseListenAddress("127.0.0.1:x", &a));
}

TEST_CASE("durations", "[unit][server]") {
  std::chrono::milliseconds d{};
  REQUIRE(ParseDuration("250ms", &d));
  CHECK(d.count() == 250);
  REQUIRE(ParseDuration("1.5s", &d));
  CHECK(d.count() == 1500);
  REQUIRE(ParseDuration("30", &d));
  CHECK(d.count() == 30000);
  REQUIRE(ParseDuration("1h", &d));
  CHECK(d.count() == 3600000);
  CHECK_FALSE(ParseDuration("", &d));
  CHECK_FALSE(ParseDuration("s", &d));
  CHECK_FALSE(ParseDuration("10x", &d));
  CHECK_FALSE(ParseDuration("-1s", &d));
  CHECK_FALSE(ParseDuration("1.s", &d));
  CHECK_FALSE(ParseDuration("25h", &d));
  CHECK(Parse(With({"--read-timeout=0s"})).outcome == ParseOutcome::kError);
}

TEST_CASE("errors are specific", "[unit][server]") {
  Parsed p = Parse(With({"--nope"}));
  CHECK(p.outcome == ParseOutcome::kError);
  CHECK(p.error == "unknown flag --nope");

  p = Parse(With({"--port"}));
  CHECK(p.outcome == ParseOutcome::kError);
  CHECK(p.error == "flag --port needs a value");

  p = Parse(With({"--port=99999"}));
  CHECK(p.outcome == ParseOutcome::kError);
  CHECK(p.error.find("invalid value \"99999\" for --port") == 0);

  p = Parse(With({"--max-request-bytes=10"}));
  CHECK(p.outcome == ParseOutcome::kError);
  CHECK(p.error.find("--max-request-bytes") != std::string::npos);

  p = Parse(With({"--bind-address", "example.com"}));
  CHECK(p.outcome == ParseOutcome::kError);

  p = Parse(With({"stray"}));
  CHECK(p.outcome == ParseOutcome::kError);
  CHECK(p.error.find("unexpected argument \"stray\"") == 0);

  p = Parse({"--tls-cert-file=c.pem"});
  CHECK(p.outcome == ParseOutcome::kError);
  CHECK(p.error == "--tls-cert-file and --tls-key-file are required");

  p = Parse(With({"--io-threads=1000"}));
  CHECK(p.outcome == ParseOutcome::kError);
}

TEST_CASE("--help wins over missing flags", "[unit][server]") {
  CHECK(Parse({"--help"}).outcome == ParseOutcome::kHelp);
  CHECK(Parse({"--port", "1", "-h"}).outcome == ParseOutcome::kHelp);
  const std::string usage = WebhookUsage();
  for (const char* flag : {"--tls-cert-file", "--tls-key-file", "--bind-address", "--port",
                           "--health-probe-bind-address", "--metrics-bind-address",
                           "--client-ca-file", "--kubeconfig", "--max-request-bytes",
                           "--pod-scheduling-gate", "--shutdown-grace-period", "--io-threads"}) {
    CHECK(usage.find(flag) != std::string::npos);
  }
}

}  // namespace
}  // namespace wasd::server

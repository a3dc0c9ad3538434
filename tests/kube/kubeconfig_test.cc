// ParseKubeconfig (pure) and LoadConfig (files in a temporary directory).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "kube/config.h"

namespace wasd::kube {
namespace {

namespace fs = std::filesystem;

// "-----BEGIN CERTIFICATE-----\nCA\n" and friends, base64-encoded.
constexpr const char* kCaPem = "-----BEGIN CERTIFICATE-----\nCA\n";
constexpr const char* kCaB64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg==";
constexpr const char* kCertPem = "CERT-PEM\n";
constexpr const char* kCertB64 = "Q0VSVC1QRU0K";
constexpr const char* kKeyPem = "KEY-PEM\n";
constexpr const char* kKeyB64 = "S0VZLVBFTQo=";

std::string Kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& extra_context = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: main\n"
         "clusters:\n- name: c1\n  cluster:\n" +
         cluster + "users:\n- name: u1\n  user:\n" + user +
         "contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n" + extra_context;
}

const std::string kServer = "    server: https://10.0.0.1:6443\n";

TEST_CASE("kubeconfig: token user, CA data, namespace", "[unit][config]") {
  std::string text = Kubeconfig(kServer + "    certificate-authority-data: " + kCaB64 + "\n",
                                "    token: abc.def\n", "    namespace: team-a\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/etc/kube");
  REQUIRE(r.ok());
  const Config& c = r->config;
  CHECK(r->context == "main");
  CHECK(c.server == "https://10.0.0.1:6443");
  CHECK(c.ca_pem == kCaPem);
  CHECK(r->files.certificate_authority.empty());
  CHECK(c.token == "abc.def");
  CHECK(c.token_file.empty());
  CHECK(c.namespace_ == "team-a");
  CHECK_FALSE(c.insecure_skip_tls_verify);
}

TEST_CASE("kubeconfig: client certificate data form", "[unit][config]") {
  std::string text = Kubeconfig(kServer, std::string("    client-certificate-data: ") + kCertB64 +
                                             "\n    client-key-data: " + kKeyB64 + "\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/etc/kube");
  REQUIRE(r.ok());
  CHECK(r->config.client_cert_pem == kCertPem);
  CHECK(r->config.client_key_pem == kKeyPem);
  CHECK(r->files.client_certificate.empty());
  CHECK(r->config.namespace_ == "default");
}

TEST_CASE("kubeconfig: file forms resolve relative paths against the kubeconfig's directory",
          "[unit][config]") {
  std::string text = Kubeconfig(kServer + "    certificate-authority: pki/ca.crt\n",
                                "    client-certificate: ../certs/me.crt\n"
                                "    client-key: /abs/me.key\n"
                                "    tokenFile: token\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/home/u/.kube");
  REQUIRE(r.ok());
  CHECK(r->files.certificate_authority == "/home/u/.kube/pki/ca.crt");
  CHECK(r->files.client_certificate == "/home/u/.kube/../certs/me.crt");
  CHECK(r->files.client_key == "/abs/me.key");
  CHECK(r->config.token_file == "/home/u/.kube/token");
  CHECK(r->config.ca_pem.empty());
}

TEST_CASE("kubeconfig: data wins over file when both are given", "[unit][config]") {
  std::string text = Kubeconfig(kServer + "    certificate-authority: ca.crt\n" +
                                    "    certificate-authority-data: " + kCaB64 + "\n",
                                "    token: t\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/d");
  REQUIRE(r.ok());
  CHECK(r->config.ca_pem == kCaPem);
  CHECK(r->files.certificate_authority.empty());
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify and tls-server-name", "[unit][config]") {
  std::string text = Kubeconfig(kServer +
                                    "    insecure-skip-tls-verify: true\n"
                                    "    tls-server-name: api.internal\n",
                                "    token: t\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/d");
  REQUIRE(r.ok());
  CHECK(r->config.insecure_skip_tls_verify);
  CHECK(r->config.tls_server_name == "api.internal");
}

TEST_CASE("kubeconfig: an explicit context overrides current-context", "[unit][config]") {
  std::string text = Kubeconfig(kServer, "    token: t\n",
                                "- name: other\n  context:\n    cluster: c1\n    user: u1\n"
                                "    namespace: other-ns\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/d", "other");
  REQUIRE(r.ok());
  CHECK(r->context == "other");
  CHECK(r->config.namespace_ == "other-ns");
}

// Two clusters, two users, two contexts: "main" (c1, u1, team-a) is current,
// "lab" (c2, u2) is not.
std::string TwoContexts() {
  return "apiVersion: v1\nkind: Config\ncurrent-context: main\n"
         "clusters:\n"
         "- name: c1\n  cluster:\n    server: https://10.0.0.1:6443\n"
         "- name: c2\n  cluster:\n    server: https://10.0.0.2:6443\n"
         "users:\n"
         "- name: u1\n  user:\n    token: token-1\n"
         "- name: u2\n  user:\n    token: token-2\n"
         "contexts:\n"
         "- name: main\n  context:\n    cluster: c1\n    user: u1\n    namespace: team-a\n"
         "- name: lab\n  context:\n    cluster: c2\n    user: u2\n";
}

// What a selection picked, checked in one place.
struct Selected {
  std::string context, cluster, user, server, token, ns;
};
void CheckSelected(const ParsedKubeconfig& r, const Selected& want) {
  CHECK(r.context == want.context);
  CHECK(r.cluster == want.cluster);
  CHECK(r.user == want.user);
  CHECK(r.config.server == want.server);
  CHECK(r.config.token == want.token);
  CHECK(r.config.namespace_ == want.ns);
}

TEST_CASE("kubeconfig: --context, --cluster and --user select entries as kubectl does",
          "[unit][config]") {
  const std::vector<std::pair<KubeconfigSelection, Selected>> cases = {
      {{}, {"main", "c1", "u1", "https://10.0.0.1:6443", "token-1", "team-a"}},
      {{"lab", "", ""}, {"lab", "c2", "u2", "https://10.0.0.2:6443", "token-2", "default"}},
      // --cluster and --user replace the context's own; its namespace stays.
      {{"", "c2", ""}, {"main", "c2", "u1", "https://10.0.0.2:6443", "token-1", "team-a"}},
      {{"", "", "u2"}, {"main", "c1", "u2", "https://10.0.0.1:6443", "token-2", "team-a"}},
      {{"lab", "c1", "u1"}, {"lab", "c1", "u1", "https://10.0.0.1:6443", "token-1", "default"}},
  };
  for (const auto& [selection, want] : cases) {
    INFO(selection.context << "/" << selection.cluster << "/" << selection.user);
    Result<ParsedKubeconfig> r = ParseKubeconfig(TwoContexts(), "/d", selection);
    REQUIRE(r.ok());
    CheckSelected(*r, want);
  }
}

TEST_CASE("kubeconfig: --cluster without any context, and unknown names", "[unit][config]") {
  const std::string no_current =
      "clusters:\n- name: c1\n  cluster:\n    server: https://10.0.0.1:6443\n"
      "users:\n- name: u1\n  user:\n    token: t\n";
  Result<ParsedKubeconfig> r =
      ParseKubeconfig(no_current, "/d", KubeconfigSelection{"", "c1", "u1"});
  REQUIRE(r.ok());
  CHECK(r->context.empty());
  CHECK(r->config.server == "https://10.0.0.1:6443");
  CHECK(r->config.token == "t");
  CHECK(r->config.namespace_ == "default");

  for (const auto& [selection, expect] : std::vector<std::pair<KubeconfigSelection, std::string>>{
           {{"nope", "", ""}, "context \"nope\" does not exist"},
           {{"", "nope", ""}, "cluster \"nope\" does not exist"},
           {{"", "", "nope"}, "user \"nope\" does not exist"},
       }) {
    Result<ParsedKubeconfig> bad = ParseKubeconfig(TwoContexts(), "/d", selection);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().message() == "kubeconfig: " + expect);
  }
}

TEST_CASE("kubeconfig: errors name what is wrong", "[unit][config]") {
  struct Case {
    std::string text;
    std::string context;
    std::string expect;
  };
  const std::string ok_user = "    token: t\n";
  const std::vector<Case> cases = {
      {Kubeconfig(kServer, ok_user), "missing", "context \"missing\" does not exist"},
      {"clusters: []\n", "", "no current-context is set"},
      {"current-context: x\ncontexts:\n- name: x\n  context:\n    cluster: nope\n", "",
       "cluster \"nope\" does not exist"},
      {Kubeconfig("    certificate-authority-data: " + std::string(kCaB64) + "\n", ok_user), "",
       "cluster \"c1\" has no server"},
      {Kubeconfig(kServer, "    exec:\n      command: aws\n"), "",
       "exec: apiVersion \"\" is not supported (client.authentication.k8s.io/v1 or v1beta1)"},
      {Kubeconfig(
           kServer,
           "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n"),
       "", "exec: interactiveMode is required"},
      {Kubeconfig(
           kServer,
           "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n"
           "      interactiveMode: Always\n"),
       "", "interactiveMode Always needs a terminal"},
      {Kubeconfig(kServer, "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"),
       "", "exec: command is required"},
      {Kubeconfig(kServer, "    auth-provider:\n      name: gcp\n"), "", "\"auth-provider\""},
      {Kubeconfig(kServer, "    client-certificate-data: " + std::string(kCertB64) + "\n"), "",
       "client certificate and client key must be given together"},
      {Kubeconfig(kServer + "    certificate-authority-data: '%%%'\n", ok_user), "",
       "certificate-authority-data is not base64"},
      {Kubeconfig(kServer + "    insecure-skip-tls-verify: true\n    certificate-authority: ca\n",
                  ok_user),
       "", "mutually exclusive"},
      {Kubeconfig(kServer + "    insecure-skip-tls-verify: maybe\n", ok_user), "",
       "insecure-skip-tls-verify must be true or false"},
      {"a: [unclosed\n", "", "not valid YAML"},
      {"- just a list\n", "", "not a YAML map"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    Result<ParsedKubeconfig> r = ParseKubeconfig(c.text, "/d", c.context);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().kind() == Status::Kind::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains(c.expect));
  }
}

TEST_CASE("kubeconfig: an exec credential plugin (EKS, GKE, AKS)", "[unit][config]") {
  const std::string text = Kubeconfig(kServer,
                                      "    exec:\n"
                                      "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                                      "      command: aws\n"
                                      "      args: [eks, get-token, --cluster-name, prod]\n"
                                      "      env:\n"
                                      "      - name: AWS_PROFILE\n"
                                      "        value: ops\n"
                                      "      installHint: install the AWS CLI\n"
                                      "      provideClusterInfo: true\n");
  Result<ParsedKubeconfig> r = ParseKubeconfig(text, "/d");
  REQUIRE(r.ok());
  REQUIRE(r->config.exec.has_value());
  const ExecConfig& e = *r->config.exec;
  CHECK(e.api_version == "client.authentication.k8s.io/v1beta1");
  CHECK(e.command == "aws");
  CHECK(e.args == std::vector<std::string>{"eks", "get-token", "--cluster-name", "prod"});
  CHECK(e.env == std::vector<std::pair<std::string, std::string>>{{"AWS_PROFILE", "ops"}});
  CHECK(e.interactive_mode == "IfAvailable");  // v1beta1's default
  CHECK(e.install_hint == "install the AWS CLI");
  CHECK(e.provide_cluster_info);
}

KubeconfigDocument Doc(const std::string& path, const std::string& text) {
  return KubeconfigDocument{path, text, fs::path(path).parent_path().string()};
}

TEST_CASE("merge: the first document that defines a name wins, the whole entry", "[unit][config]") {
  // Both define cluster c1, user u1 and context main; only the first's count.
  const std::string first = Kubeconfig(kServer, "    token: first\n");
  const std::string second =
      "current-context: main\n"
      "clusters:\n- name: c1\n  cluster:\n    server: https://10.0.0.9:6443\n"
      "    tls-server-name: second.example\n"
      "users:\n- name: u1\n  user:\n    token: second\n"
      "contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n"
      "    namespace: second-ns\n";
  Result<ParsedKubeconfig> r =
      MergeKubeconfigs({Doc("/one/config", first), Doc("/two/config", second)}, {});
  REQUIRE(r.ok());
  CHECK(r->config.server == "https://10.0.0.1:6443");
  // Fields the first entry lacks are NOT taken from the second's.
  CHECK(r->config.tls_server_name.empty());
  CHECK(r->config.token == "first");
  CHECK(r->config.namespace_ == "default");
  CHECK(r->cluster_file == "/one/config");

  // The other order: the second file's entries now come first.
  r = MergeKubeconfigs({Doc("/two/config", second), Doc("/one/config", first)}, {});
  REQUIRE(r.ok());
  CHECK(r->config.server == "https://10.0.0.9:6443");
  CHECK(r->config.tls_server_name == "second.example");
  CHECK(r->config.token == "second");
  CHECK(r->config.namespace_ == "second-ns");
  CHECK(r->cluster_file == "/two/config");
}

TEST_CASE("merge: current-context comes from the first document that sets one", "[unit][config]") {
  const std::string none = "clusters:\n- name: c1\n  cluster:\n" + kServer;
  const std::string sets_b =
      "current-context: b\n"
      "contexts:\n- name: b\n  context:\n    cluster: c1\n    namespace: ns-b\n"
      "- name: c\n  context:\n    cluster: c1\n    namespace: ns-c\n";
  const std::string sets_c = "current-context: c\n";
  Result<ParsedKubeconfig> r = MergeKubeconfigs(
      {Doc("/1/config", none), Doc("/2/config", sets_b), Doc("/3/config", sets_c)}, {});
  REQUIRE(r.ok());
  CHECK(r->context == "b");
  CHECK(r->config.namespace_ == "ns-b");
  r = MergeKubeconfigs({Doc("/1/config", none), Doc("/3/config", sets_c), Doc("/2/config", sets_b)},
                       {});
  REQUIRE(r.ok());
  CHECK(r->context == "c");
  CHECK(r->config.namespace_ == "ns-c");
  // An empty document adds nothing and breaks nothing.
  r = MergeKubeconfigs({Doc("/0/config", ""), Doc("/2/config", sets_b), Doc("/1/config", none)},
                       {});
  REQUIRE(r.ok());
  CHECK(r->context == "b");
}

TEST_CASE("merge: relative paths resolve against the directory of the defining file",
          "[unit][config]") {
  const std::string users =
      "current-context: main\n"
      "users:\n- name: u1\n  user:\n    client-certificate: me.crt\n    client-key: k/me.key\n"
      "    tokenFile: token\n"
      "contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n";
  const std::string clusters =
      "clusters:\n- name: c1\n  cluster:\n" + kServer + "    certificate-authority: pki/ca.crt\n";
  Result<ParsedKubeconfig> r = MergeKubeconfigs(
      {Doc("/home/u/users.yaml", users), Doc("/etc/k/clusters.yaml", clusters)}, {});
  REQUIRE(r.ok());
  CHECK(r->files.certificate_authority == "/etc/k/pki/ca.crt");
  CHECK(r->files.client_certificate == "/home/u/me.crt");
  CHECK(r->files.client_key == "/home/u/k/me.key");
  CHECK(r->config.token_file == "/home/u/token");
}

TEST_CASE("merge: --context, --cluster and --user find entries of any document", "[unit][config]") {
  // The first file is TwoContexts (current-context main); the second adds a
  // context, a cluster and a user of its own.
  const std::string second =
      "clusters:\n- name: c3\n  cluster:\n    server: https://10.0.0.3:6443\n"
      "users:\n- name: u3\n  user:\n    token: token-3\n"
      "contexts:\n- name: far\n  context:\n    cluster: c3\n    user: u3\n"
      "    namespace: far-ns\n"
      "- name: mixed\n  context:\n    cluster: c2\n    user: u3\n";
  const std::vector<KubeconfigDocument> docs = {Doc("/a/config", TwoContexts()),
                                                Doc("/b/config", second)};
  struct Case {
    KubeconfigSelection selection;
    Selected want;
    std::string cluster_file;
  };
  const std::vector<Case> cases = {
      {{}, {"main", "c1", "u1", "https://10.0.0.1:6443", "token-1", "team-a"}, "/a/config"},
      // A context defined only in the second file.
      {{"far", "", ""},
       {"far", "c3", "u3", "https://10.0.0.3:6443", "token-3", "far-ns"},
       "/b/config"},
      // A context of the second file naming a cluster of the first.
      {{"mixed", "", ""},
       {"mixed", "c2", "u3", "https://10.0.0.2:6443", "token-3", "default"},
       "/a/config"},
      // --cluster and --user naming the second file's entries under the first's context.
      {{"", "c3", "u3"},
       {"main", "c3", "u3", "https://10.0.0.3:6443", "token-3", "team-a"},
       "/b/config"},
      // ... and the first's entries under the second's context.
      {{"far", "c1", "u2"},
       {"far", "c1", "u2", "https://10.0.0.1:6443", "token-2", "far-ns"},
       "/a/config"},
  };
  for (const Case& c : cases) {
    INFO(c.selection.context << "/" << c.selection.cluster << "/" << c.selection.user);
    Result<ParsedKubeconfig> r = MergeKubeconfigs(docs, c.selection);
    REQUIRE(r.ok());
    CheckSelected(*r, c.want);
    CHECK(r->cluster_file == c.cluster_file);
  }
  Result<ParsedKubeconfig> bad = MergeKubeconfigs(docs, KubeconfigSelection{"nope", "", ""});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "kubeconfig: context \"nope\" does not exist");
}

TEST_CASE("merge: errors name the document concerned", "[unit][config]") {
  const std::string good = Kubeconfig(kServer, "    token: t\n");
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {"a: [unclosed\n", "kubeconfig: /b/config: not valid YAML"},
           {"- a list\n", "kubeconfig: /b/config: not a YAML map"},
           {"users: {u1: {}}\n", "kubeconfig: /b/config: \"users\" must be a list"},
       }) {
    INFO(text);
    Result<ParsedKubeconfig> r =
        MergeKubeconfigs({Doc("/a/config", good), Doc("/b/config", text)}, {});
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::StartsWith(expect));
  }
  // An entry's own error names the file that defined it.
  const std::string no_server =
      "clusters:\n- name: c9\n  cluster:\n    certificate-authority-data: " + std::string(kCaB64) +
      "\n";
  Result<ParsedKubeconfig> r = MergeKubeconfigs(
      {Doc("/a/config", good), Doc("/b/config", no_server)}, KubeconfigSelection{"", "c9", ""});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "kubeconfig: /b/config: cluster \"c9\" has no server");
}

TEST_CASE("in-cluster server URL", "[unit][config]") {
  CHECK(InClusterServer("10.96.0.1", "443") == "https://10.96.0.1:443");
  CHECK(InClusterServer("fd00::1", "6443") == "https://[fd00::1]:6443");
  CHECK(InClusterServer("", "443").empty());
}

// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("wasd-kube-test-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& rel, const std::string& content) const {
    const fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

TEST_CASE("LoadConfig: --kubeconfig reads referenced files relative to its directory",
          "[unit][config]") {
  TempDir dir;
  dir.Write("kube/pki/ca.crt", kCaPem);
  dir.Write("kube/me.crt", kCertPem);
  dir.Write("kube/me.key", kKeyPem);
  dir.Write("kube/token", "  tok-1\n");
  const std::string kc =
      dir.Write("kube/config", Kubeconfig(kServer + "    certificate-authority: pki/ca.crt\n",
                                          "    client-certificate: me.crt\n    client-key: me.key\n"
                                          "    tokenFile: token\n"));
  ConfigSources s;
  s.kubeconfig_flag = kc;
  s.kubeconfig_env = "/nonexistent";  // the flag wins
  Result<Config> r = LoadConfig(s);
  REQUIRE(r.ok());
  CHECK(r->ca_pem == kCaPem);
  CHECK(r->client_cert_pem == kCertPem);
  CHECK(r->client_key_pem == kKeyPem);
  CHECK(r->token == "tok-1");
  CHECK(r->token_file == dir.path() + "/kube/token");
  CHECK_THAT(r->source, Catch::Contains("kubeconfig " + kc) && Catch::Contains("context main"));
}

TEST_CASE("LoadConfig: a referenced file that is missing is a clear error", "[unit][config]") {
  TempDir dir;
  const std::string kc = dir.Write(
      "config", Kubeconfig(kServer + "    certificate-authority: gone.crt\n", "    token: t\n"));
  ConfigSources s;
  s.kubeconfig_flag = kc;
  Result<Config> r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::Contains("certificate-authority") && Catch::Contains(dir.path() + "/gone.crt"));
}

TEST_CASE("LoadConfig: missing --kubeconfig file does not fall through", "[unit][config]") {
  TempDir dir;
  ConfigSources s;
  s.kubeconfig_flag = dir.path() + "/nope";
  s.service_host = "10.0.0.1";
  s.service_port = "443";
  Result<Config> r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("--kubeconfig") && Catch::Contains("nope"));
}

TEST_CASE("LoadConfig: $KUBECONFIG merges its files, skipping missing ones and empty entries",
          "[unit][config]") {
  TempDir dir;
  // a/config sets current-context and the user, with a token file relative to
  // a/; b/config holds the cluster, with a CA relative to b/.
  dir.Write("a/token", "tok-a\n");
  dir.Write("b/ca.crt", kCaPem);
  const std::string a =
      dir.Write("a/config",
                "current-context: main\n"
                "users:\n- name: u1\n  user:\n    tokenFile: token\n"
                "contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n");
  const std::string b = dir.Write("b/config", "clusters:\n- name: c1\n  cluster:\n" + kServer +
                                                  "    certificate-authority: ca.crt\n");
  ConfigSources s;
  s.kubeconfig_env = dir.path() + "/gone::" + a + "::" + b + ":";
  Result<Config> r = LoadConfig(s);
  REQUIRE(r.ok());
  CHECK(r->server == "https://10.0.0.1:6443");
  CHECK(r->token == "tok-a");
  CHECK(r->token_file == dir.path() + "/a/token");
  CHECK(r->ca_pem == kCaPem);
  CHECK_THAT(r->source, Catch::Contains(a + ":" + b) && Catch::Contains("context main") &&
                            Catch::Contains("cluster from " + b));

  // One existing file: as before, named alone.
  s.kubeconfig_env = dir.path() + "/gone:" + a;
  r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "$KUBECONFIG " + a + ": cluster \"c1\" does not exist");

  // All missing: the error of an unusable $KUBECONFIG, not a fall-through.
  s.kubeconfig_env = dir.path() + "/gone:" + dir.path() + "/c";
  s.home = dir.path();
  dir.Write(".kube/config", Kubeconfig(kServer, "    token: home\n"));
  Result<Config> none = LoadConfig(s);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "$KUBECONFIG (" + s.kubeconfig_env + ") names no existing file");
}

TEST_CASE("LoadConfig: a $KUBECONFIG file that exists but is unusable is an error naming it",
          "[unit][config]") {
  TempDir dir;
  const std::string good = dir.Write("good", Kubeconfig(kServer, "    token: t\n"));
  const std::string broken = dir.Write("broken", "clusters: [unclosed\n");
  ConfigSources s;
  s.kubeconfig_env = good + ":" + broken;  // broken is never needed, and still refused
  Result<Config> r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::StartsWith("$KUBECONFIG " + good + ":" + broken + ": " + broken + ": ") &&
                 Catch::Contains("not valid YAML"));

  fs::create_directories(dir.path() + "/a-directory");
  s.kubeconfig_env = good + ":" + dir.path() + "/a-directory";
  r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::Contains("$KUBECONFIG") && Catch::Contains(dir.path() + "/a-directory"));
}

TEST_CASE("LoadConfig: --kubeconfig FILE is that file only, whatever $KUBECONFIG lists",
          "[unit][config]") {
  TempDir dir;
  const std::string flag = dir.Write("flag", Kubeconfig(kServer, "    token: t\n"));
  const std::string env = dir.Write("env", TwoContexts());
  ConfigSources s;
  s.kubeconfig_flag = flag;
  s.kubeconfig_env = env;
  s.context = "lab";  // only in the $KUBECONFIG file
  Result<Config> r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "--kubeconfig " + flag + ": context \"lab\" does not exist");
}

TEST_CASE("LoadConfig: in-cluster service account", "[unit][config]") {
  TempDir dir;
  dir.Write("sa/token", "sa-token\n");
  dir.Write("sa/ca.crt", kCaPem);
  dir.Write("sa/namespace", "wasd-system");
  ConfigSources s;
  s.service_host = "10.96.0.1";
  s.service_port = "443";
  s.service_account_dir = dir.path() + "/sa";
  s.home = dir.path();  // no .kube/config there; in-cluster comes first anyway
  Result<Config> r = LoadConfig(s);
  REQUIRE(r.ok());
  CHECK(r->server == "https://10.96.0.1:443");
  CHECK(r->token == "sa-token");
  CHECK(r->token_file == dir.path() + "/sa/token");
  CHECK(r->ca_pem == kCaPem);
  CHECK(r->namespace_ == "wasd-system");
  CHECK_THAT(r->source, Catch::Contains("in-cluster"));

  fs::remove(dir.path() + "/sa/token");
  Result<Config> no_token = LoadConfig(s);
  REQUIRE_FALSE(no_token.ok());
  CHECK_THAT(no_token.status().message(),
             Catch::Contains("in-cluster") && Catch::Contains("token"));
}

TEST_CASE("LoadConfig: ~/.kube/config last; nothing at all is an error listing the sources",
          "[unit][config]") {
  TempDir dir;
  ConfigSources s;
  s.home = dir.path();
  Result<Config> none = LoadConfig(s);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.status().message(), Catch::Contains("--kubeconfig") &&
                                          Catch::Contains("$KUBECONFIG") &&
                                          Catch::Contains("~/.kube/config"));
  dir.Write(".kube/config", Kubeconfig(kServer, "    token: home\n"));
  Result<Config> r = LoadConfig(s);
  REQUIRE(r.ok());
  CHECK(r->token == "home");
}

}  // namespace
TEST_CASE("LoadConfig: an unknown --context names the kubeconfig file; in-cluster refuses it",
          "[unit][config]") {
  TempDir dir;
  const std::string kc = dir.Write("config", TwoContexts());
  ConfigSources s;
  s.kubeconfig_flag = kc;
  s.context = "staging";
  Result<Config> r = LoadConfig(s);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Catch::Contains(kc) && Catch::Contains("context \"staging\" does not exist"));
  s.context = "lab";
  s.user = "u1";
  r = LoadConfig(s);
  REQUIRE(r.ok());
  CHECK(r->server == "https://10.0.0.2:6443");
  CHECK(r->token == "token-1");
  CHECK_THAT(r->source, Catch::Contains("context lab") && Catch::Contains("user u1"));

  ConfigSources in_cluster;
  in_cluster.service_host = "10.96.0.1";
  in_cluster.service_port = "443";
  in_cluster.service_account_dir = dir.path();
  in_cluster.context = "lab";
  r = LoadConfig(in_cluster);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("--context"));
}

}  // namespace wasd::kube

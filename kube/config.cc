// LoadConfig and SourcesFromEnvironment: the file-reading half of config
// loading (the parsing is in kubeconfig.cc).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kube/config.h"
#include "runtime/file_util.h"

namespace wasd::kube {
namespace {

// A kubeconfig with many clusters and embedded certificates is tens of KiB;
// 16 MiB refuses a wrong file (a log, a binary) without reading it all.
constexpr std::size_t kMaxKubeconfigBytes = std::size_t{16} * 1024 * 1024;
// CA bundles (a full system bundle is ~200 KiB), certificates, keys.
constexpr std::size_t kMaxPemBytes = std::size_t{4} * 1024 * 1024;
// Service-account tokens are ~1 KiB JWTs; 64 KiB is far beyond any real one.
constexpr std::size_t kMaxTokenBytes = std::size_t{64} * 1024;

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

Status Invalid(const std::string& why) {
  return Status::Error(Status::Kind::kInvalidArgument, why);
}

Result<Config> LoadKubeconfigFile(const std::string& path, const KubeconfigSelection& selection,
                                  const std::string& origin) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  const std::string file = ec ? path : abs.lexically_normal().string();
  Result<std::string> text = runtime::ReadSmallFile(file, kMaxKubeconfigBytes);
  if (!text.ok()) return Invalid(origin + ": " + text.status().message());
  const std::string dir = std::filesystem::path(file).parent_path().string();
  Result<ParsedKubeconfig> parsed = ParseKubeconfig(*text, dir, selection);
  if (!parsed.ok()) {
    // "--kubeconfig FILE: context "x" does not exist": the origin already
    // says it is a kubeconfig.
    std::string_view why = parsed.status().message();
    if (why.rfind("kubeconfig: ", 0) == 0) why.remove_prefix(12);
    return Invalid(origin + " " + file + ": " + std::string(why));
  }
  ParsedKubeconfig p = std::move(parsed).value();
  struct FileField {
    const std::string& path;
    std::string& out;
    const char* what;
  };
  for (const FileField& f :
       {FileField{p.files.certificate_authority, p.config.ca_pem, "certificate-authority"},
        FileField{p.files.client_certificate, p.config.client_cert_pem, "client-certificate"},
        FileField{p.files.client_key, p.config.client_key_pem, "client-key"}}) {
    if (f.path.empty()) continue;
    Result<std::string> data = runtime::ReadSmallFile(f.path, kMaxPemBytes);
    if (!data.ok()) {
      std::string why = origin;
      why.append(" ").append(file).append(": ").append(f.what).append(": ");
      return Invalid(why.append(data.status().message()));
    }
    f.out = std::move(data).value();
  }
  if (!p.config.token_file.empty()) {
    Result<std::string> token = runtime::ReadSmallFile(p.config.token_file, kMaxTokenBytes);
    if (!token.ok())
      return Invalid(origin + " " + file + ": tokenFile: " + token.status().message());
    p.config.token = Trim(*token);
  }
  std::string used = p.context.empty() ? "no context" : "context " + p.context;
  if (!selection.cluster.empty()) used += ", cluster " + p.cluster;
  if (!selection.user.empty()) used += ", user " + p.user;
  p.config.source = "kubeconfig " + file + " (" + used + ")";
  return p.config;
}

Result<Config> LoadInCluster(const ConfigSources& s) {
  Config c;
  c.server = InClusterServer(s.service_host, s.service_port);
  const std::string dir = s.service_account_dir;
  c.token_file = dir + "/token";
  Result<std::string> token = runtime::ReadSmallFile(c.token_file, kMaxTokenBytes);
  if (!token.ok()) return Invalid("in-cluster config: " + token.status().message());
  c.token = Trim(*token);
  Result<std::string> ca = runtime::ReadSmallFile(dir + "/ca.crt", kMaxPemBytes);
  if (!ca.ok()) return Invalid("in-cluster config: " + ca.status().message());
  c.ca_pem = std::move(ca).value();
  if (runtime::RegularFileExists(dir + "/namespace")) {
    Result<std::string> ns = runtime::ReadSmallFile(dir + "/namespace", kMaxTokenBytes);
    if (ns.ok() && !Trim(*ns).empty()) c.namespace_ = Trim(*ns);
  }
  c.source = "in-cluster (" + c.server + ")";
  return c;
}

}  // namespace

ConfigSources SourcesFromEnvironment(std::string kubeconfig_flag, std::string context) {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  ConfigSources s;
  s.kubeconfig_flag = std::move(kubeconfig_flag);
  s.context = std::move(context);
  s.kubeconfig_env = env("KUBECONFIG");
  s.home = env("HOME");
  s.service_host = env("KUBERNETES_SERVICE_HOST");
  s.service_port = env("KUBERNETES_SERVICE_PORT");
  return s;
}

Result<Config> LoadConfig(const ConfigSources& s) {
  const KubeconfigSelection selection{s.context, s.cluster, s.user};
  if (!s.kubeconfig_flag.empty())
    return LoadKubeconfigFile(s.kubeconfig_flag, selection, "--kubeconfig");
  if (!s.kubeconfig_env.empty()) {
    std::string list = s.kubeconfig_env;
    std::size_t start = 0;
    while (start <= list.size()) {
      const auto colon = list.find(':', start);
      const std::string item =
          list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!item.empty() && runtime::RegularFileExists(item))
        return LoadKubeconfigFile(item, selection, "$KUBECONFIG");
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    return Invalid("$KUBECONFIG (" + s.kubeconfig_env + ") names no existing file");
  }
  if (!s.service_host.empty() && !s.service_port.empty()) {
    // In a pod there is no kubeconfig whose entries --context, --cluster
    // or --user could name: refuse rather than ignore them.
    if (!selection.context.empty() || !selection.cluster.empty() || !selection.user.empty()) {
      return Invalid(
          "--context, --cluster and --user name kubeconfig entries, but no kubeconfig was found "
          "(no --kubeconfig, $KUBECONFIG unset) and the in-cluster config has none");
    }
    return LoadInCluster(s);
  }
  if (!s.home.empty()) {
    const std::string home_config = s.home + "/.kube/config";
    if (runtime::RegularFileExists(home_config))
      return LoadKubeconfigFile(home_config, selection, "~/.kube/config");
  }
  return Invalid(
      "no Kubernetes configuration: no --kubeconfig, $KUBECONFIG unset, not in a cluster "
      "($KUBERNETES_SERVICE_HOST/PORT unset) and no ~/.kube/config");
}

}  // namespace wasd::kube

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

// Reads the kubeconfig files `paths` (already without missing ones) and
// merges them (MergeKubeconfigs). `origin` says where the list came from
// ("--kubeconfig", "$KUBECONFIG"); errors name the file concerned.
Result<Config> LoadKubeconfigFiles(const std::vector<std::string>& paths,
                                   const KubeconfigSelection& selection,
                                   const std::string& origin) {
  std::vector<KubeconfigDocument> docs;
  docs.reserve(paths.size());
  for (const std::string& path : paths) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(path, ec);
    const std::string file = ec ? path : abs.lexically_normal().string();
    Result<std::string> text = runtime::ReadSmallFile(file, kMaxKubeconfigBytes);
    if (!text.ok()) return Invalid(origin + ": " + text.status().message());
    docs.push_back(KubeconfigDocument{file, std::move(text).value(),
                                      std::filesystem::path(file).parent_path().string()});
  }
  // The name used in messages: the file, or the merged list.
  std::string file;
  for (const KubeconfigDocument& d : docs) file += (file.empty() ? "" : ":") + d.path;
  Result<ParsedKubeconfig> parsed = MergeKubeconfigs(docs, selection);
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
  if (docs.size() > 1) used += ", cluster from " + p.cluster_file;
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
    return LoadKubeconfigFiles({s.kubeconfig_flag}, selection, "--kubeconfig");
  if (!s.kubeconfig_env.empty()) {
    // kubectl's rules: list order, empty entries ignored, missing files
    // skipped; a file that exists but cannot be read is an error.
    std::vector<std::string> files;
    std::size_t start = 0;
    while (start <= s.kubeconfig_env.size()) {
      const auto colon = s.kubeconfig_env.find(':', start);
      const std::string item = s.kubeconfig_env.substr(
          start, colon == std::string::npos ? std::string::npos : colon - start);
      std::error_code ec;
      if (!item.empty() && std::filesystem::exists(item, ec)) files.push_back(item);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (files.empty())
      return Invalid("$KUBECONFIG (" + s.kubeconfig_env + ") names no existing file");
    return LoadKubeconfigFiles(files, selection, "$KUBECONFIG");
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
      return LoadKubeconfigFiles({home_config}, selection, "~/.kube/config");
  }
  return Invalid(
      "no Kubernetes configuration: no --kubeconfig, $KUBECONFIG unset, not in a cluster "
      "($KUBERNETES_SERVICE_HOST/PORT unset) and no ~/.kube/config");
}

}  // namespace wasd::kube

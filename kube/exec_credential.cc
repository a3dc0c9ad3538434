#include "kube/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/time.h"

extern char** environ;  // NOLINT: POSIX

namespace wasd::kube {

namespace {

using nlohmann::json;

Status Bad(const std::string& message) {
  return Status::Error(Status::Kind::kInvalidArgument, "exec credential plugin: " + message);
}

std::string ExecInfo(const ExecConfig& config, const std::string& server,
                     const std::string& ca_pem) {
  json info = {{"apiVersion", config.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  if (config.provide_cluster_info) {
    json cluster = {{"server", server}};
    // certificate-authority-data is []byte in client-go: base64 in JSON.
    if (!ca_pem.empty()) cluster["certificate-authority-data"] = base::Base64Encode(ca_pem);
    info["spec"]["cluster"] = std::move(cluster);
  }
  return info.dump();
}

}  // namespace

Result<ExecCredential> ParseExecCredential(std::string_view output, std::string_view api_version) {
  const json doc = json::parse(output.begin(), output.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Bad("its output is not a JSON object");
  const auto kind = doc.find("kind");
  if (kind == doc.end() || *kind != "ExecCredential")
    return Bad("its output is not an ExecCredential");
  const auto version = doc.find("apiVersion");
  if (version == doc.end() || !version->is_string() || *version != api_version) {
    return Bad("its output has apiVersion " +
               (version == doc.end() ? std::string("(none)") : version->dump()) + ", not the " +
               std::string(api_version) + " the kubeconfig asks for");
  }
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) return Bad("its output has no status");
  if (status->contains("clientCertificateData") || status->contains("clientKeyData")) {
    return Bad("it returned a client certificate; wasd accepts only a token from a plugin");
  }
  const auto token = status->find("token");
  if (token == status->end() || !token->is_string() || token->get<std::string>().empty()) {
    return Bad("its output has no status.token");
  }
  ExecCredential cred;
  cred.token = token->get<std::string>();
  const auto expiry = status->find("expirationTimestamp");
  if (expiry != status->end() && !expiry->is_null()) {
    const std::optional<std::chrono::system_clock::time_point> t =
        expiry->is_string() ? base::ParseRfc3339(expiry->get<std::string>()) : std::nullopt;
    if (!t) {
      return Bad("status.expirationTimestamp " + expiry->dump() + " is not an RFC 3339 time");
    }
    cred.expiration = *t;
  }
  return cred;
}

ExecTokenSource::ExecTokenSource(ExecConfig config, std::string server, std::string ca_pem)
    : config_(std::move(config)), server_(std::move(server)), ca_pem_(std::move(ca_pem)) {}

Result<std::string> ExecTokenSource::Token() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::system_clock::now();
  if (cached_ && (!cached_->expiration || *cached_->expiration - kExpiryMargin > now)) {
    return cached_->token;
  }
  Result<ExecCredential> fresh = Run();
  ++runs_;
  if (!fresh.ok()) return fresh.status();
  cached_ = fresh.value();
  return cached_->token;
}

void ExecTokenSource::Invalidate() {
  std::lock_guard lock(mu_);
  cached_.reset();
}

int ExecTokenSource::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

namespace {

enum class ReadEnd { kDone, kTimedOut, kTooBig };

// Reads the plugin's stdout from `fd` into `output` until it ends, for at
// most kExecTimeout and kMaxExecOutputBytes.
ReadEnd ReadBounded(int fd, std::string* output) {
  const auto deadline = std::chrono::steady_clock::now() + kExecTimeout;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return ReadEnd::kTimedOut;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      return ready == 0 ? ReadEnd::kTimedOut : ReadEnd::kDone;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadEnd::kDone;
    if (output->size() + static_cast<std::size_t>(n) > kMaxExecOutputBytes) {
      return ReadEnd::kTooBig;
    }
    output->append(buf, static_cast<std::size_t>(n));
  }
}

// The plugin's environment: ours, less what the config overrides and
// KUBERNETES_EXEC_INFO, plus the config's and ExecInfo.
std::vector<std::string> ExecEnvironment(const ExecConfig& config, const std::string& server,
                                         const std::string& ca_pem) {
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = name == "KUBERNETES_EXEC_INFO";
    for (const auto& [n, v] : config.env) overridden = overridden || name == n;
    if (!overridden) env_strings.emplace_back(entry);
  }
  for (const auto& [n, v] : config.env) env_strings.push_back(std::string(n).append("=").append(v));
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + ExecInfo(config, server, ca_pem));
  return env_strings;
}

}  // namespace

Result<ExecCredential> ExecTokenSource::Run() const {
  std::vector<std::string> env_strings = ExecEnvironment(config_, server_, ca_pem_);
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{config_.command};
  argv_strings.insert(argv_strings.end(), config_.args.begin(), config_.args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Bad(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, config_.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    std::string message = "cannot run \"" + config_.command + "\": " + std::strerror(rc);
    if (!config_.install_hint.empty()) message += "\n" + config_.install_hint;
    return Bad(message);
  }

  std::string output;
  const ReadEnd end = ReadBounded(out[0], &output);
  const bool timed_out = end == ReadEnd::kTimedOut;
  const bool too_big = end == ReadEnd::kTooBig;
  close(out[0]);
  if (timed_out || too_big) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return Bad("\"" + config_.command + "\" did not finish within 60 s");
  if (too_big) return Bad("\"" + config_.command + "\" wrote more than 1 MiB");
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::string how = WIFEXITED(wstatus)
                          ? "exited with status " + std::to_string(WEXITSTATUS(wstatus))
                          : "was killed by signal " + std::to_string(WTERMSIG(wstatus));
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127 && !config_.install_hint.empty()) {
      how += "\n" + config_.install_hint;
    }
    return Bad("\"" + config_.command + "\" " + how);
  }
  return ParseExecCredential(output, config_.api_version);
}

}  // namespace wasd::kube

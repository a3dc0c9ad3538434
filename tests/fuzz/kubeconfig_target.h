// Fuzz target kubeconfig: arbitrary bytes as kubeconfig YAML text, parsed by
// kube::ParseKubeconfig with the file's current-context and again with an
// explicit context named by the input's first line when it starts with
// "#context:" (so the corpus can aim at a non-current context).
//
// Invariants: nothing throws; a failure is kInvalidArgument with a message
// starting "kubeconfig: "; a success has a server, the context used, a
// non-empty namespace, client certificate and key together or neither,
// insecure-skip-tls-verify never combined with a CA, and every file path it
// names resolved to an absolute path under the base directory (or given
// absolute).
//
// Header-only so that the libFuzzer entry (kubeconfig_fuzz.cc) and the Catch2
// corpus replay (tests/kube/fuzz_replay_test.cc) share one body.
// Thread-safe (no state).
#ifndef WASD_TESTS_FUZZ_KUBECONFIG_TARGET_H_
#define WASD_TESTS_FUZZ_KUBECONFIG_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kube/config.h"
#include "tests/fuzz/check.h"

namespace wasd::fuzz {

namespace kubeconfig_detail {

constexpr std::string_view kBaseDir = "/etc/wasd/kube";

inline void CheckPath(const std::string& path) {
  FUZZ_CHECK(path.empty() || path.front() == '/', path);
}

inline void CheckParse(std::string_view text, std::string_view context) {
  const base::Result<kube::ParsedKubeconfig> r = kube::ParseKubeconfig(text, kBaseDir, context);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().kind() == base::Status::Kind::kInvalidArgument, r.status().ToString());
    FUZZ_CHECK(r.status().message().rfind("kubeconfig: ", 0) == 0, r.status().message());
    return;
  }
  const kube::Config& c = r->config;
  FUZZ_CHECK(!c.server.empty(), "");
  FUZZ_CHECK(!r->context.empty(), "");
  if (!context.empty()) FUZZ_CHECK(r->context == context, r->context);
  FUZZ_CHECK(!c.namespace_.empty(), "");
  const bool cert = !c.client_cert_pem.empty() || !r->files.client_certificate.empty();
  const bool key = !c.client_key_pem.empty() || !r->files.client_key.empty();
  FUZZ_CHECK(cert == key, "");
  FUZZ_CHECK(
      !c.insecure_skip_tls_verify || (c.ca_pem.empty() && r->files.certificate_authority.empty()),
      "");
  CheckPath(r->files.certificate_authority);
  CheckPath(r->files.client_certificate);
  CheckPath(r->files.client_key);
  CheckPath(c.token_file);
}

}  // namespace kubeconfig_detail

inline int KubeconfigOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kubeconfig_detail::CheckParse(text, {});
  constexpr std::string_view kMarker = "#context:";
  if (text.substr(0, kMarker.size()) == kMarker) {
    std::string_view context = text.substr(kMarker.size());
    context = context.substr(0, context.find('\n'));
    if (!context.empty()) kubeconfig_detail::CheckParse(text, context);
  }
  return 0;
}

}  // namespace wasd::fuzz

#endif  // WASD_TESTS_FUZZ_KUBECONFIG_TARGET_H_

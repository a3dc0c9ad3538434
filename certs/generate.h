// `wasd certs generate` as a library call: makes (or reuses) a CA and signs a
// serving certificate for a Service, writing ca.crt, ca.key, tls.crt and
// tls.key into a directory. Each file is replaced atomically; keys are 0600.
//
// Ownership: the directory's `.wasd-certs.json` records the SHA-256 of every
// file this code wrote. A file that exists but is not recorded with its
// current content was supplied by someone else (a user, cert-manager) and is
// never replaced unless `force` is set. An existing, usable CA pair is always
// reused to sign the new leaf, so a caBundle that is already injected stays
// valid; only a missing (or, with `force`, unusable) CA is made anew.
//
// Thread-safety: not safe to run concurrently on the same directory.
#ifndef WASD_CERTS_GENERATE_H_
#define WASD_CERTS_GENERATE_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "certs/issuer.h"

namespace wasd::certs {

using base::Result;
using base::Status;

inline constexpr char kCaCertFile[] = "ca.crt";
inline constexpr char kCaKeyFile[] = "ca.key";
inline constexpr char kTlsCertFile[] = "tls.crt";
inline constexpr char kTlsKeyFile[] = "tls.key";
inline constexpr char kOwnershipFile[] = ".wasd-certs.json";

struct GenerateOptions {
  std::string service;
  std::string ns;
  std::string out_dir;
  std::vector<std::string> extra_sans;  // DNS names or IP addresses
  KeyType key_type = KeyType::kEcdsaP256;
  int leaf_days = 365;
  int ca_days = 3650;
  bool force = false;
  SystemTime now;
};

struct GenerateResult {
  bool ca_created = false;  // false: an existing CA signed the leaf
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
};

// Runs the whole generate step. Fails (writing nothing) on invalid options,
// on a foreign file in the way without `force`, on a CA that is unusable
// (broken, mismatched, not a CA, expired) without `force`, and on I/O errors.
Status GenerateToDirectory(const GenerateOptions& options, GenerateResult* result);

// The names a serving certificate for `options` gets (the Service's four DNS
// forms, then the extras). Fails on an invalid extra or Service name.
Status CollectSans(const GenerateOptions& options, std::vector<std::string>* dns,
                   std::vector<std::string>* ips);

}  // namespace wasd::certs

#endif  // WASD_CERTS_GENERATE_H_

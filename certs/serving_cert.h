// The webhook's serving certificate: a PEM certificate chain and private key
// (plus, optionally, a CA that client certificates must chain to) loaded
// into a ready-to-use OpenSSL server context, and a reloader that notices
// when the files change on disk and swaps in a fresh context.
//
// TLS policy of every context made here: TLS 1.2 minimum; TLS 1.2 suites are
// ECDHE with AES-GCM or ChaCha20-Poly1305 only (forward secrecy, AEAD);
// TLS 1.3 suites AES-GCM and ChaCha20; no compression, no renegotiation;
// server-side session cache and session tickets so the API server's
// reconnects resume instead of paying a full handshake.
//
// Reload: only new connections get the new context; established ones keep
// the one they started with (each holds a reference). A new pair that does
// not load (unparseable PEM, key not matching the certificate, unreadable
// file) is refused and the previous pair stays in use; the same broken file
// state is not retried until the files change again.
//
// Thread-safety: ServingCert is immutable. ServingCertReloader::Current() may
// be called from any thread; Poll() must not run concurrently with itself or
// LoadInitial() (the server calls it from one timer).
#ifndef WASD_CERTS_SERVING_CERT_H_
#define WASD_CERTS_SERVING_CERT_H_

#include <openssl/ssl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"

namespace wasd::certs {

using base::Result;
using base::Status;

struct ServingCertFiles {
  std::string cert_file;       // PEM: the leaf first, then intermediates
  std::string key_file;        // PEM private key of the leaf
  std::string client_ca_file;  // optional PEM CA bundle for client certificates
};

struct ServingCertPem;  // below

// PEM files larger than this are refused: a certificate chain is a few KiB;
// a mistaken path to a huge file must not be read into memory.
inline constexpr std::size_t kMaxPemFileBytes = std::size_t{1024} * 1024;

class ServingCert {
 public:
  ~ServingCert();
  ServingCert(const ServingCert&) = delete;
  ServingCert& operator=(const ServingCert&) = delete;

  // The configured context. Owned by this object; callers that need it past
  // this object's lifetime take their own reference (SSL_CTX_up_ref).
  SSL_CTX* ssl_ctx() const { return ctx_; }
  std::int64_t not_after_unix() const { return not_after_unix_; }  // leaf notAfter
  const std::string& serial_hex() const { return serial_hex_; }    // leaf serial, upper-case hex
  const std::string& subject() const { return subject_; }          // leaf subject, one line

 private:
  friend Result<std::shared_ptr<const ServingCert>> ServingCertFromPem(const ServingCertPem& pem);
  ServingCert() = default;

  SSL_CTX* ctx_ = nullptr;
  std::int64_t not_after_unix_ = 0;
  std::string serial_hex_;
  std::string subject_;
};

// A pair already in memory (a self-signed one made at start); the names
// stand for the files in error messages.
struct ServingCertPem {
  std::string cert_name = "certificate";
  std::string cert_pem;
  std::string key_name = "private key";
  std::string key_pem;
  std::string client_ca_name = "client CA";
  std::string client_ca_pem;  // empty: no client certificates asked for
};
Result<std::shared_ptr<const ServingCert>> ServingCertFromPem(const ServingCertPem& pem);

// Reads the files and builds a context. Fails with one line naming the file
// and the reason when anything does not load.
Result<std::shared_ptr<const ServingCert>> LoadServingCert(const ServingCertFiles& files);

// Identity of the files' current contents as far as stat(2) can tell:
// device, inode, size and modification time of each (following symlinks,
// so a Kubernetes Secret volume's "..data" swap counts as a change).
struct FilesStamp {
  struct One {
    std::uint64_t dev = 0, ino = 0, size = 0;
    std::int64_t mtime_ns = 0;
    bool exists = false;
    bool operator==(const One&) const = default;
  };
  std::array<One, 3> files;  // cert, key, client CA
  bool operator==(const FilesStamp&) const = default;
};

FilesStamp StampFiles(const ServingCertFiles& files);

class ServingCertReloader {
 public:
  enum class PollResult { kUnchanged, kReloaded, kRejected };

  explicit ServingCertReloader(ServingCertFiles files) : files_(std::move(files)) {}

  // Loads the first pair. Fails when it does not load; the server must not
  // start without a certificate.
  Status LoadInitial();

  // Checks the files; when they changed since the last attempt, tries to
  // load them. kReloaded: Current() now returns the new pair. kRejected: the
  // new files did not load (*why says why) and the old pair stays.
  PollResult Poll(Status* why);

  // The pair new connections should use; null only before LoadInitial().
  std::shared_ptr<const ServingCert> Current() const;

  const ServingCertFiles& files() const { return files_; }

 private:
  const ServingCertFiles files_;
  FilesStamp last_attempt_;  // stamp of the files at the last load attempt
  mutable std::mutex mu_;    // guards current_
  std::shared_ptr<const ServingCert> current_;
};

}  // namespace wasd::certs

#endif  // WASD_CERTS_SERVING_CERT_H_

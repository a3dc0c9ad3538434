#include "certs/serving_cert.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "runtime/file_util.h"

namespace wasd::certs {
namespace {

// TLS 1.2 suites: ECDHE key exchange (forward secrecy) with an AEAD cipher.
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr char kTls13Suites[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr char kGroups[] = "X25519:P-256:P-384";
// Sessions kept for resumption. The clients are a few API server instances
// holding a handful of keep-alive connections each; 4096 is ample and
// bounds memory (~1 KiB per session).
constexpr long kSessionCacheSize = 4096;
// How long a session stays resumable. Reconnects after an idle close (120 s)
// fall well inside; a longer life only widens the window a stolen ticket
// key could be used.
constexpr long kSessionTimeoutSeconds = 600;
// Client certificate chains deeper than this are refused (a CA, at most a
// couple of intermediates, the leaf).
constexpr int kClientVerifyDepth = 4;
constexpr unsigned char kSessionIdContext[] = "wasd-webhook";
constexpr std::size_t kTls13TicketsPerHandshake = 1;

struct BioFree {
  void operator()(BIO* b) const { BIO_free_all(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// `what` plus the thread's queued OpenSSL errors; clears the queue.
std::string SslError(const std::string& what) {
  std::string out = what;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += out == what ? ": " : "; ";
    out += buf;
  }
  return out;
}

// A callback that supplies no passphrase: an encrypted key fails to load
// instead of OpenSSL prompting on a terminal.
int NoPassphrase(char*, int, int, void*) { return 0; }

bool ReadPemFile(const std::string& path, std::string* out, std::string* error) {
  base::Result<std::string> data = runtime::ReadSmallFile(path, kMaxPemFileBytes);
  if (!data.ok()) {
    *error = data.status().message();
    return false;
  }
  if (data->empty()) {
    *error = path + " is empty";
    return false;
  }
  *out = std::move(data).value();
  return true;
}

BioPtr MemBio(const std::string& data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

bool ConfigurePolicy(SSL_CTX* ctx, std::string* error) {
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1 ||
      SSL_CTX_set_ciphersuites(ctx, kTls13Suites) != 1 ||
      SSL_CTX_set1_groups_list(ctx, kGroups) != 1) {
    *error = SslError("configuring TLS policy");
    return false;
  }
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
  SSL_CTX_sess_set_cache_size(ctx, kSessionCacheSize);
  SSL_CTX_set_timeout(ctx, kSessionTimeoutSeconds);
  // Required for resumption once client certificates are verified.
  SSL_CTX_set_session_id_context(ctx, kSessionIdContext, sizeof kSessionIdContext - 1);
  // TLS 1.3: one session ticket per handshake, not OpenSSL's default two. A
  // reconnecting client resumes with one; each ticket costs an encryption
  // and a record on every new connection, resumed or not.
  SSL_CTX_set_num_tickets(ctx, kTls13TicketsPerHandshake);
  return true;
}

// Leaf first, then any intermediates.
bool UseCertificateChain(SSL_CTX* ctx, const std::string& path, const std::string& pem,
                         X509Ptr* leaf, std::string* error) {
  BioPtr bio = MemBio(pem);
  leaf->reset(PEM_read_bio_X509_AUX(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!*leaf) {
    *error = SslError(path + ": no PEM certificate");
    return false;
  }
  if (SSL_CTX_use_certificate(ctx, leaf->get()) != 1) {
    *error = SslError(path + ": certificate not usable");
    return false;
  }
  while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {  // takes ownership on success
      X509_free(extra);
      *error = SslError(path + ": intermediate certificate not usable");
      return false;
    }
  }
  ERR_clear_error();  // the end of the PEM data reads as "no start line"
  return true;
}

bool UsePrivateKey(SSL_CTX* ctx, const std::string& path, const std::string& pem,
                   std::string* error) {
  BioPtr bio = MemBio(pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (!key) {
    *error = SslError(path + ": no usable PEM private key");
    return false;
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    *error = SslError(path + ": private key does not match the certificate");
    return false;
  }
  return true;
}

bool RequireClientCertificates(SSL_CTX* ctx, const std::string& path, const std::string& pem,
                               std::string* error) {
  BioPtr bio = MemBio(pem);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  int count = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    X509Ptr owned(ca);
    if (X509_STORE_add_cert(store, ca) != 1 || SSL_CTX_add_client_CA(ctx, ca) != 1) {
      *error = SslError(path + ": CA certificate not usable");
      return false;
    }
    ++count;
  }
  ERR_clear_error();
  if (count == 0) {
    *error = path + ": no PEM certificate";
    return false;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_verify_depth(ctx, kClientVerifyDepth);
  return true;
}

std::string SerialHex(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  if (bn == nullptr) return {};
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

std::string SubjectLine(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) < 0) {
    return {};
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

FilesStamp::One StampOne(const std::string& path) {
  FilesStamp::One one;
  if (path.empty()) return one;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return one;
  one.exists = true;
  one.dev = static_cast<std::uint64_t>(st.st_dev);
  one.ino = static_cast<std::uint64_t>(st.st_ino);
  one.size = static_cast<std::uint64_t>(st.st_size);
  one.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return one;
}

}  // namespace

ServingCert::~ServingCert() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

Result<std::shared_ptr<const ServingCert>> ServingCertFromPem(const ServingCertPem& pem) {
  std::string error_text;
  std::string* error = &error_text;

  ERR_clear_error();
  std::shared_ptr<ServingCert> cert(new ServingCert());
  cert->ctx_ = SSL_CTX_new(TLS_server_method());
  if (cert->ctx_ == nullptr) {
    *error = SslError("creating a TLS context");
    return Status::Error(error_text);
  }
  SSL_CTX* ctx = cert->ctx_;
  X509Ptr leaf;
  if (!ConfigurePolicy(ctx, error) ||
      !UseCertificateChain(ctx, pem.cert_name, pem.cert_pem, &leaf, error) ||
      !UsePrivateKey(ctx, pem.key_name, pem.key_pem, error)) {
    return Status::Error(error_text);
  }
  if (!pem.client_ca_pem.empty() &&
      !RequireClientCertificates(ctx, pem.client_ca_name, pem.client_ca_pem, error)) {
    return Status::Error(error_text);
  }

  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(leaf.get()), &tm) != 1) {
    *error = SslError(pem.cert_name + ": unreadable notAfter");
    return Status::Error(error_text);
  }
  cert->not_after_unix_ = static_cast<std::int64_t>(timegm(&tm));
  cert->serial_hex_ = SerialHex(leaf.get());
  cert->subject_ = SubjectLine(leaf.get());
  return std::shared_ptr<const ServingCert>(std::move(cert));
}

Result<std::shared_ptr<const ServingCert>> LoadServingCert(const ServingCertFiles& files) {
  std::string error_text;
  ServingCertPem pem;
  pem.cert_name = files.cert_file;
  pem.key_name = files.key_file;
  pem.client_ca_name = files.client_ca_file;
  if (!ReadPemFile(files.cert_file, &pem.cert_pem, &error_text) ||
      !ReadPemFile(files.key_file, &pem.key_pem, &error_text)) {
    return Status::Error(error_text);
  }
  if (!files.client_ca_file.empty() &&
      !ReadPemFile(files.client_ca_file, &pem.client_ca_pem, &error_text)) {
    return Status::Error(error_text);
  }
  return ServingCertFromPem(pem);
}

FilesStamp StampFiles(const ServingCertFiles& files) {
  FilesStamp stamp;
  stamp.files[0] = StampOne(files.cert_file);
  stamp.files[1] = StampOne(files.key_file);
  stamp.files[2] = StampOne(files.client_ca_file);
  return stamp;
}

Status ServingCertReloader::LoadInitial() {
  last_attempt_ = StampFiles(files_);
  Result<std::shared_ptr<const ServingCert>> cert = LoadServingCert(files_);
  if (!cert.ok()) return cert.status();
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(cert).value();
  return Status::Ok();
}

ServingCertReloader::PollResult ServingCertReloader::Poll(Status* why) {
  // Stamp before reading: a write that lands during the load changes the
  // files again, so the next poll retries with the finished files.
  const FilesStamp stamp = StampFiles(files_);
  if (stamp == last_attempt_) return PollResult::kUnchanged;
  last_attempt_ = stamp;
  Result<std::shared_ptr<const ServingCert>> cert = LoadServingCert(files_);
  if (!cert.ok()) {
    *why = cert.status();
    return PollResult::kRejected;
  }
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(cert).value();
  return PollResult::kReloaded;
}

std::shared_ptr<const ServingCert> ServingCertReloader::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

}  // namespace wasd::certs

// Owning handles for OpenSSL objects: std::unique_ptr with the matching free
// function, so every path (including early returns) releases what it made.
// Plus OpenSslError(), which drains the thread's OpenSSL error queue into one
// readable line. Thread-safety: the handles are plain values; the error queue
// is per thread, so OpenSslError() reports the calling thread's errors only.
#ifndef WASD_CERTS_OPENSSL_HANDLES_H_
#define WASD_CERTS_OPENSSL_HANDLES_H_

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <string_view>

namespace wasd::certs {

template <auto kFree>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* p) const noexcept {
    kFree(p);
  }
};

using PkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, OpenSslDeleter<EVP_PKEY_CTX_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509_free>>;
using X509ExtPtr = std::unique_ptr<X509_EXTENSION, OpenSslDeleter<X509_EXTENSION_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpenSslDeleter<X509_STORE_free>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpenSslDeleter<X509_STORE_CTX_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<BN_free>>;
using Asn1IntegerPtr = std::unique_ptr<ASN1_INTEGER, OpenSslDeleter<ASN1_INTEGER_free>>;
using Asn1TimePtr = std::unique_ptr<ASN1_TIME, OpenSslDeleter<ASN1_TIME_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpenSslDeleter<GENERAL_NAMES_free>>;

// Returns `what` followed by the queued OpenSSL errors (oldest first) and
// clears the queue. Never fails.
std::string OpenSslError(std::string_view what);

// Reads everything written to a memory BIO as a string.
std::string BioToString(BIO* bio);

}  // namespace wasd::certs

#endif  // WASD_CERTS_OPENSSL_HANDLES_H_

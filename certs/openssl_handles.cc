#include "certs/openssl_handles.h"

#include <openssl/err.h>

namespace wasd::certs {

std::string OpenSslError(std::string_view what) {
  std::string out(what);
  // The error queue is bounded by OpenSSL (ERR_NUM_ERRORS = 16 entries).
  unsigned long code = 0;
  bool first = true;
  while ((code = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    out += first ? ": " : "; ";
    out += buf;
    first = false;
  }
  return out;
}

std::string BioToString(BIO* bio) {
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  if (len <= 0 || data == nullptr) return {};
  return std::string(data, static_cast<std::size_t>(len));
}

}  // namespace wasd::certs

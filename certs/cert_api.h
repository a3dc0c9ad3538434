// CertApi: the few Kubernetes API calls that CA injection and certificate
// rotation make, as an interface so the logic above it is tested with an
// in-memory fake and runs for real over kube::Client (server/certs_command.cc).
// Objects are nlohmann::json values as the API server sends them.
//
// Implementations decide their own thread-safety; the certs code calls one
// instance from one thread.
#ifndef WASD_CERTS_CERT_API_H_
#define WASD_CERTS_CERT_API_H_

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace wasd::certs {

enum class WebhookKind { kMutating, kValidating };

// "mutatingwebhookconfigurations" / "validatingwebhookconfigurations".
std::string_view WebhookKindPlural(WebhookKind kind);

struct ApiReply {
  enum class Code {
    kOk,
    kNotFound,
    // The write lost a race: 409 (stale resourceVersion, AlreadyExists) or
    // 422 from a failed JSON-patch `test`. The caller re-reads and retries.
    kConflict,
    kError,  // anything else; `message` says what
  };
  Code code = Code::kOk;
  nlohmann::json object;  // the object read or written, when kOk
  std::string message;

  bool ok() const { return code == Code::kOk; }
};

class CertApi {
 public:
  virtual ~CertApi() = default;

  virtual ApiReply GetSecret(const std::string& ns, const std::string& name) = 0;
  virtual ApiReply CreateSecret(const std::string& ns, const nlohmann::json& secret) = 0;
  // PUT; the secret's metadata.resourceVersion is the precondition.
  virtual ApiReply UpdateSecret(const std::string& ns, const std::string& name,
                                const nlohmann::json& secret) = 0;
  virtual ApiReply GetWebhookConfig(WebhookKind kind, const std::string& name) = 0;
  // PATCH with an RFC 6902 JSON patch (an array of operations).
  virtual ApiReply PatchWebhookConfig(WebhookKind kind, const std::string& name,
                                      const nlohmann::json& json_patch) = 0;
};

}  // namespace wasd::certs

#endif  // WASD_CERTS_CERT_API_H_

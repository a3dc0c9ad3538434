#include "certs/tls_secret.h"

#include <algorithm>

#include "base/base64.h"
#include "certs/ca_bundle.h"

namespace wasd::certs {
namespace {

std::string DataField(const nlohmann::json& secret, const char* key) {
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return {};
  const auto value = data->find(key);
  if (value == data->end() || !value->is_string()) return {};
  std::string out;
  base::Result<std::string> decoded = base::Base64Decode(value->get_ref<const std::string&>());
  if (!decoded.ok()) return {};
  out = std::move(decoded).value();
  return out;
}

bool Contains(const std::vector<std::string>& have, const std::string& want) {
  return std::find(have.begin(), have.end(), want) != have.end();
}

// Empty when the CA pair is usable for at least renew_before; else why not.
std::string CaProblem(const CertKeyPem& ca, SystemTime now, std::chrono::seconds renew_before) {
  if (ca.cert_pem.empty() || ca.key_pem.empty()) return "ca.crt or ca.key missing";
  X509Ptr cert;
  if (!ParseCertificatePem(ca.cert_pem, &cert).ok()) return "ca.crt does not parse";
  if (!IsCa(cert.get())) return "ca.crt is not a CA";
  const Status st = CheckKeyMatchesCertificate(ca.cert_pem, ca.key_pem);
  if (!st.ok()) return "ca.key: " + st.message();
  if (NeedsRenewal(ca.cert_pem, now, renew_before)) return "CA expires within renew-before";
  return {};
}

std::string LeafProblem(const SecretPems& p, const WantedNames& wanted, SystemTime now,
                        std::chrono::seconds renew_before) {
  if (p.leaf.cert_pem.empty() || p.leaf.key_pem.empty()) return "tls.crt or tls.key missing";
  std::vector<std::string> dns;
  std::vector<std::string> ips;
  if (!CertificateSans(p.leaf.cert_pem, &dns, &ips).ok()) return "tls.crt does not parse";
  if (!CheckKeyMatchesCertificate(p.leaf.cert_pem, p.leaf.key_pem).ok()) {
    return "tls.key does not match tls.crt";
  }
  if (!VerifyChain(p.leaf.cert_pem, p.ca.cert_pem, now).ok()) {
    return "tls.crt does not verify against ca.crt";
  }
  for (const std::string& d : wanted.dns) {
    if (!Contains(dns, d)) return "tls.crt lacks DNS name " + d;
  }
  for (const std::string& ip : wanted.ips) {
    if (!Contains(ips, ip)) return "tls.crt lacks IP address " + ip;
  }
  if (NeedsRenewal(p.leaf.cert_pem, now, renew_before))
    return "tls.crt expires within renew-before";
  return {};
}

}  // namespace

SecretPems ReadSecretPems(const nlohmann::json& secret) {
  SecretPems p;
  p.ca.cert_pem = DataField(secret, "ca.crt");
  p.ca.key_pem = DataField(secret, "ca.key");
  p.leaf.cert_pem = DataField(secret, "tls.crt");
  p.leaf.key_pem = DataField(secret, "tls.key");
  return p;
}

bool IsManagedSecret(const nlohmann::json& secret) {
  const auto metadata = secret.find("metadata");
  if (metadata == secret.end() || !metadata->is_object()) return false;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return false;
  const auto mark = annotations->find(kManagedAnnotation);
  return mark != annotations->end() && mark->is_string() &&
         mark->get_ref<const std::string&>() == "true";
}

std::string_view RotationActionName(RotationAction action) {
  switch (action) {
    case RotationAction::kNone: return "none";
    case RotationAction::kCreate: return "create";
    case RotationAction::kRenewLeaf: return "renew-leaf";
    case RotationAction::kRenewCaAndLeaf: return "renew-ca-and-leaf";
    case RotationAction::kLeaveForeign: return "leave-foreign";
  }
  return "unknown";
}

RotationDecision DecideRotation(const nlohmann::json* secret, const WantedNames& wanted,
                                SystemTime now, std::chrono::seconds renew_before) {
  if (secret == nullptr) return {RotationAction::kCreate, "secret does not exist"};
  if (!IsManagedSecret(*secret)) {
    return {RotationAction::kLeaveForeign, std::string("secret lacks the annotation ") +
                                               kManagedAnnotation +
                                               ": \"true\"; not ours to write"};
  }
  const SecretPems pems = ReadSecretPems(*secret);
  std::string problem = CaProblem(pems.ca, now, renew_before);
  if (!problem.empty()) return {RotationAction::kRenewCaAndLeaf, problem};
  problem = LeafProblem(pems, wanted, now, renew_before);
  if (!problem.empty()) return {RotationAction::kRenewLeaf, problem};
  return {RotationAction::kNone, "certificate valid beyond renew-before"};
}

nlohmann::json BuildTlsSecret(const std::string& ns, const std::string& name,
                              const SecretPems& pems, const nlohmann::json* base) {
  nlohmann::json s = base != nullptr && base->is_object() ? *base : nlohmann::json::object();
  s["apiVersion"] = "v1";
  s["kind"] = "Secret";
  s["type"] = kTlsSecretType;
  if (!s.contains("metadata") || !s["metadata"].is_object())
    s["metadata"] = nlohmann::json::object();
  nlohmann::json& metadata = s["metadata"];
  metadata["name"] = name;
  metadata["namespace"] = ns;
  if (!metadata.contains("annotations") || !metadata["annotations"].is_object()) {
    metadata["annotations"] = nlohmann::json::object();
  }
  metadata["annotations"][kManagedAnnotation] = "true";
  if (!s.contains("data") || !s["data"].is_object()) s["data"] = nlohmann::json::object();
  s["data"]["ca.crt"] = base::Base64Encode(pems.ca.cert_pem);
  s["data"]["ca.key"] = base::Base64Encode(pems.ca.key_pem);
  s["data"]["tls.crt"] = base::Base64Encode(pems.leaf.cert_pem);
  s["data"]["tls.key"] = base::Base64Encode(pems.leaf.key_pem);
  s.erase("stringData");  // would override data on write
  return s;
}

}  // namespace wasd::certs

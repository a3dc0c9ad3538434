#include "certs/rotation.h"

#include <ctime>

#include "base/base64.h"
#include "base/time.h"
#include "certs/ca_bundle.h"
#include "certs/generate.h"

namespace wasd::certs {
namespace {

// Issues the material `action` asks for; keeps the Secret's CA for a leaf
// renewal so the injected bundle stays valid.
Status Issue(const RotationOptions& o, const WantedNames& names, RotationAction action,
             SecretPems* pems, SystemTime now) {
  if (action == RotationAction::kCreate || action == RotationAction::kRenewCaAndLeaf) {
    CaOptions ca;
    ca.key_type = o.key_type;
    ca.days = o.ca_days;
    ca.now = now;
    Status st = IssueCa(ca, &pems->ca);
    if (!st.ok()) return st;
  }
  LeafOptions leaf;
  leaf.common_name = names.dns.size() > 2 ? names.dns[2] : o.service;
  leaf.dns_names = names.dns;
  leaf.ip_addresses = names.ips;
  leaf.key_type = o.key_type;
  leaf.days = o.leaf_days;
  leaf.now = now;
  return IssueLeaf(pems->ca, leaf, &pems->leaf);
}

void Describe(const nlohmann::json& secret, RotationReport* report) {
  const SecretPems pems = ReadSecretPems(secret);
  X509Ptr cert;
  if (!ParseCertificatePem(pems.leaf.cert_pem, &cert).ok()) return;
  BignumPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr));
  char* hex = bn ? BN_bn2hex(bn.get()) : nullptr;
  if (hex != nullptr) report->leaf_serial = hex;
  OPENSSL_free(hex);
  Asn1ToSystemTime(X509_get0_notAfter(cert.get()), &report->leaf_not_after);
}

// The previous CA kept by an earlier CA renewal, and until when ("" when
// none, or when the Secret's record of it is unusable).
std::string PreviousCa(const nlohmann::json& secret, SystemTime* until) {
  const nlohmann::json* data =
      secret.is_object() && secret.contains("data") ? &secret["data"] : nullptr;
  if (data == nullptr || !data->is_object() || !data->contains(kPreviousCaKey)) return {};
  const nlohmann::json& v = (*data)[kPreviousCaKey];
  std::string pem;
  if (!v.is_string()) return {};
  base::Result<std::string> decoded = base::Base64Decode(v.get<std::string>());
  if (!decoded.ok()) return {};
  pem = std::move(decoded).value();
  const nlohmann::json* ann = nullptr;
  if (secret.contains("metadata") && secret["metadata"].is_object() &&
      secret["metadata"].contains("annotations")) {
    ann = &secret["metadata"]["annotations"];
  }
  std::optional<SystemTime> parsed;
  if (ann == nullptr || !ann->is_object() || !ann->contains(kPreviousCaUntilAnnotation) ||
      !(*ann)[kPreviousCaUntilAnnotation].is_string() ||
      !(parsed = base::ParseRfc3339((*ann)[kPreviousCaUntilAnnotation].get<std::string>()))) {
    *until = SystemTime{};  // no valid deadline: already over
  } else {
    *until = *parsed;
  }
  return pem;
}

// The Secret without the previous CA and its deadline.
nlohmann::json WithoutPreviousCa(nlohmann::json secret) {
  if (secret.contains("data") && secret["data"].is_object()) secret["data"].erase(kPreviousCaKey);
  if (secret.contains("metadata") && secret["metadata"].contains("annotations") &&
      secret["metadata"]["annotations"].is_object()) {
    secret["metadata"]["annotations"].erase(kPreviousCaUntilAnnotation);
  }
  return secret;
}

}  // namespace

namespace {

// Reads the Secret and, when DecideRotation says so, issues and writes the
// new certificates (retrying a conflict); `secret` is then the Secret as
// stored. Leaves `secret` alone for kLeaveForeign.
Status EnsureSecret(CertApi& api, const RotationOptions& o, const WantedNames& wanted,
                    SystemTime now, RotationReport* report, nlohmann::json* secret) {
  for (int attempt = 0;; ++attempt) {
    ApiReply got = api.GetSecret(o.ns, o.secret_name);
    const bool exists = got.ok();
    if (!exists && got.code != ApiReply::Code::kNotFound) {
      return Status::Error("reading secret " + o.ns + "/" + o.secret_name + ": " + got.message);
    }
    report->decision = DecideRotation(exists ? &got.object : nullptr, wanted, now, o.renew_before);
    const RotationAction action = report->decision.action;
    if (action == RotationAction::kLeaveForeign) return Status::Ok();
    if (action == RotationAction::kNone) {
      *secret = std::move(got.object);
      return Status::Ok();
    }
    SecretPems pems = exists ? ReadSecretPems(got.object) : SecretPems{};
    // A CA renewal keeps the old CA certificate (if it still parses) for the
    // overlap, so the bundle trusts the leaf the pods serve until they reload.
    std::string previous;
    if (action == RotationAction::kRenewCaAndLeaf) {
      X509Ptr old_ca;
      if (ParseCertificatePem(pems.ca.cert_pem, &old_ca).ok()) previous = pems.ca.cert_pem;
    }
    Status st = Issue(o, wanted, action, &pems, now);
    if (!st.ok()) return st;
    nlohmann::json desired =
        BuildTlsSecret(o.ns, o.secret_name, pems, exists ? &got.object : nullptr);
    if (!previous.empty()) {
      desired["data"][kPreviousCaKey] = base::Base64Encode(previous);
      desired["metadata"]["annotations"][kPreviousCaUntilAnnotation] =
          base::FormatRfc3339(now + o.previous_ca_overlap);
    }
    ApiReply wrote =
        exists ? api.UpdateSecret(o.ns, o.secret_name, desired) : api.CreateSecret(o.ns, desired);
    if (wrote.ok()) {
      report->secret_written = true;
      *secret = wrote.object.is_object() ? std::move(wrote.object) : std::move(desired);
      return Status::Ok();
    }
    if (wrote.code != ApiReply::Code::kConflict || attempt + 1 >= kMaxSecretAttempts) {
      return Status::Error("writing secret " + o.ns + "/" + o.secret_name + ": " + wrote.message);
    }
  }
}

}  // namespace

Status RotateOnce(CertApi& api, const RotationOptions& o, SystemTime now, RotationReport* report) {
  if (o.secret_name.empty()) return Status::Error("--secret is required");
  if (o.leaf_days < 1 || o.leaf_days > kMaxDays || o.ca_days < 1 || o.ca_days > kMaxDays) {
    return Status::Error("--days and --ca-days must be between 1 and " + std::to_string(kMaxDays));
  }
  GenerateOptions names_of;
  names_of.service = o.service;
  names_of.ns = o.ns;
  names_of.extra_sans = o.extra_sans;
  WantedNames wanted;
  Status st = CollectSans(names_of, &wanted.dns, &wanted.ips);
  if (!st.ok()) return st;

  *report = RotationReport{};
  nlohmann::json secret;
  st = EnsureSecret(api, o, wanted, now, report, &secret);
  if (!st.ok() || report->decision.action == RotationAction::kLeaveForeign) return st;
  Describe(secret, report);
  SystemTime until{};
  const std::string previous = PreviousCa(secret, &until);
  std::string bundle = ReadSecretPems(secret).ca.cert_pem;
  if (!previous.empty() && now < until) {
    if (!bundle.empty() && bundle.back() != '\n') bundle += '\n';
    bundle += previous;
    report->previous_ca_in_bundle = true;
  }
  if (o.webhook_configs.empty()) return Status::Ok();
  st = InjectCaBundle(api, o.webhook_configs, bundle, &report->injected,
                      o.skip_missing_webhook_configs);
  if (!st.ok() || previous.empty() || now < until) return st;
  // Overlap over: the bundle above no longer trusts the old CA; forget it.
  // Injected first, so a failed Secret write only leaves a harmless key for
  // the next pass.
  ApiReply wrote = api.UpdateSecret(o.ns, o.secret_name, WithoutPreviousCa(secret));
  if (!wrote.ok() && wrote.code != ApiReply::Code::kConflict) {
    return Status::Error("writing secret " + o.ns + "/" + o.secret_name + ": " + wrote.message);
  }
  report->previous_ca_dropped = wrote.ok();
  return Status::Ok();
}

}  // namespace wasd::certs

#include "certs/rotation.h"

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

}  // namespace

Status RotateOnce(CertApi& api, const RotationOptions& o, SystemTime now,
                  RotationReport* report) {
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
      secret = std::move(got.object);
      break;
    }
    SecretPems pems = exists ? ReadSecretPems(got.object) : SecretPems{};
    st = Issue(o, wanted, action, &pems, now);
    if (!st.ok()) return st;
    const nlohmann::json desired =
        BuildTlsSecret(o.ns, o.secret_name, pems, exists ? &got.object : nullptr);
    ApiReply wrote = exists ? api.UpdateSecret(o.ns, o.secret_name, desired)
                            : api.CreateSecret(o.ns, desired);
    if (wrote.ok()) {
      report->secret_written = true;
      if (wrote.object.is_object()) {
        secret = std::move(wrote.object);
      } else {
        secret = desired;
      }
      break;
    }
    if (wrote.code != ApiReply::Code::kConflict || attempt + 1 >= kMaxSecretAttempts) {
      return Status::Error("writing secret " + o.ns + "/" + o.secret_name + ": " + wrote.message);
    }
  }
  Describe(secret, report);
  if (o.webhook_configs.empty()) return Status::Ok();
  return InjectCaBundle(api, o.webhook_configs, ReadSecretPems(secret).ca.cert_pem,
                        &report->injected);
}

}  // namespace wasd::certs

#include "certs/generate.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <system_error>

#include "certs/cert_info.h"
#include "certs/digest.h"
#include "runtime/file_util.h"

namespace wasd::certs {
namespace {

// Certificate files are a few KB; anything larger is not ours to read.
constexpr std::size_t kMaxCertFileBytes = std::size_t{1} << 20;
constexpr mode_t kKeyMode = 0600;
constexpr mode_t kCertMode = 0644;

using Hashes = std::map<std::string, std::string>;

std::string Join(const std::string& dir, const std::string& name) { return dir + "/" + name; }

Status ReadInto(const std::string& path, std::string* out) {
  base::Result<std::string> data = runtime::ReadSmallFile(path, kMaxCertFileBytes);
  if (!data.ok()) return data.status();
  *out = std::move(data).value();
  return Status::Ok();
}

// A missing or unreadable ownership file means "we wrote nothing here".
Hashes LoadOwnership(const std::string& dir) {
  Hashes hashes;
  base::Result<std::string> text =
      runtime::ReadSmallFile(Join(dir, kOwnershipFile), kMaxCertFileBytes);
  if (!text.ok()) return hashes;
  const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return hashes;
  const auto files = doc.find("files");
  if (files == doc.end() || !files->is_object()) return hashes;
  for (const auto& [name, hash] : files->items()) {
    if (hash.is_string()) hashes[name] = hash.get<std::string>();
  }
  return hashes;
}

Status SaveOwnership(const std::string& dir, const Hashes& hashes) {
  nlohmann::json doc = {{"writer", "wasd certs generate"}, {"files", nlohmann::json::object()}};
  for (const auto& [name, hash] : hashes) doc["files"][name] = hash;
  return runtime::WriteFileAtomic(Join(dir, kOwnershipFile), doc.dump(2) + "\n", kCertMode);
}

// True if the file exists with exactly the content we recorded for it.
bool IsOurs(const std::string& dir, const std::string& name, const Hashes& hashes) {
  const auto it = hashes.find(name);
  if (it == hashes.end()) return false;
  base::Result<std::string> data = runtime::ReadSmallFile(Join(dir, name), kMaxCertFileBytes);
  return data.ok() && Sha256Hex(*data) == it->second;
}

// Loads the CA pair and checks it can sign leaves at `now`.
Status LoadUsableCa(const std::string& dir, SystemTime now, CertKeyPem* ca) {
  Status st = ReadInto(Join(dir, kCaCertFile), &ca->cert_pem);
  if (st.ok()) st = ReadInto(Join(dir, kCaKeyFile), &ca->key_pem);
  if (st.ok()) st = CheckKeyMatchesCertificate(ca->cert_pem, ca->key_pem);
  if (!st.ok()) return st;
  X509Ptr cert;
  st = ParseCertificatePem(ca->cert_pem, &cert);
  if (!st.ok()) return st;
  if (!IsCa(cert.get())) return Status::Error("ca.crt is not a CA certificate");
  if (NeedsRenewal(ca->cert_pem, now, std::chrono::seconds(0))) {
    return Status::Error("ca.crt is expired or not yet valid");
  }
  return Status::Ok();
}

// Decides whether to reuse the CA in `dir` or make a new one, per the
// ownership rules in generate.h. Sets *reuse and, when reusing, *ca.
Status ChooseCa(const GenerateOptions& o, const Hashes& hashes, bool* reuse, CertKeyPem* ca) {
  const bool has_cert = runtime::PathExists(Join(o.out_dir, kCaCertFile));
  const bool has_key = runtime::PathExists(Join(o.out_dir, kCaKeyFile));
  *reuse = false;
  if (!has_cert && !has_key) return Status::Ok();
  if (has_cert && has_key) {
    Status st = LoadUsableCa(o.out_dir, o.now, ca);
    if (st.ok()) {
      *reuse = true;
      return st;
    }
    if (o.force) return Status::Ok();
    return Status::Error("the CA in " + o.out_dir + " is unusable (" + st.message() +
                         "); remove ca.crt and ca.key or pass --force to replace them");
  }
  const char* present = has_cert ? kCaCertFile : kCaKeyFile;
  const char* missing = has_cert ? kCaKeyFile : kCaCertFile;
  if (o.force || IsOurs(o.out_dir, present, hashes)) return Status::Ok();
  return Status::Error(o.out_dir + " has " + present + " but no " + missing +
                       "; supply both, remove it, or pass --force to replace it");
}

Status ValidateOptions(const GenerateOptions& o) {
  if (o.out_dir.empty()) return Status::Error("--out-dir is required");
  if (o.leaf_days < 1 || o.leaf_days > kMaxDays) {
    return Status::Error("--days must be between 1 and " + std::to_string(kMaxDays));
  }
  if (o.ca_days < 1 || o.ca_days > kMaxDays) {
    return Status::Error("--ca-days must be between 1 and " + std::to_string(kMaxDays));
  }
  return Status::Ok();
}

Status WritePair(const std::string& dir, const char* cert_name, const char* key_name,
                 const CertKeyPem& pair, Hashes* hashes) {
  // Key first: a watcher keyed on the certificate file sees the new
  // certificate only once its key is already in place.
  Status st = runtime::WriteFileAtomic(Join(dir, key_name), pair.key_pem, kKeyMode);
  if (st.ok()) st = runtime::WriteFileAtomic(Join(dir, cert_name), pair.cert_pem, kCertMode);
  if (!st.ok()) return st;
  (*hashes)[key_name] = Sha256Hex(pair.key_pem);
  (*hashes)[cert_name] = Sha256Hex(pair.cert_pem);
  return st;
}

}  // namespace

Status CollectSans(const GenerateOptions& o, std::vector<std::string>* dns,
                   std::vector<std::string>* ips) {
  if (o.service.empty() || o.service.find('.') != std::string::npos || !IsValidDnsName(o.service)) {
    return Status::Error("--service must be a DNS label (a Service name), got \"" + o.service +
                         "\"");
  }
  if (o.ns.empty() || o.ns.find('.') != std::string::npos || !IsValidDnsName(o.ns)) {
    return Status::Error("--namespace must be a DNS label, got \"" + o.ns + "\"");
  }
  *dns = ServiceDnsNames(o.service, o.ns);
  ips->clear();
  return SplitSans(o.extra_sans, dns, ips);
}

Status GenerateToDirectory(const GenerateOptions& o, GenerateResult* result) {
  Status st = ValidateOptions(o);
  if (!st.ok()) return st;
  GenerateResult out;
  st = CollectSans(o, &out.dns_names, &out.ip_addresses);
  if (!st.ok()) return st;

  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Status::Error("cannot create " + o.out_dir + ": " + ec.message());

  Hashes hashes = LoadOwnership(o.out_dir);
  for (const char* name : {kTlsCertFile, kTlsKeyFile}) {
    if (!o.force && runtime::PathExists(Join(o.out_dir, name)) &&
        !IsOurs(o.out_dir, name, hashes)) {
      return Status::Error(Join(o.out_dir, name) +
                           " exists and was not written by wasd certs generate; refusing to "
                           "overwrite it (pass --force to replace it)");
    }
  }
  bool reuse = false;
  CertKeyPem ca;
  st = ChooseCa(o, hashes, &reuse, &ca);
  if (!st.ok()) return st;
  if (!reuse) {
    CaOptions ca_options;
    ca_options.key_type = o.key_type;
    ca_options.days = o.ca_days;
    ca_options.now = o.now;
    st = IssueCa(ca_options, &ca);
    if (!st.ok()) return st;
  }

  LeafOptions leaf;
  leaf.common_name = out.dns_names[2];  // NAME.NS.svc, the name the API server dials
  leaf.dns_names = out.dns_names;
  leaf.ip_addresses = out.ip_addresses;
  leaf.key_type = o.key_type;
  leaf.days = o.leaf_days;
  leaf.now = o.now;
  CertKeyPem serving;
  st = IssueLeaf(ca, leaf, &serving);
  if (!st.ok()) return st;

  if (!reuse) {
    st = WritePair(o.out_dir, kCaCertFile, kCaKeyFile, ca, &hashes);
    if (!st.ok()) return st;
  }
  st = WritePair(o.out_dir, kTlsCertFile, kTlsKeyFile, serving, &hashes);
  if (!st.ok()) return st;
  st = SaveOwnership(o.out_dir, hashes);
  if (!st.ok()) return st;
  out.ca_created = !reuse;
  *result = std::move(out);
  return Status::Ok();
}

}  // namespace wasd::certs

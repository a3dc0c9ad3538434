// FakeCertApi: an in-memory CertApi for the injection and rotation tests.
// Keeps Secrets and webhook configurations with resourceVersions, applies
// JSON patches with nlohmann's RFC 6902 implementation (a failed `test` is a
// conflict, as the API server's 422), enforces the resourceVersion
// precondition on updates, and can run a hook before a write to simulate a
// concurrent writer. Single-threaded.
#ifndef WASD_TESTS_CERTS_FAKE_CERT_API_H_
#define WASD_TESTS_CERTS_FAKE_CERT_API_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "certs/cert_api.h"

namespace wasd::certs::testing {

class FakeCertApi : public CertApi {
 public:
  using Json = nlohmann::json;

  void PutSecret(Json secret) {
    Stamp(&secret);
    const std::string key = Key(secret["metadata"]["namespace"], secret["metadata"]["name"]);
    secrets_[key] = std::move(secret);
  }
  void PutConfig(WebhookKind kind, Json config) {
    Stamp(&config);
    const std::string name = config["metadata"]["name"];
    configs_[{kind, name}] = std::move(config);
  }
  Json* Secret(const std::string& ns, const std::string& name) {
    auto it = secrets_.find(Key(ns, name));
    return it == secrets_.end() ? nullptr : &it->second;
  }
  Json* Config(WebhookKind kind, const std::string& name) {
    auto it = configs_.find({kind, name});
    return it == configs_.end() ? nullptr : &it->second;
  }
  // Bumps the stored object's resourceVersion (a concurrent edit).
  void Touch(Json* obj) { Stamp(obj); }

  // Runs before every write (create/update/patch), e.g. to race the caller.
  std::function<void()> before_write;
  // Makes every call fail with kError when set.
  bool down = false;

  std::vector<std::string> calls;  // "GET secret ns/name", "PATCH mutating name", …

  ApiReply GetSecret(const std::string& ns, const std::string& name) override {
    calls.push_back("GET secret " + Key(ns, name));
    if (down) return Error();
    const Json* s = Secret(ns, name);
    return s ? Ok(*s) : NotFound();
  }
  ApiReply CreateSecret(const std::string& ns, const Json& secret) override {
    calls.push_back("CREATE secret " + ns);
    if (down) return Error();
    if (before_write) before_write();
    const std::string name = secret["metadata"]["name"];
    if (Secret(ns, name) != nullptr) return Conflict("AlreadyExists");
    Json stored = secret;
    PutSecret(stored);
    return Ok(*Secret(ns, name));
  }
  ApiReply UpdateSecret(const std::string& ns, const std::string& name,
                        const Json& secret) override {
    calls.push_back("UPDATE secret " + Key(ns, name));
    if (down) return Error();
    if (before_write) before_write();
    Json* stored = Secret(ns, name);
    if (stored == nullptr) return NotFound();
    if (secret["metadata"].value("resourceVersion", "") !=
        (*stored)["metadata"]["resourceVersion"]) {
      return Conflict("Conflict");
    }
    *stored = secret;
    Stamp(stored);
    return Ok(*stored);
  }
  ApiReply GetWebhookConfig(WebhookKind kind, const std::string& name) override {
    calls.push_back("GET " + Kind(kind) + " " + name);
    if (down) return Error();
    const Json* c = Config(kind, name);
    return c ? Ok(*c) : NotFound();
  }
  ApiReply PatchWebhookConfig(WebhookKind kind, const std::string& name,
                              const Json& json_patch) override {
    calls.push_back("PATCH " + Kind(kind) + " " + name);
    patches.push_back(json_patch);
    if (down) return Error();
    if (before_write) before_write();
    Json* stored = Config(kind, name);
    if (stored == nullptr) return NotFound();
    try {
      *stored = stored->patch(json_patch);
    } catch (const nlohmann::json::exception& e) {
      return Conflict(e.what());
    }
    Stamp(stored);
    return Ok(*stored);
  }

  std::vector<Json> patches;

 private:
  static std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }
  static std::string Kind(WebhookKind k) {
    return k == WebhookKind::kMutating ? "mutating" : "validating";
  }
  void Stamp(Json* obj) { (*obj)["metadata"]["resourceVersion"] = std::to_string(++version_); }
  static ApiReply Ok(const Json& obj) { return {ApiReply::Code::kOk, obj, ""}; }
  static ApiReply NotFound() { return {ApiReply::Code::kNotFound, nullptr, "404 NotFound"}; }
  static ApiReply Conflict(std::string why) {
    return {ApiReply::Code::kConflict, nullptr, "conflict: " + why};
  }
  static ApiReply Error() { return {ApiReply::Code::kError, nullptr, "unreachable: test"}; }

  int version_ = 100;
  std::map<std::string, Json> secrets_;
  std::map<std::pair<WebhookKind, std::string>, Json> configs_;
};

}  // namespace wasd::certs::testing

#endif  // WASD_TESTS_CERTS_FAKE_CERT_API_H_

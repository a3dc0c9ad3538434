// FakeApi: an in-memory Api (reconciler/api.h) for millisecond tests of the
// code that writes to the cluster. It keeps objects per resource, namespace
// and name, and answers the way kube-apiserver does where the reconciler
// depends on it:
//  - create assigns metadata.uid, resourceVersion and creationTimestamp; a
//    taken name is 409 AlreadyExists;
//  - get/patch/update/delete of a missing object is 404 NotFound;
//  - update with a stale metadata.resourceVersion is 409 Conflict;
//  - a JSON patch whose `test` fails (or that does not apply) is 422
//    Invalid (set_test_failure_code(500) for API servers before 1.x that
//    answered 500 with "test" in the message);
//  - delete checks the uid and resourceVersion preconditions (409 Conflict);
//    an object with finalizers is only marked (deletionTimestamp) and
//    returned, otherwise removed and a Status object returned;
//  - a write that leaves a marked object without finalizers removes it.
// Every write bumps one resourceVersion counter.
//
// Tests script failures (the next `times` calls of a verb, optionally on one
// resource or name, answer a Status without touching the store), hook
// creates (e.g. to strip fields as a server with a feature gate off does),
// and read the calls made.
//
// Thread-safe: every method locks one mutex.
#ifndef WASD_TESTS_RECONCILER_FAKE_API_H_
#define WASD_TESTS_RECONCILER_FAKE_API_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reconciler/api.h"

namespace wasd::reconciler::testing {

// Statuses as kube-apiserver words them.
base::Status NotFound(std::string_view what);
base::Status AlreadyExists(std::string_view what);
base::Status Conflict(std::string_view message);
base::Status Invalid(std::string_view message);
base::Status Forbidden(std::string_view message);
base::Status InternalError(std::string_view message);

class FakeApi : public Api {
 public:
  // Discovery answers from the group versions set with ServeGroupVersion
  // (default: scheduling.k8s.io/v1beta1 with workloads and podgroups, a
  // Kubernetes 1.37 cluster); any other group version is 404.
  base::Result<nlohmann::json> GetGroupVersion(std::string_view group_version) override;
  base::Result<nlohmann::json> Get(const kube::Resource& r, std::string_view ns,
                                   std::string_view name) override;
  base::Result<kube::ListResult> ListPage(const kube::Resource& r, std::string_view ns,
                                          std::int64_t limit) override;
  base::Result<nlohmann::json> Create(const kube::Resource& r, std::string_view ns,
                                      const nlohmann::json& object) override;
  base::Result<nlohmann::json> Update(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, const nlohmann::json& object) override;
  base::Result<nlohmann::json> JsonPatch(const kube::Resource& r, std::string_view ns,
                                         std::string_view name,
                                         const nlohmann::json& patch) override;
  base::Result<nlohmann::json> Delete(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, std::string_view precondition_uid,
                                      std::string_view precondition_resource_version) override;

  // Stores `object` as is (namespace from its metadata; uid and
  // resourceVersion assigned when missing), replacing any object of that
  // name. Not a call. Returns the stored object.
  nlohmann::json Put(const kube::Resource& r, nlohmann::json object);
  // Stores `object` under ns/name exactly as given (no metadata added): a
  // malformed answer. Not a call.
  void PutRaw(const kube::Resource& r, std::string_view ns, std::string_view name,
              nlohmann::json object);
  // The stored object, if any. Not a call.
  std::optional<nlohmann::json> Find(const kube::Resource& r, std::string_view ns,
                                     std::string_view name) const;
  // Every stored object of `r` in `ns` ("" = all), ordered by namespace and name.
  std::vector<nlohmann::json> Objects(const kube::Resource& r, std::string_view ns = "") const;

  // The next `times` calls of `verb` ("get", "list", "create", "update",
  // "patch", "delete") on `resource` (plural, "" = any) named `name` ("" =
  // any) answer `status`.
  void FailNext(std::string_view verb, base::Status status, std::string_view resource = "",
                std::string_view name = "", int times = 1);
  // Applied to every object created through Create() before it is stored.
  // `group_version` serves `resources` (plurals); an empty list stops
  // serving it (404). Not a call.
  void ServeGroupVersion(std::string_view group_version, std::vector<std::string> resources);
  void set_on_create(std::function<void(const kube::Resource&, nlohmann::json&)> hook);
  void set_test_failure_code(int code);
  // An object deleted at once (no finalizer) is answered with its final
  // state, resourceVersion the deletion's, as custom resources and pods are
  // (default: a Status, as most built-in resources are).
  void set_delete_answers_object(bool on);

  // Calls of `verb` so far (all resources).
  int calls(std::string_view verb) const;
  // Every call, in order: "verb plural ns/name" (delete adds its
  // preconditions: " uid=… rv=…").
  std::vector<std::string> log() const;

 private:
  struct ScriptedFailure {
    std::string verb;
    std::string resource;
    std::string name;
    base::Status status;
    int times = 1;
  };
  using Key = std::string;  // "group_version/plural|ns|name"
  static Key KeyOf(const kube::Resource& r, std::string_view ns, std::string_view name);
  // Counts the call, logs it, and returns a scripted failure if one matches.
  // Requires mu_.
  std::optional<base::Status> Enter(std::string_view verb, const kube::Resource& r,
                                    std::string_view ns, std::string_view name,
                                    std::string_view extra = "");
  // Assigns uid/resourceVersion/creationTimestamp as needed and stores. Requires mu_.
  nlohmann::json Store(const Key& key, nlohmann::json object, bool fresh);
  // Stores `object` after an update or patch; removes it when it is marked
  // for deletion and has no finalizers left. Requires mu_.
  nlohmann::json Commit(const Key& key, nlohmann::json object);

  mutable std::mutex mu_;
  std::map<Key, nlohmann::json> objects_;                                  // guarded by mu_
  std::vector<ScriptedFailure> failures_;                                  // guarded by mu_
  std::function<void(const kube::Resource&, nlohmann::json&)> on_create_;  // guarded by mu_
  std::map<std::string, int, std::less<>> calls_;                          // guarded by mu_
  std::vector<std::string> log_;                                           // guarded by mu_
  std::int64_t resource_version_ = 100;                                    // guarded by mu_
  std::int64_t next_uid_ = 1;                                              // guarded by mu_
  int test_failure_code_ = 422;                                            // guarded by mu_
  bool delete_answers_object_ = false;                                     // guarded by mu_
  std::map<std::string, std::vector<std::string>, std::less<>> served_{
      {"scheduling.k8s.io/v1beta1", {"workloads", "podgroups"}}};  // guarded by mu_
};

}  // namespace wasd::reconciler::testing

#endif  // WASD_TESTS_RECONCILER_FAKE_API_H_

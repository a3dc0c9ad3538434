// FakeApi (see fake_api.h).
#include "tests/reconciler/fake_api.h"

#include <algorithm>
#include <utility>

#include "objects/json_util.h"
#include "objects/object_util.h"

namespace wasd::reconciler::testing {

using nlohmann::json;
using objects::IsTerminating;
using objects::NameOf;
using objects::NamespaceOf;
using objects::ResourceVersionOf;
using objects::UidOf;

base::Status NotFound(std::string_view what) {
  return base::Status::Http(404, "NotFound", std::string(what) + " not found");
}
base::Status AlreadyExists(std::string_view what) {
  return base::Status::Http(409, "AlreadyExists", std::string(what) + " already exists");
}
base::Status Conflict(std::string_view message) {
  return base::Status::Http(409, "Conflict", std::string(message));
}
base::Status Invalid(std::string_view message) {
  return base::Status::Http(422, "Invalid", std::string(message));
}
base::Status Forbidden(std::string_view message) {
  return base::Status::Http(403, "Forbidden", std::string(message));
}
base::Status InternalError(std::string_view message) {
  return base::Status::Http(500, "InternalError", std::string(message));
}

namespace {

std::string What(const kube::Resource& r, std::string_view name) {
  return r.plural + " \"" + std::string(name) + "\"";
}

bool HasFinalizers(const json& object) {
  const json* f = objects::MemberPath(object, {"metadata", "finalizers"});
  return f != nullptr && f->is_array() && !f->empty();
}

}  // namespace

FakeApi::Key FakeApi::KeyOf(const kube::Resource& r, std::string_view ns, std::string_view name) {
  return r.group_version + "/" + r.plural + "|" + (r.namespaced ? std::string(ns) : "") + "|" +
         std::string(name);
}

std::optional<base::Status> FakeApi::Enter(std::string_view verb, const kube::Resource& r,
                                           std::string_view ns, std::string_view name,
                                           std::string_view extra) {
  ++calls_[std::string(verb)];
  log_.push_back(std::string(verb) + " " + r.plural + " " + std::string(ns) + "/" +
                 std::string(name) + std::string(extra));
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    if (it->verb != verb || (!it->resource.empty() && it->resource != r.plural) ||
        (!it->name.empty() && it->name != name)) {
      continue;
    }
    base::Status status = it->status;
    if (--it->times <= 0) failures_.erase(it);
    return status;
  }
  return std::nullopt;
}

json FakeApi::Store(const Key& key, json object, bool fresh) {
  json& meta = object["metadata"];
  if (fresh || !meta.contains("uid")) meta["uid"] = "uid-" + std::to_string(next_uid_++);
  if (fresh) meta["creationTimestamp"] = "2026-12-01T00:00:00Z";
  meta["resourceVersion"] = std::to_string(++resource_version_);
  objects_[key] = object;
  return object;
}

json FakeApi::Commit(const Key& key, json object) {
  object["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  if (IsTerminating(object) && !HasFinalizers(object)) {
    objects_.erase(key);  // the last finalizer of a deleted object: it is gone
  } else {
    objects_[key] = object;
  }
  return object;
}

base::Result<json> FakeApi::GetGroupVersion(std::string_view group_version) {
  std::lock_guard lock(mu_);
  ++calls_["discover"];
  log_.push_back("discover " + std::string(group_version));
  const auto it = served_.find(group_version);
  if (it == served_.end()) {
    return NotFound("the server could not find the requested resource");
  }
  json resources = json::array();
  for (const std::string& r : it->second) {
    resources.push_back({{"name", r}, {"namespaced", true}});
    resources.push_back({{"name", r + "/status"}, {"namespaced", true}});
  }
  return json{{"kind", "APIResourceList"},
              {"groupVersion", std::string(group_version)},
              {"resources", std::move(resources)}};
}

void FakeApi::ServeGroupVersion(std::string_view group_version,
                                std::vector<std::string> resources) {
  std::lock_guard lock(mu_);
  if (resources.empty()) {
    served_.erase(std::string(group_version));
  } else {
    served_[std::string(group_version)] = std::move(resources);
  }
}

base::Result<json> FakeApi::Get(const kube::Resource& r, std::string_view ns,
                                std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto failed = Enter("get", r, ns, name)) return *failed;
  const auto it = objects_.find(KeyOf(r, ns, name));
  if (it == objects_.end()) return NotFound(What(r, name));
  return it->second;
}

base::Result<kube::ListResult> FakeApi::ListPage(const kube::Resource& r, std::string_view ns,
                                                 std::int64_t limit) {
  std::lock_guard lock(mu_);
  if (auto failed = Enter("list", r, ns, "")) return *failed;
  kube::ListResult list;
  const std::string prefix = r.group_version + "/" + r.plural + "|";
  for (const auto& [key, object] : objects_) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    if (!ns.empty() && NamespaceOf(object) != ns) continue;
    if (limit > 0 && static_cast<std::int64_t>(list.items.size()) >= limit) {
      list.continue_token = "more";
      break;
    }
    list.items.push_back(object);
  }
  list.resource_version = std::to_string(resource_version_);
  return list;
}

base::Result<json> FakeApi::Create(const kube::Resource& r, std::string_view ns,
                                   const json& object) {
  std::lock_guard lock(mu_);
  const std::string name = NameOf(object);
  if (auto failed = Enter("create", r, ns, name)) return *failed;
  const Key key = KeyOf(r, ns, name);
  if (objects_.count(key) > 0) return AlreadyExists(What(r, name));
  json stored = object;
  if (r.namespaced) stored["metadata"]["namespace"] = std::string(ns);
  if (on_create_) on_create_(r, stored);
  return Store(key, std::move(stored), true);
}

base::Result<json> FakeApi::Update(const kube::Resource& r, std::string_view ns,
                                   std::string_view name, const json& object) {
  std::lock_guard lock(mu_);
  if (auto failed = Enter("update", r, ns, name)) return *failed;
  const auto it = objects_.find(KeyOf(r, ns, name));
  if (it == objects_.end()) return NotFound(What(r, name));
  const std::string rv = ResourceVersionOf(object);
  if (!rv.empty() && rv != ResourceVersionOf(it->second)) {
    return Conflict("Operation cannot be fulfilled on " + What(r, name) +
                    ": the object has been modified; please apply your changes to the latest "
                    "version and try again");
  }
  json updated = object;
  updated["metadata"]["uid"] = UidOf(it->second);
  return Commit(it->first, std::move(updated));
}

base::Result<json> FakeApi::JsonPatch(const kube::Resource& r, std::string_view ns,
                                      std::string_view name, const json& patch) {
  std::lock_guard lock(mu_);
  if (auto failed = Enter("patch", r, ns, name)) return *failed;
  const auto it = objects_.find(KeyOf(r, ns, name));
  if (it == objects_.end()) return NotFound(What(r, name));
  json patched;
  try {
    patched = it->second.patch(patch);
  } catch (const json::exception& e) {
    // kube-apiserver words a failed `test` "testing value /x failed".
    const std::string message = std::string("the server rejected our request: test ") + e.what();
    if (test_failure_code_ == 500) return InternalError(message);
    return Invalid(message);
  }
  patched["metadata"]["uid"] = UidOf(it->second);
  return Commit(it->first, std::move(patched));
}

base::Result<json> FakeApi::Delete(const kube::Resource& r, std::string_view ns,
                                   std::string_view name, std::string_view precondition_uid,
                                   std::string_view precondition_resource_version) {
  std::lock_guard lock(mu_);
  const std::string extra =
      " uid=" + std::string(precondition_uid) + " rv=" + std::string(precondition_resource_version);
  if (auto failed = Enter("delete", r, ns, name, extra)) return *failed;
  const auto it = objects_.find(KeyOf(r, ns, name));
  if (it == objects_.end()) return NotFound(What(r, name));
  json& object = it->second;
  if (!precondition_uid.empty() && precondition_uid != UidOf(object)) {
    return Conflict("Operation cannot be fulfilled on " + What(r, name) +
                    ": Precondition failed: UID in precondition: " + std::string(precondition_uid) +
                    ", UID in object meta: " + UidOf(object));
  }
  if (!precondition_resource_version.empty() &&
      precondition_resource_version != ResourceVersionOf(object)) {
    return Conflict("Operation cannot be fulfilled on " + What(r, name) +
                    ": Precondition failed: ResourceVersion in precondition: " +
                    std::string(precondition_resource_version) +
                    ", ResourceVersion in object meta: " + ResourceVersionOf(object));
  }
  if (HasFinalizers(object)) {
    if (!IsTerminating(object)) {
      object["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:01Z";
      object["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
    }
    return object;
  }
  const std::string uid = UidOf(object);
  if (delete_answers_object_) {
    json last = std::move(object);
    last["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
    objects_.erase(it);
    return last;
  }
  objects_.erase(it);
  return json{{"apiVersion", "v1"},
              {"kind", "Status"},
              {"status", "Success"},
              {"details", {{"name", name}, {"kind", r.plural}, {"uid", uid}}}};
}

json FakeApi::Put(const kube::Resource& r, json object) {
  std::lock_guard lock(mu_);
  const Key key = KeyOf(r, NamespaceOf(object), NameOf(object));
  json& meta = object["metadata"];
  if (!meta.contains("uid")) meta["uid"] = "uid-" + std::to_string(next_uid_++);
  if (!meta.contains("resourceVersion")) {
    meta["resourceVersion"] = std::to_string(++resource_version_);
  }
  objects_[key] = object;
  return object;
}

void FakeApi::PutRaw(const kube::Resource& r, std::string_view ns, std::string_view name,
                     json object) {
  std::lock_guard lock(mu_);
  objects_[KeyOf(r, ns, name)] = std::move(object);
}

std::optional<json> FakeApi::Find(const kube::Resource& r, std::string_view ns,
                                  std::string_view name) const {
  std::lock_guard lock(mu_);
  const auto it = objects_.find(KeyOf(r, ns, name));
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

std::vector<json> FakeApi::Objects(const kube::Resource& r, std::string_view ns) const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  const std::string prefix = r.group_version + "/" + r.plural + "|";
  for (const auto& [key, object] : objects_) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    if (!ns.empty() && NamespaceOf(object) != ns) continue;
    out.push_back(object);
  }
  return out;
}

void FakeApi::FailNext(std::string_view verb, base::Status status, std::string_view resource,
                       std::string_view name, int times) {
  std::lock_guard lock(mu_);
  failures_.push_back(ScriptedFailure{std::string(verb), std::string(resource), std::string(name),
                                      std::move(status), times});
}

void FakeApi::set_on_create(std::function<void(const kube::Resource&, json&)> hook) {
  std::lock_guard lock(mu_);
  on_create_ = std::move(hook);
}

void FakeApi::set_delete_answers_object(bool on) {
  std::lock_guard lock(mu_);
  delete_answers_object_ = on;
}

void FakeApi::set_test_failure_code(int code) {
  std::lock_guard lock(mu_);
  test_failure_code_ = code;
}

int FakeApi::calls(std::string_view verb) const {
  std::lock_guard lock(mu_);
  const auto it = calls_.find(verb);
  return it == calls_.end() ? 0 : it->second;
}

std::vector<std::string> FakeApi::log() const {
  std::lock_guard lock(mu_);
  return log_;
}

}  // namespace wasd::reconciler::testing

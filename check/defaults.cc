#include "check/defaults.h"

#include <string>

namespace wasd::check {

namespace {

using nlohmann::json;

// The object member `key` of `parent`, created as {} when absent or null;
// null when it exists with another type (left alone).
json* ObjectMember(json& parent, const char* key) {
  if (!parent.is_object()) return nullptr;
  json& v = parent[key];  // parent is our own mutable copy, not untrusted read access
  if (v.is_null()) v = json::object();
  return v.is_object() ? &v : nullptr;
}

void SetIfAbsent(json& obj, const char* key, json value) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) obj[key] = std::move(value);
}

// Kubernetes: Always when the image has no tag or the tag "latest", else IfNotPresent.
std::string DefaultPullPolicy(const json& container) {
  auto it = container.find("image");
  if (it == container.end() || !it->is_string()) return "IfNotPresent";
  std::string image = it->get<std::string>();
  if (auto at = image.find('@'); at != std::string::npos) return "IfNotPresent";
  const auto slash = image.rfind('/');
  const auto colon = image.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return "Always";
  return image.substr(colon + 1) == "latest" ? "Always" : "IfNotPresent";
}

void DefaultContainers(json& pod_spec, const char* key) {
  auto it = pod_spec.find(key);
  if (it == pod_spec.end() || !it->is_array()) return;
  for (json& c : *it) {
    if (!c.is_object()) continue;
    SetIfAbsent(c, "terminationMessagePath", "/dev/termination-log");
    SetIfAbsent(c, "terminationMessagePolicy", "File");
    SetIfAbsent(c, "imagePullPolicy", DefaultPullPolicy(c));
    auto ports = c.find("ports");
    if (ports != c.end() && ports->is_array()) {
      for (json& p : *ports) SetIfAbsent(p, "protocol", "TCP");
    }
  }
}

}  // namespace

void ApplyDeploymentDefaults(json& deployment) {
  if (!deployment.is_object()) return;
  if (json* meta = ObjectMember(deployment, "metadata")) SetIfAbsent(*meta, "namespace", "default");
  json* spec = ObjectMember(deployment, "spec");
  if (spec == nullptr) return;
  SetIfAbsent(*spec, "replicas", 1);
  if (json* strategy = ObjectMember(*spec, "strategy")) {
    auto type = strategy->find("type");
    if (type == strategy->end() || type->is_null() || *type == "") {
      (*strategy)["type"] = "RollingUpdate";
    }
    if ((*strategy)["type"] == "RollingUpdate") {
      if (json* ru = ObjectMember(*strategy, "rollingUpdate")) {
        SetIfAbsent(*ru, "maxUnavailable", "25%");
        SetIfAbsent(*ru, "maxSurge", "25%");
      }
    }
  }
  SetIfAbsent(*spec, "revisionHistoryLimit", 10);
  SetIfAbsent(*spec, "progressDeadlineSeconds", 600);
  json* tmpl = ObjectMember(*spec, "template");
  if (tmpl == nullptr) return;
  json* pod_spec = ObjectMember(*tmpl, "spec");
  if (pod_spec == nullptr) return;
  SetIfAbsent(*pod_spec, "restartPolicy", "Always");
  SetIfAbsent(*pod_spec, "terminationGracePeriodSeconds", 30);
  SetIfAbsent(*pod_spec, "dnsPolicy", "ClusterFirst");
  SetIfAbsent(*pod_spec, "schedulerName", "default-scheduler");
  SetIfAbsent(*pod_spec, "securityContext", json::object());
  DefaultContainers(*pod_spec, "containers");
  DefaultContainers(*pod_spec, "initContainers");
}

}  // namespace wasd::check

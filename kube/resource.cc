#include "kube/resource.h"

#include <cctype>

namespace wasd::kube {

Resource Deployments() { return {"apps/v1", "deployments"}; }
Resource ReplicaSets() { return {"apps/v1", "replicasets"}; }
Resource Pods() { return {"v1", "pods"}; }
Resource Events() { return {"v1", "events"}; }
Resource Leases() { return {"coordination.k8s.io/v1", "leases"}; }
Resource ValidatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", false};
}
Resource MutatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", false};
}

std::string PercentEscape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0F]);
    }
  }
  return out;
}

std::string GroupVersionPrefix(std::string_view group_version) {
  if (group_version.find('/') == std::string_view::npos) {
    return "/api/" + PercentEscape(group_version);
  }
  const auto slash = group_version.find('/');
  return "/apis/" + PercentEscape(group_version.substr(0, slash)) + "/" +
         PercentEscape(group_version.substr(slash + 1));
}

std::string ResourcePath(const Resource& resource, std::string_view ns, std::string_view name) {
  std::string path = GroupVersionPrefix(resource.group_version);
  if (resource.namespaced && !ns.empty()) path += "/namespaces/" + PercentEscape(ns);
  path += "/" + PercentEscape(resource.plural);
  if (!name.empty()) {
    path += "/" + PercentEscape(name);
    if (!resource.subresource.empty()) path += "/" + PercentEscape(resource.subresource);
  }
  return path;
}

std::string QueryString(const Query& query) {
  std::string out;
  for (const auto& [key, value] : query) {
    out += out.empty() ? '?' : '&';
    out += PercentEscape(key);
    out += '=';
    out += PercentEscape(value);
  }
  return out;
}

std::string ServerUrl::HostHeader() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  const bool default_port = (tls && port == "443") || (!tls && port == "80");
  if (!default_port) h += ":" + port;
  return h;
}

Result<ServerUrl> ParseServerUrl(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return Status::Error(Status::Kind::kInvalidArgument,
                         "server URL \"" + std::string(url) + "\": " + why);
  };
  ServerUrl out;
  std::string_view rest = url;
  if (rest.substr(0, 8) == "https://") {
    rest.remove_prefix(8);
  } else if (rest.substr(0, 7) == "http://") {
    out.tls = false;
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return bad("scheme must be https or http");
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (path.find_first_of("?#") != std::string_view::npos) {
    return bad("must not carry a query or fragment");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.base_path = std::string(path);
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");
  if (authority.empty()) return bad("no host");
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("unterminated IPv6 literal");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after IPv6 literal");
      port = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      if (authority.find(':') != colon) return bad("IPv6 hosts must be in brackets");
      port = authority.substr(colon + 1);
      authority = authority.substr(0, colon);
    }
    out.host = std::string(authority);
  }
  if (out.host.empty()) return bad("no host");
  if (port.empty()) {
    out.port = out.tls ? "443" : "80";
  } else {
    if (port.size() > 5) return bad("bad port");
    for (char c : port) {
      if (c < '0' || c > '9') return bad("bad port");
    }
    if (std::stoi(std::string(port)) > 65535 || std::stoi(std::string(port)) == 0) {
      return bad("port out of range");
    }
    out.port = std::string(port);
  }
  return out;
}

}  // namespace wasd::kube

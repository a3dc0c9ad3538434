// ParseKubeconfig and InClusterServer: the pure half of config loading.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "kube/config.h"

namespace wasd::kube {
namespace {

Status Bad(const std::string& why) {
  return Status::Error(Status::Kind::kInvalidArgument, "kubeconfig: " + why);
}

// RFC 4648 base64 (standard alphabet), ignoring whitespace; false on junk.
bool DecodeBase64(std::string_view in, std::string& out) {
  out.clear();
  unsigned buffer = 0;
  int bits = 0;
  bool padding = false;
  for (char ch : in) {
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
    if (ch == '=') {
      padding = true;
      continue;
    }
    if (padding) return false;  // data after padding
    int v;
    if (ch >= 'A' && ch <= 'Z') {
      v = ch - 'A';
    } else if (ch >= 'a' && ch <= 'z') {
      v = ch - 'a' + 26;
    } else if (ch >= '0' && ch <= '9') {
      v = ch - '0' + 52;
    } else if (ch == '+') {
      v = 62;
    } else if (ch == '/') {
      v = 63;
    } else {
      return false;
    }
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return true;
}

std::string ResolvePath(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  std::string out(base_dir);
  if (out.back() != '/') out.push_back('/');
  return out + path;
}

// The scalar at `node[key]` as a string; "" when absent. Fails on non-scalars.
bool Scalar(const YAML::Node& node, const char* key, std::string& out, std::string& error) {
  out.clear();
  const YAML::Node v = node[key];
  if (!v || v.IsNull()) return true;
  if (!v.IsScalar()) {
    error = std::string("\"") + key + "\" must be a string";
    return false;
  }
  out = v.Scalar();
  return true;
}

// One document of the merge, parsed.
struct Doc {
  const KubeconfigDocument* source;
  YAML::Node root;
};

// A named entry's body and the document that defined it.
struct Found {
  YAML::Node body;
  const KubeconfigDocument* doc;
};

// Finds the entry named `name` in the list `section` (clusters, users,
// contexts) of the first document that defines it, and returns its `field`
// (cluster, user, context) map: the whole entry comes from that document,
// later documents' entries of the same name are never looked at (kubectl
// merges a $KUBECONFIG list this way).
Result<Found> NamedEntry(const std::vector<Doc>& docs, const char* section, const char* field,
                         const std::string& name) {
  for (const Doc& d : docs) {
    const YAML::Node list = d.root[section];
    if (!list) continue;
    for (const YAML::Node& entry : list) {
      if (!entry.IsMap()) continue;
      const YAML::Node n = entry["name"];
      if (n && n.IsScalar() && n.Scalar() == name) {
        const YAML::Node body = entry[field];
        if (!body || !body.IsMap()) {
          return Bad(std::string(field) + " \"" + name + "\" has no \"" + field + "\" map");
        }
        return Found{body, d.source};
      }
    }
  }
  return Bad(std::string(field) + " \"" + name + "\" does not exist");
}

// With more than one document, an entry's error names the file that
// defined it: "kubeconfig: /a/config: cluster "c1" has no server".
Status InFile(Status s, const KubeconfigDocument& doc, std::size_t docs) {
  if (s.ok() || docs < 2 || doc.path.empty()) return s;
  std::string_view why = s.message();
  if (why.rfind("kubeconfig: ", 0) == 0) why.remove_prefix(12);
  return Bad(doc.path + ": " + std::string(why));
}

Status ParseCluster(const YAML::Node& cluster, const std::string& name, std::string_view base_dir,
                    ParsedKubeconfig& out) {
  std::string error, ca_data, ca_file, insecure;
  if (!Scalar(cluster, "server", out.config.server, error) ||
      !Scalar(cluster, "certificate-authority-data", ca_data, error) ||
      !Scalar(cluster, "certificate-authority", ca_file, error) ||
      !Scalar(cluster, "tls-server-name", out.config.tls_server_name, error) ||
      !Scalar(cluster, "insecure-skip-tls-verify", insecure, error)) {
    return Bad("cluster \"" + name + "\": " + error);
  }
  if (out.config.server.empty()) return Bad("cluster \"" + name + "\" has no server");
  if (insecure == "true") {
    out.config.insecure_skip_tls_verify = true;
  } else if (!insecure.empty() && insecure != "false") {
    return Bad("cluster \"" + name + "\": insecure-skip-tls-verify must be true or false");
  }
  if (!ca_data.empty()) {
    if (!DecodeBase64(ca_data, out.config.ca_pem)) {
      return Bad("cluster \"" + name + "\": certificate-authority-data is not base64");
    }
  } else if (!ca_file.empty()) {
    out.files.certificate_authority = ResolvePath(base_dir, ca_file);
  }
  if (out.config.insecure_skip_tls_verify &&
      (!out.config.ca_pem.empty() || !out.files.certificate_authority.empty())) {
    return Bad("cluster \"" + name +
               "\": a certificate authority and insecure-skip-tls-verify are mutually exclusive");
  }
  return Status::Ok();
}

// users[].user.exec: the ExecCredential plugin (kube/exec_credential.h).
Status ParseExec(const YAML::Node& exec, const std::string& name, ParsedKubeconfig& out) {
  const std::string where = "user \"" + name + "\": exec: ";
  if (!exec.IsMap()) return Bad(where + "must be a map");
  ExecConfig c;
  std::string error, provide;
  if (!Scalar(exec, "apiVersion", c.api_version, error) ||
      !Scalar(exec, "command", c.command, error) ||
      !Scalar(exec, "interactiveMode", c.interactive_mode, error) ||
      !Scalar(exec, "installHint", c.install_hint, error) ||
      !Scalar(exec, "provideClusterInfo", provide, error)) {
    return Bad(where + error);
  }
  if (c.api_version != "client.authentication.k8s.io/v1" &&
      c.api_version != "client.authentication.k8s.io/v1beta1") {
    return Bad(where + "apiVersion \"" + c.api_version +
               "\" is not supported (client.authentication.k8s.io/v1 or v1beta1)");
  }
  if (c.command.empty()) return Bad(where + "command is required");
  if (c.interactive_mode.empty()) {
    if (c.api_version == "client.authentication.k8s.io/v1")
      return Bad(where + "interactiveMode is required");
    c.interactive_mode = "IfAvailable";
  }
  if (c.interactive_mode == "Always") {
    return Bad(where +
               "interactiveMode Always needs a terminal, and wasd runs plugins without one; "
               "use a plugin setting that works non-interactively");
  }
  if (c.interactive_mode != "Never" && c.interactive_mode != "IfAvailable") {
    return Bad(where + "interactiveMode must be Never, IfAvailable or Always");
  }
  c.provide_cluster_info = provide == "true";
  if (const YAML::Node args = exec["args"]) {
    if (!args.IsSequence()) return Bad(where + "args must be a list");
    for (const YAML::Node& a : args) {
      if (!a.IsScalar()) return Bad(where + "args must be strings");
      c.args.push_back(a.as<std::string>());
    }
  }
  if (const YAML::Node env = exec["env"]) {
    if (!env.IsSequence()) return Bad(where + "env must be a list");
    for (const YAML::Node& e : env) {
      std::string n, v;
      if (!e.IsMap() || !Scalar(e, "name", n, error) || !Scalar(e, "value", v, error) ||
          n.empty()) {
        return Bad(where + "env entries need a name and a value");
      }
      c.env.emplace_back(n, v);
    }
  }
  out.config.exec = std::move(c);
  return Status::Ok();
}

Status ParseUser(const YAML::Node& user, const std::string& name, std::string_view base_dir,
                 ParsedKubeconfig& out) {
  for (const char* unsupported : {"auth-provider", "username", "password"}) {
    if (user[unsupported]) {
      return Bad("user \"" + name + "\": \"" + unsupported +
                 "\" authentication is not supported by wasd; use a token, tokenFile, client "
                 "certificate or exec plugin");
    }
  }
  if (const YAML::Node exec = user["exec"]) {
    if (Status s = ParseExec(exec, name, out); !s.ok()) return s;
  }
  std::string error, cert_data, key_data, cert_file, key_file, token_file;
  if (!Scalar(user, "client-certificate-data", cert_data, error) ||
      !Scalar(user, "client-key-data", key_data, error) ||
      !Scalar(user, "client-certificate", cert_file, error) ||
      !Scalar(user, "client-key", key_file, error) ||
      !Scalar(user, "token", out.config.token, error) ||
      !Scalar(user, "tokenFile", token_file, error)) {
    return Bad("user \"" + name + "\": " + error);
  }
  if (!cert_data.empty()) {
    if (!DecodeBase64(cert_data, out.config.client_cert_pem)) {
      return Bad("user \"" + name + "\": client-certificate-data is not base64");
    }
  } else if (!cert_file.empty()) {
    out.files.client_certificate = ResolvePath(base_dir, cert_file);
  }
  if (!key_data.empty()) {
    if (!DecodeBase64(key_data, out.config.client_key_pem)) {
      return Bad("user \"" + name + "\": client-key-data is not base64");
    }
  } else if (!key_file.empty()) {
    out.files.client_key = ResolvePath(base_dir, key_file);
  }
  const bool has_cert =
      !out.config.client_cert_pem.empty() || !out.files.client_certificate.empty();
  const bool has_key = !out.config.client_key_pem.empty() || !out.files.client_key.empty();
  if (has_cert != has_key) {
    return Bad("user \"" + name + "\": client certificate and client key must be given together");
  }
  if (!token_file.empty()) out.config.token_file = ResolvePath(base_dir, token_file);
  return Status::Ok();
}

}  // namespace

Result<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text, std::string_view base_dir,
                                         std::string_view context) {
  KubeconfigSelection selection;
  selection.context = std::string(context);
  return ParseKubeconfig(yaml_text, base_dir, selection);
}

Result<ParsedKubeconfig> ParseKubeconfig(std::string_view yaml_text, std::string_view base_dir,
                                         const KubeconfigSelection& selection) {
  const std::vector<KubeconfigDocument> one = {
      KubeconfigDocument{std::string(), std::string(yaml_text), std::string(base_dir)}};
  return MergeKubeconfigs(one, selection);
}

Result<ParsedKubeconfig> MergeKubeconfigs(const std::vector<KubeconfigDocument>& documents,
                                          const KubeconfigSelection& selection) {
  const std::size_t n = documents.size();
  std::vector<Doc> docs;
  docs.reserve(n);
  for (const KubeconfigDocument& d : documents) {
    // Every document must be well-formed, used or not: a broken file in the
    // list is an error naming it (kubectl refuses it too).
    const std::string where = n > 1 && !d.path.empty() ? d.path + ": " : std::string();
    YAML::Node root;
    try {
      root = YAML::Load(d.text);
    } catch (const YAML::Exception& e) {
      return Bad(where + "not valid YAML: " + e.what());
    }
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);  // an empty file adds nothing
    if (!root.IsMap()) return Bad(where + "not a YAML map");
    for (const char* section : {"clusters", "users", "contexts"}) {
      const YAML::Node list = root[section];
      if (list && !list.IsNull() && !list.IsSequence())
        return Bad(where + "\"" + section + "\" must be a list");
    }
    docs.push_back(Doc{&d, root});
  }
  if (docs.empty()) return Bad("no kubeconfig documents");
  try {
    ParsedKubeconfig out;
    std::string error;
    if (!selection.context.empty()) {
      out.context = selection.context;
    } else {
      // current-context: the first document that sets one.
      for (const Doc& d : docs) {
        if (!Scalar(d.root, "current-context", out.context, error))
          return InFile(Bad(error), *d.source, n);
        if (!out.context.empty()) break;
      }
    }
    std::string cluster_name, user_name, ns;
    if (!out.context.empty()) {
      Result<Found> ctx = NamedEntry(docs, "contexts", "context", out.context);
      if (!ctx.ok()) return ctx.status();
      if (!Scalar(ctx->body, "cluster", cluster_name, error) ||
          !Scalar(ctx->body, "user", user_name, error) ||
          !Scalar(ctx->body, "namespace", ns, error)) {
        return InFile(Bad("context \"" + out.context + "\": " + error), *ctx->doc, n);
      }
    } else if (selection.cluster.empty()) {
      return Bad("no current-context is set and no context was given");
    }
    if (!selection.cluster.empty()) cluster_name = selection.cluster;
    if (!selection.user.empty()) user_name = selection.user;
    if (cluster_name.empty()) return Bad("context \"" + out.context + "\" names no cluster");
    Result<Found> cluster = NamedEntry(docs, "clusters", "cluster", cluster_name);
    if (!cluster.ok()) return cluster.status();
    // Relative paths resolve against the directory of the file that
    // defined the entry.
    if (Status s = ParseCluster(cluster->body, cluster_name, cluster->doc->base_dir, out); !s.ok())
      return InFile(s, *cluster->doc, n);
    out.cluster = cluster_name;
    out.cluster_file = cluster->doc->path;
    if (!user_name.empty()) {
      Result<Found> user = NamedEntry(docs, "users", "user", user_name);
      if (!user.ok()) return user.status();
      if (Status s = ParseUser(user->body, user_name, user->doc->base_dir, out); !s.ok())
        return InFile(s, *user->doc, n);
      out.user = user_name;
    }
    if (!ns.empty()) out.config.namespace_ = ns;
    return out;
  } catch (const YAML::Exception& e) {
    return Bad(std::string("unexpected structure: ") + e.what());
  }
}

std::string InClusterServer(std::string_view host, std::string_view port) {
  if (host.empty()) return {};
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return "https://" + h + (port.empty() ? std::string() : ":" + std::string(port));
}

}  // namespace wasd::kube

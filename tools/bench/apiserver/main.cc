// wasd-bench-apiserver: an in-memory API server fast enough to measure
// `wasd reconciler` at 100,000 pods (tools/bench/RESULTS.md "The reconciler at
// scale"). Bench only: tests/apiserver (Python) stays the reference for API
// server behaviour; this one implements exactly what the reconciler sends,
// plainly, on one thread:
//
//   resources  deployments, replicasets (apps/v1); pods, events (v1; events are
//              counted, not stored); workloads, podgroups
//              (scheduling.k8s.io/v1beta1); leases (coordination.k8s.io/v1);
//              priorityclasses, nodes (cluster-scoped); deployments/status
//              (PATCH, applied to the object as a whole)
//   verbs      LIST (labelSelector k=v[,k=v]; fieldSelector on metadata.name,
//              metadata.namespace and, for pods, spec.nodeName and
//              status.phase, with =, == and !=; limit/continue), WATCH
//              (resourceVersion, from a bounded history; 410 Expired below it;
//              timeoutSeconds; an object that moves into a watch's selection
//              comes as ADDED, one that moves out of it as DELETED, as
//              kube-apiserver's watch cache sends them), GET, POST, PUT (resourceVersion
//              precondition), PATCH (json-patch with `test` ops; merge and strategic-merge patches
//              as RFC 7386), DELETE (uid/resourceVersion preconditions; answered as kube-apiserver
//              answers an immediate deletion: a pod's final state, a Status for every other
//              resource)
//   controllers  Deployment -> ReplicaSet "<name>-<template hash>" (a template
//              change creates a new ReplicaSet and scales the old ones to 0 at
//              once); ReplicaSet -> pods, each created as the pod webhook would
//              leave it (the wasd.io/pod-group gate, spec.schedulingGroup) and
//              padded with the bulk of a realistic pod (--pod-fixture)
//   /debug/apply   POST a JSON array of Deployments: created or replaced (the
//              status kept, as an update of the main resource keeps it)
//   /debug/stats   counts of objects and of the requests of User-Agent "wasd"
//
// Plain HTTP on 127.0.0.1 only, no authentication.
//
//   wasd-bench-apiserver --port 0 --ready-file DIR/ready [--pod-fixture F]
//                        [--pod-hold gate|scheduler]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <csignal>
#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "workloadbuilder/names.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using nlohmann::json;
using Text = std::shared_ptr<const std::string>;

constexpr std::size_t kHistory = 50'000;  // watch events kept per resource (then 410)
constexpr std::size_t kMaxBody = std::size_t{1} << 30;
constexpr int kControllerBatch = 200;  // objects per controller turn

struct ResourceInfo {
  std::string group_version;
  std::string plural;
  std::string kind;
  bool namespaced = true;
  bool stored = true;
};

const std::vector<ResourceInfo> kResources = {
    {"apps/v1", "deployments", "Deployment"},
    {"apps/v1", "replicasets", "ReplicaSet"},
    {"v1", "pods", "Pod"},
    {"v1", "events", "Event", true, false},
    {"scheduling.k8s.io/v1beta1", "workloads", "Workload"},
    {"scheduling.k8s.io/v1beta1", "podgroups", "PodGroup"},
    {"coordination.k8s.io/v1", "leases", "Lease"},
    {"scheduling.k8s.io/v1", "priorityclasses", "PriorityClass", false},
    // The gang doctor's fit preview (--gang-status); POSTed by the bench.
    {"v1", "nodes", "Node", false},
};
enum ResIndex { kDeployments = 0, kReplicaSets = 1, kPods = 2 };

using Labels = std::map<std::string, std::string, std::less<>>;
// The fields a field selector can name ("metadata.name", "spec.nodeName",
// ...; FieldsOf), by value.
using Fields = Labels;

// One fieldSelector term: `key` = (or ==) `value`, or `key` != `value`.
struct FieldTerm {
  std::string key;
  std::string value;
  bool equal = true;
};

struct Selector {
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<FieldTerm> fields;
};

struct Stored {
  Text text;
  std::uint64_t rv = 0;
  std::string uid;
  Labels labels;
  Fields fields;
};

struct Event {
  std::uint64_t rv;
  const char* type;
  Text text;
  std::shared_ptr<const Labels> labels;
  std::shared_ptr<const Fields> fields;
  std::string ns;
  // A MODIFIED event: the object before it (what a watch whose selection it
  // leaves is sent, as DELETED).
  Text prev_text;
  std::shared_ptr<const Labels> prev_labels;
  std::shared_ptr<const Fields> prev_fields;
};

class Session;

struct Watcher {
  std::weak_ptr<Session> session;
  std::string ns;
  Selector selector;
};

struct Store {
  std::map<std::string, Stored, std::less<>> objects;  // "ns/name" or "name"
  std::deque<Event> history;
  std::uint64_t compacted = 0;  // a watch from below this is 410
  std::list<Watcher> watchers;
};

std::string UrlDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned v = 0;
      if (std::sscanf(std::string(s.substr(i + 1, 2)).c_str(), "%2x", &v) == 1) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    const auto amp = q.find('&');
    std::string_view kv = q.substr(0, amp);
    const auto eq = kv.find('=');
    out[UrlDecode(kv.substr(0, eq))] =
        eq == std::string_view::npos ? "" : UrlDecode(kv.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseSelector(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream in(s);
  std::string term;
  while (std::getline(in, term, ',')) {
    const auto eq = term.find('=');
    if (eq == std::string::npos) {
      out.emplace_back(term, "\x01");  // exists
    } else {
      std::string v = term.substr(eq + 1);
      if (!v.empty() && v[0] == '=') v.erase(0, 1);
      out.emplace_back(term.substr(0, eq), v);
    }
  }
  return out;
}

bool Matches(const std::vector<std::pair<std::string, std::string>>& sel, const Labels& labels) {
  for (const auto& [k, v] : sel) {
    auto it = labels.find(k);
    if (it == labels.end()) return false;
    if (v != "\x01" && it->second != v) return false;
  }
  return true;
}

// The fields kube-apiserver lets a fieldSelector name, per resource: every
// object's metadata.name and metadata.namespace; a pod's spec.nodeName and
// status.phase (the ones wasd selects on; kube has a few more).
bool FieldSupported(int res, std::string_view key) {
  if (key == "metadata.name" || key == "metadata.namespace") return true;
  return res == kPods && (key == "spec.nodeName" || key == "status.phase");
}

// Parses a fieldSelector ("k=v,k!=v"); false (and `error`, worded as
// kube-apiserver's) on a field `res` does not support or a term that is not
// a comparison.
bool ParseFieldSelector(int res, const std::string& s, std::vector<FieldTerm>* out,
                        std::string* error) {
  std::stringstream in(s);
  std::string term;
  while (std::getline(in, term, ',')) {
    if (term.empty()) continue;
    FieldTerm f;
    std::size_t at = term.find("!=");
    std::size_t width = 2;
    if (at != std::string::npos) {
      f.equal = false;
    } else if ((at = term.find("==")) == std::string::npos) {
      at = term.find('=');
      width = 1;
    }
    if (at == std::string::npos) {
      *error = "invalid selector: '" + s + "'; can't understand '" + term + "'";
      return false;
    }
    f.key = term.substr(0, at);
    f.value = term.substr(at + width);
    if (!FieldSupported(res, f.key)) {
      *error = "field label not supported: " + f.key;
      return false;
    }
    out->push_back(std::move(f));
  }
  return true;
}

Labels LabelsOf(const json& obj) {
  Labels out;
  auto md = obj.find("metadata");
  if (md == obj.end() || !md->is_object()) return out;
  auto l = md->find("labels");
  if (l == md->end() || !l->is_object()) return out;
  for (auto it = l->begin(); it != l->end(); ++it) {
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  }
  return out;
}

std::string Str(const json& j, std::initializer_list<const char*> path) {
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object()) return {};
    auto it = p->find(k);
    if (it == p->end()) return {};
    p = &*it;
  }
  return p->is_string() ? p->get<std::string>() : std::string();
}

// A pod's selectable fields (FieldSupported).
Fields PodFields(const std::string& name, const std::string& ns, const std::string& node,
                 const std::string& phase) {
  return {{"metadata.name", name},
          {"metadata.namespace", ns},
          {"spec.nodeName", node},
          {"status.phase", phase}};
}

Fields FieldsOf(int res, const json& obj) {
  const std::string name = Str(obj, {"metadata", "name"});
  const std::string ns = Str(obj, {"metadata", "namespace"});
  if (res == kPods) {
    return PodFields(name, ns, Str(obj, {"spec", "nodeName"}), Str(obj, {"status", "phase"}));
  }
  return {{"metadata.name", name}, {"metadata.namespace", ns}};
}

bool Selects(const Selector& sel, const Labels& labels, const Fields& fields) {
  if (!Matches(sel.labels, labels)) return false;
  for (const FieldTerm& f : sel.fields) {
    const auto it = fields.find(f.key);
    const std::string_view have = it == fields.end() ? std::string_view() : it->second;
    if ((have == f.value) != f.equal) return false;
  }
  return true;
}

// What a watch with `sel` is sent of event `e`, as kube-apiserver's watch
// cache filters it: the event itself when the object is selected before and
// after; ADDED when it moves into the selection; DELETED, with the object as
// it was (at the event's resourceVersion), when it moves out; nothing (null)
// when it is outside both times. `*text`: the object to send.
const char* Seen(const Selector& sel, const Event& e, Text* text) {
  const bool now_in = Selects(sel, *e.labels, *e.fields);
  *text = e.text;
  if (e.prev_labels == nullptr) return now_in ? e.type : nullptr;
  const bool was_in = Selects(sel, *e.prev_labels, *e.prev_fields);
  if (now_in) return was_in ? e.type : "ADDED";
  if (!was_in) return nullptr;
  json old = json::parse(*e.prev_text);
  old["metadata"]["resourceVersion"] = std::to_string(e.rv);
  *text = std::make_shared<const std::string>(old.dump());
  return "DELETED";
}

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}}
      .dump();
}

std::string Now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t Fnv(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

// "bcdfghjklmnpqrstvwxz2456789", as the Deployment controller's hash.
std::string SafeHash(std::uint64_t h, int n) {
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += kAlphabet[h % 27];
    h /= 27;
  }
  return out;
}

struct Reply {
  int code = 200;
  std::string body;
};

class Server;

// One connection: requests one at a time; a WATCH turns it into a stream of
// chunks until the client goes, the watch times out or the server stops.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server& server) : socket_(std::move(socket)), server_(server) {}
  void Start() { Read(); }
  // Queues one watch event as a chunk (no copy of the object text).
  void SendEvent(const char* type, const Text& text);
  void EndWatch();
  void StartWatch(std::uint64_t timeout_seconds);
  bool watching() const { return watching_; }

 private:
  void Read();
  void OnRequest();
  void WriteReply(Reply r, bool keep_alive);
  void Flush();

  tcp::socket socket_;
  Server& server_;
  beast::flat_buffer buffer_;
  std::unique_ptr<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  bool watching_ = false;
  bool ended_ = false;
  struct Chunk {
    std::string head;
    Text text;
    std::string tail;
  };
  std::deque<Chunk> queue_;
  bool writing_ = false;
  std::unique_ptr<asio::steady_timer> watch_timer_;
};

class Server {
 public:
  // `pod_gate`: pods are created with the gate wasd.io/pod-group (the
  // webhook's --pod-hold native=gate); false: without it (scheduler hold).
  Server(asio::io_context& io, tcp::acceptor& acceptor, json pod_fixture, bool pod_gate = true)
      : io_(io), acceptor_(acceptor), stores_(kResources.size()) {
    pod_gate_ = pod_gate;
    PreparePodParts(std::move(pod_fixture));
  }

  // --bind-pods N: every pod is created bound to node-(i mod N), Running
  // (what a placed gang looks like; the gang doctor's bound-pod informer
  // then caches them all). --unschedulable-every K: the pods of one
  // ReplicaSet in K (by name) are created unbound with the scheduler's
  // PodScheduled=False/Unschedulable verdict, so the doctor starts its fit
  // preview's Node and bound-pod informers.
  void SetPlacement(std::int64_t bind_nodes, std::int64_t unschedulable_every) {
    bind_nodes_ = bind_nodes;
    unschedulable_every_ = unschedulable_every;
  }

  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (!ec) {
        s.set_option(tcp::no_delay(true));
        std::make_shared<Session>(std::move(s), *this)->Start();
      }
      Accept();
    });
  }

  // Handles one request; a watch registers `session` and returns code 0.
  Reply Handle(const http::request<http::string_body>& req,
               const std::shared_ptr<Session>& session);

 private:
  struct Target {
    int res = -1;
    std::string ns;
    std::string name;
    std::map<std::string, std::string> query;
    bool status = false;  // deployments/status: patched as the object itself
  };
  bool ParseTarget(std::string_view target, Target& t) const;
  Reply Dispatch(const http::request<http::string_body>& req, Target& t,
                 const std::shared_ptr<Session>& session);
  Reply Get(const Target& t);
  Reply List(const Target& t);
  Reply Watch(const Target& t, const std::shared_ptr<Session>& session);
  Reply Create(int res, const std::string& ns, json obj);
  Reply Update(const Target& t, json obj);
  Reply Patch(const Target& t, const std::string& content_type, const std::string& body);
  Reply Delete(const Target& t, const std::string& body);
  Reply Stats() const;
  Reply Apply(const std::string& body);
  std::int64_t ReplicaSetsWithoutGroup() const;

  // Stores `obj` (metadata.resourceVersion set here) and tells the watchers.
  const Stored& Put(int res, const std::string& key, json& obj, const char* type);
  void Remove(int res, const std::string& key);
  // `prev`: the object before a MODIFIED event (null for the others).
  void Notify(int res, const char* type, const Stored& s, const std::string& ns,
              const Stored* prev = nullptr);
  // The selectors of a LIST or WATCH; false and a 400 reply when the
  // fieldSelector is not one kube-apiserver would take.
  static bool SelectorOf(const Target& t, Selector* sel, Reply* bad);
  void Changed(int res, const std::string& key);

  // Controllers.
  void Kick();
  void RunControllers();
  void SyncDeployment(const std::string& key);
  void SyncReplicaSet(const std::string& key);
  void PreparePodParts(json fixture);
  std::string PodText(json& rs, const std::string& name, const std::string& uid, std::uint64_t rv,
                      const std::string& node, const std::string& status);

  std::string NewUid() {
    char buf[40];
    std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012llx",
                  static_cast<unsigned long long>(++uids_));
    return buf;
  }

  asio::io_context& io_;
  tcp::acceptor& acceptor_;
  std::vector<Store> stores_;
  std::uint64_t rv_ = 1000;
  std::uint64_t uids_ = 0;
  std::uint64_t pod_names_ = 0;
  // Indexes of the controllers.
  std::map<std::string, std::set<std::string>> rs_of_deployment_;
  std::map<std::string, std::set<std::string>> pods_of_rs_;
  std::set<std::string> gated_pods_;
  bool pod_gate_ = true;
  std::int64_t bind_nodes_ = 0;
  std::int64_t unschedulable_every_ = 0;
  std::uint64_t pods_bound_ = 0;
  std::map<std::string, std::string> rs_of_group_;  // --bind-pods: ns/PodGroup -> its ReplicaSet
  std::string NextNode() {
    return "node-" + std::to_string(pods_bound_++ % static_cast<std::uint64_t>(bind_nodes_));
  }
  void BindGroup(const std::string& group_key);
  // pod_status_running_ with PodScheduled's lastTransitionTime = now (the
  // gang doctor compares it with the PodGroup's creation).
  std::string RunningStatusNow() const {
    std::string out = pod_status_running_;
    const std::size_t at = out.find("@BOUND@");
    if (at != std::string::npos) out.replace(at, 7, Now());
    return out;
  }
  // Wall-clock seconds of the last pod created, the last gate lifted, and
  // the last write per resource (the gang bench's timings, /debug/stats).
  double last_pod_created_ = 0;
  double last_gate_lifted_ = 0;
  std::map<int, double> last_write_;
  std::int64_t pods_wanted_ = 0;
  std::map<std::string, std::int64_t> rs_replicas_;
  std::deque<std::string> deployment_queue_;
  std::deque<std::string> rs_queue_;
  std::set<std::string> deployment_queued_;
  std::set<std::string> rs_queued_;
  bool kicked_ = false;
  // Counters: "METHOD resource" of requests with User-Agent "wasd".
  std::map<std::string, std::uint64_t> wasd_requests_;
  std::uint64_t requests_ = 0;
  std::uint64_t wasd_total_ = 0;
  std::uint64_t watch_events_sent_ = 0;
  // Pieces of the padded pod text (--pod-fixture).
  std::string pod_managed_fields_;
  std::string pod_spec_rest_;
  std::string pod_status_;
  std::string pod_status_running_;        // --bind-pods
  std::string pod_status_unschedulable_;  // --unschedulable-every
};

bool Server::ParseTarget(std::string_view target, Target& t) const {
  const auto qpos = target.find('?');
  std::string_view path = target.substr(0, qpos);
  if (qpos != std::string_view::npos) t.query = ParseQuery(target.substr(qpos + 1));
  std::vector<std::string> parts;
  while (!path.empty()) {
    if (path[0] == '/') {
      path.remove_prefix(1);
      continue;
    }
    const auto slash = path.find('/');
    parts.push_back(UrlDecode(path.substr(0, slash)));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  std::string gv;
  std::size_t i = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    gv = parts[1];
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    gv = parts[1] + "/" + parts[2];
    i = 3;
  } else {
    return false;
  }
  if (i + 1 < parts.size() && parts[i] == "namespaces") {
    t.ns = parts[i + 1];
    i += 2;
  }
  if (i >= parts.size()) return false;
  for (std::size_t r = 0; r < kResources.size(); ++r) {
    if (kResources[r].group_version == gv && kResources[r].plural == parts[i]) t.res = int(r);
  }
  if (t.res < 0) return false;
  if (i + 1 < parts.size()) t.name = parts[i + 1];
  // The one subresource: deployments/status (the GangScheduled condition).
  if (t.res == kDeployments && i + 3 == parts.size() && parts[i + 2] == "status") {
    t.status = true;
    return true;
  }
  return i + 2 >= parts.size();
}

Reply Server::Handle(const http::request<http::string_body>& req,
                     const std::shared_ptr<Session>& session) {
  ++requests_;
  const std::string_view target(req.target().data(), req.target().size());
  if (target == "/debug/stats") return Stats();
  if (target == "/debug/apply" && req.method() == http::verb::post) return Apply(req.body());
  if (target == "/healthz" || target == "/readyz") return {200, "ok"};
  // Discovery of scheduling.k8s.io (the reconciler asks which version serves
  // Workloads and PodGroups): v1beta1, as kResources serves them.
  if (target == "/apis/scheduling.k8s.io/v1beta1" && req.method() == http::verb::get) {
    return {
        200,
        R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"scheduling.k8s.io/v1beta1",)"
        R"("resources":[{"name":"workloads","namespaced":true,"kind":"Workload"},)"
        R"({"name":"podgroups","namespaced":true,"kind":"PodGroup"}]})"};
  }
  Target t;
  if (!ParseTarget(target, t)) {
    return {404, StatusBody(404, "NotFound", "the server could not find the requested resource")};
  }
  Reply reply = Dispatch(req, t, session);
  const auto ua = req.find(http::field::user_agent);
  if (ua != req.end() && ua->value() == "wasd") {
    std::string verb(req.method_string());
    if (req.method() == http::verb::get) {
      verb = !t.name.empty() ? "GET" : (t.query.count("watch") ? "WATCH" : "LIST");
    }
    std::string label =
        verb + " " + kResources[std::size_t(t.res)].plural + (t.status ? "/status" : "");
    if (reply.code >= 400) label += " (failed " + std::to_string(reply.code) + ")";
    ++wasd_requests_[label];
    ++wasd_total_;
  }
  return reply;
}

Reply Server::Dispatch(const http::request<http::string_body>& req, Target& t,
                       const std::shared_ptr<Session>& session) {
  switch (req.method()) {
    case http::verb::get:
      if (!t.name.empty()) return Get(t);
      if (t.query.count("watch") && t.query["watch"] != "false" && t.query["watch"] != "0") {
        return Watch(t, session);
      }
      return List(t);
    case http::verb::post: {
      json obj = json::parse(req.body(), nullptr, false);
      if (!obj.is_object())
        return {400, StatusBody(400, "BadRequest", "body is not a JSON object")};
      return Create(t.res, t.ns, std::move(obj));
    }
    case http::verb::put: {
      json obj = json::parse(req.body(), nullptr, false);
      if (!obj.is_object())
        return {400, StatusBody(400, "BadRequest", "body is not a JSON object")};
      return Update(t, std::move(obj));
    }
    case http::verb::patch: {
      const auto ct = req.find(http::field::content_type);
      return Patch(t, ct == req.end() ? "" : std::string(ct->value()), req.body());
    }
    case http::verb::delete_: return Delete(t, req.body());
    default: return {405, StatusBody(405, "MethodNotAllowed", "method not allowed")};
  }
}

Reply Server::Get(const Target& t) {
  const Store& st = stores_[std::size_t(t.res)];
  auto it = st.objects.find(t.ns.empty() ? t.name : t.ns + "/" + t.name);
  if (it == st.objects.end()) {
    return {404,
            StatusBody(404, "NotFound",
                       kResources[std::size_t(t.res)].plural + " \"" + t.name + "\" not found")};
  }
  return {200, *it->second.text};
}

bool Server::SelectorOf(const Target& t, Selector* sel, Reply* bad) {
  const auto query = [&t](const char* key) {
    const auto it = t.query.find(key);
    return it == t.query.end() ? std::string() : it->second;
  };
  sel->labels = ParseSelector(query("labelSelector"));
  std::string error;
  if (!ParseFieldSelector(t.res, query("fieldSelector"), &sel->fields, &error)) {
    *bad = {400, StatusBody(400, "BadRequest", error)};
    return false;
  }
  return true;
}

Reply Server::List(const Target& t) {
  const ResourceInfo& info = kResources[std::size_t(t.res)];
  const Store& st = stores_[std::size_t(t.res)];
  Selector sel;
  if (Reply bad; !SelectorOf(t, &sel, &bad)) return bad;
  std::int64_t limit = 0;
  if (auto it = t.query.find("limit"); it != t.query.end()) limit = std::atoll(it->second.c_str());
  std::string start;
  if (auto it = t.query.find("continue"); it != t.query.end()) start = it->second;
  const std::string prefix = t.ns.empty() ? "" : t.ns + "/";
  auto it = start.empty() ? st.objects.lower_bound(prefix) : st.objects.upper_bound(start);
  std::string items;
  std::int64_t n = 0;
  std::string next;
  for (; it != st.objects.end() && it->first.starts_with(prefix); ++it) {
    if (!Selects(sel, it->second.labels, it->second.fields)) continue;
    if (limit > 0 && n == limit) {
      next = std::prev(it)->first;
      break;
    }
    if (n++ > 0) items += ',';
    items += *it->second.text;
  }
  json meta = {{"resourceVersion", std::to_string(rv_)}};
  // The key of the last item returned: the next page starts after it.
  if (!next.empty()) meta["continue"] = next;
  std::string body = R"({"kind":")" + info.kind + R"(List","apiVersion":")" + info.group_version +
                     R"(","metadata":)" + meta.dump() + R"(,"items":[)";
  body += items;
  body += "]}";
  return {200, std::move(body)};
}

Reply Server::Watch(const Target& t, const std::shared_ptr<Session>& session) {
  Store& st = stores_[std::size_t(t.res)];
  Watcher w{session, t.ns, {}};
  if (Reply bad; !SelectorOf(t, &w.selector, &bad)) return bad;
  std::uint64_t timeout = 0;
  if (auto it = t.query.find("timeoutSeconds"); it != t.query.end())
    timeout = std::strtoull(it->second.c_str(), nullptr, 10);
  session->StartWatch(timeout);
  const std::string rv_text = t.query.count("resourceVersion") ? t.query.at("resourceVersion") : "";
  const std::string prefix = t.ns.empty() ? "" : t.ns + "/";
  if (rv_text.empty() || rv_text == "0") {
    for (const auto& [key, s] : st.objects) {
      if (key.starts_with(prefix) && Selects(w.selector, s.labels, s.fields))
        session->SendEvent("ADDED", s.text);
    }
  } else {
    const std::uint64_t from = std::strtoull(rv_text.c_str(), nullptr, 10);
    if (from < st.compacted) {
      auto status = std::make_shared<const std::string>(
          StatusBody(410, "Expired", "too old resource version: " + rv_text));
      session->SendEvent("ERROR", status);
      session->EndWatch();
      return {0, ""};
    }
    auto it = std::upper_bound(st.history.begin(), st.history.end(), from,
                               [](std::uint64_t v, const Event& e) { return v < e.rv; });
    for (; it != st.history.end(); ++it) {
      Text text;
      const char* seen = t.ns.empty() || it->ns == t.ns ? Seen(w.selector, *it, &text) : nullptr;
      if (seen != nullptr) session->SendEvent(seen, text);
    }
  }
  st.watchers.push_back(std::move(w));
  return {0, ""};
}

const Stored& Server::Put(int res, const std::string& key, json& obj, const char* type) {
  Store& st = stores_[std::size_t(res)];
  obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
  Stored s;
  s.rv = rv_;
  s.uid = Str(obj, {"metadata", "uid"});
  s.labels = LabelsOf(obj);
  s.fields = FieldsOf(res, obj);
  s.text = std::make_shared<const std::string>(obj.dump());
  const std::string ns = Str(obj, {"metadata", "namespace"});
  Stored& slot = st.objects[key];
  const Stored prev = std::move(slot);
  slot = std::move(s);
  Notify(res, type, slot, ns, prev.text != nullptr ? &prev : nullptr);
  return slot;
}

void Server::Notify(int res, const char* type, const Stored& s, const std::string& ns,
                    const Stored* prev) {
  Store& st = stores_[std::size_t(res)];
  Event e{s.rv,
          type,
          s.text,
          std::make_shared<const Labels>(s.labels),
          std::make_shared<const Fields>(s.fields),
          ns,
          {},
          {},
          {}};
  if (prev != nullptr) {
    e.prev_text = prev->text;
    e.prev_labels = std::make_shared<const Labels>(prev->labels);
    e.prev_fields = std::make_shared<const Fields>(prev->fields);
  }
  st.history.push_back(std::move(e));
  const Event& ev = st.history.back();
  while (st.history.size() > kHistory) {
    st.compacted = st.history.front().rv;
    st.history.pop_front();
  }
  for (auto it = st.watchers.begin(); it != st.watchers.end();) {
    auto session = it->session.lock();
    if (!session || !session->watching()) {
      it = st.watchers.erase(it);
      continue;
    }
    Text text;
    const char* seen = it->ns.empty() || it->ns == ns ? Seen(it->selector, ev, &text) : nullptr;
    if (seen != nullptr) {
      session->SendEvent(seen, text);
      ++watch_events_sent_;
    }
    ++it;
  }
}

Reply Server::Create(int res, const std::string& ns, json obj) {
  const ResourceInfo& info = kResources[std::size_t(res)];
  json& md = obj["metadata"];
  if (!md.is_object()) return {422, StatusBody(422, "Invalid", "metadata must be an object")};
  std::string name = Str(obj, {"metadata", "name"});
  if (name.empty()) {
    const std::string gen = Str(obj, {"metadata", "generateName"});
    if (gen.empty()) return {422, StatusBody(422, "Invalid", "metadata.name: Required value")};
    name = gen + SafeHash(++uids_ * 7919, 5);
    md["name"] = name;
  }
  if (info.namespaced) md["namespace"] = ns;
  md["uid"] = NewUid();
  md["creationTimestamp"] = Now();
  if (!info.stored) {
    md["resourceVersion"] = std::to_string(++rv_);
    return {201, obj.dump()};
  }
  const std::string key = info.namespaced ? ns + "/" + name : name;
  Store& st = stores_[std::size_t(res)];
  if (st.objects.count(key)) {
    return {409,
            StatusBody(409, "AlreadyExists", info.plural + " \"" + name + "\" already exists")};
  }
  const Stored& s = Put(res, key, obj, "ADDED");
  Changed(res, key);
  Reply reply{201, *s.text};
  if (res == 5 && bind_nodes_ > 0) BindGroup(key);
  return reply;
}

// --bind-pods: the pods of the ReplicaSet whose PodGroup was just created
// are bound and Running (the ReplicaSets picked by --unschedulable-every
// stay unbound).
void Server::BindGroup(const std::string& group_key) {
  const auto g = rs_of_group_.find(group_key);
  if (g == rs_of_group_.end()) return;
  const std::string rs_key = g->second;
  if (unschedulable_every_ > 0 && std::hash<std::string>{}(rs_key) % unschedulable_every_ == 0) {
    return;
  }
  const auto rs_it = stores_[kReplicaSets].objects.find(rs_key);
  if (rs_it == stores_[kReplicaSets].objects.end()) return;
  json rs = json::parse(*rs_it->second.text);
  const std::string ns = rs_key.substr(0, rs_key.find('/'));
  for (const std::string& pod_key : pods_of_rs_[rs_key]) {
    auto it = stores_[kPods].objects.find(pod_key);
    if (it == stores_[kPods].objects.end() || it->second.fields["spec.nodeName"] != "") continue;
    const Stored prev = it->second;
    Stored& p = it->second;
    const std::string name = pod_key.substr(pod_key.find('/') + 1);
    const std::string node = NextNode();
    p.rv = ++rv_;
    p.fields = PodFields(name, ns, node, "Running");
    p.text = std::make_shared<const std::string>(
        PodText(rs, name, p.uid, p.rv, node, RunningStatusNow()));
    Notify(kPods, "MODIFIED", p, ns, &prev);
  }
}

Reply Server::Update(const Target& t, json obj) {
  Store& st = stores_[std::size_t(t.res)];
  const std::string key = t.ns.empty() ? t.name : t.ns + "/" + t.name;
  auto it = st.objects.find(key);
  if (it == st.objects.end())
    return {404, StatusBody(404, "NotFound", "\"" + t.name + "\" not found")};
  const std::string rv = Str(obj, {"metadata", "resourceVersion"});
  if (!rv.empty() && rv != std::to_string(it->second.rv)) {
    return {409, StatusBody(409, "Conflict",
                            "Operation cannot be fulfilled on " +
                                kResources[std::size_t(t.res)].plural + " \"" + t.name +
                                "\": the object has been modified; please apply your changes to "
                                "the latest version and try again")};
  }
  json old = json::parse(*it->second.text);
  obj["metadata"]["uid"] = old["metadata"]["uid"];
  obj["metadata"]["creationTimestamp"] = old["metadata"].value("creationTimestamp", Now());
  // A PUT of the main resource leaves status alone (every resource here
  // that has one serves it as a subresource in kube-apiserver).
  if (!t.status) {
    if (old.contains("status")) {
      obj["status"] = old["status"];
    } else {
      obj.erase("status");
    }
  }
  if (!t.ns.empty()) obj["metadata"]["namespace"] = t.ns;
  const Stored& s = Put(t.res, key, obj, "MODIFIED");
  Changed(t.res, key);
  return {200, *s.text};
}

Reply Server::Patch(const Target& t, const std::string& content_type, const std::string& body) {
  Store& st = stores_[std::size_t(t.res)];
  const std::string key = t.ns.empty() ? t.name : t.ns + "/" + t.name;
  auto it = st.objects.find(key);
  if (it == st.objects.end())
    return {404, StatusBody(404, "NotFound", "\"" + t.name + "\" not found")};
  json patch = json::parse(body, nullptr, false);
  if (patch.is_discarded()) return {400, StatusBody(400, "BadRequest", "patch is not JSON")};
  json obj = json::parse(*it->second.text);
  try {
    if (content_type.starts_with("application/json-patch+json")) {
      obj = obj.patch(patch);
    } else {
      obj.merge_patch(patch);
    }
  } catch (const std::exception& e) {
    return {422, StatusBody(422, "Invalid", std::string("the patch does not apply: ") + e.what())};
  }
  if (!obj.is_object() || Str(obj, {"metadata", "uid"}) != it->second.uid) {
    return {422, StatusBody(422, "Invalid", "metadata.uid: field is immutable")};
  }
  const Stored& s = Put(t.res, key, obj, "MODIFIED");
  Changed(t.res, key);
  return {200, *s.text};
}

Reply Server::Delete(const Target& t, const std::string& body) {
  Store& st = stores_[std::size_t(t.res)];
  const std::string key = t.ns.empty() ? t.name : t.ns + "/" + t.name;
  auto it = st.objects.find(key);
  if (it == st.objects.end())
    return {404, StatusBody(404, "NotFound", "\"" + t.name + "\" not found")};
  const json opts = body.empty() ? json::object() : json::parse(body, nullptr, false);
  const std::string want_uid = opts.is_object() ? Str(opts, {"preconditions", "uid"}) : "";
  const std::string rv = opts.is_object() ? Str(opts, {"preconditions", "resourceVersion"}) : "";
  if ((!want_uid.empty() && want_uid != it->second.uid) ||
      (!rv.empty() && rv != std::to_string(it->second.rv))) {
    return {409, StatusBody(409, "Conflict", "Precondition failed for \"" + t.name + "\"")};
  }
  json obj = json::parse(*it->second.text);
  const std::string uid = it->second.uid;
  Remove(t.res, key);
  // As kube-apiserver answers an object deleted at once (no finalizers in
  // this server): pods with their final state (the pod registry's
  // ReturnDeletedObject), every other built-in resource with a Status.
  if (t.res == kPods) {
    obj["metadata"]["resourceVersion"] = std::to_string(rv_);
    return {200, obj.dump()};
  }
  const ResourceInfo& info = kResources[std::size_t(t.res)];
  const auto slash = info.group_version.find('/');
  const std::string group = slash == std::string::npos ? "" : info.group_version.substr(0, slash);
  const json status = {
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", json::object()},
      {"status", "Success"},
      {"details", {{"name", t.name}, {"group", group}, {"kind", info.plural}, {"uid", uid}}}};
  return {200, status.dump()};
}

void Server::Remove(int res, const std::string& key) {
  Store& st = stores_[std::size_t(res)];
  auto it = st.objects.find(key);
  if (it == st.objects.end()) return;
  json obj = json::parse(*it->second.text);
  obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
  Stored gone = std::move(it->second);
  gone.rv = rv_;
  gone.text = std::make_shared<const std::string>(obj.dump());
  st.objects.erase(it);
  Notify(res, "DELETED", gone, Str(obj, {"metadata", "namespace"}));
  if (res == kPods) {
    gated_pods_.erase(key);
    const auto slash = key.find('/');
    for (const auto& ref : obj["metadata"].value("ownerReferences", json::array())) {
      pods_of_rs_[key.substr(0, slash) + "/" + ref.value("name", "")].erase(key);
    }
  }
}

// Index upkeep and controller wake-ups after a write.
double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Server::Changed(int res, const std::string& key) {
  last_write_[res] = WallSeconds();
  if (res == kDeployments) {
    if (deployment_queued_.insert(key).second) deployment_queue_.push_back(key);
    Kick();
  } else if (res == kReplicaSets) {
    if (rs_queued_.insert(key).second) rs_queue_.push_back(key);
    Kick();
  } else if (res == kPods) {
    const Stored& s = stores_[kPods].objects.at(key);
    // Gated: the pod's text names the gate (the bench's pods carry no other).
    if (s.text->find("\"wasd.io/pod-group\"}") != std::string::npos) {
      gated_pods_.insert(key);
    } else if (gated_pods_.erase(key) > 0) {
      last_gate_lifted_ = WallSeconds();
    }
  }
}

void Server::Kick() {
  if (kicked_) return;
  kicked_ = true;
  asio::post(io_, [this] { RunControllers(); });
}

void Server::RunControllers() {
  kicked_ = false;
  int budget = kControllerBatch;
  while (budget-- > 0 && !deployment_queue_.empty()) {
    const std::string key = deployment_queue_.front();
    deployment_queue_.pop_front();
    deployment_queued_.erase(key);
    SyncDeployment(key);
  }
  while (budget-- > 0 && !rs_queue_.empty()) {
    const std::string key = rs_queue_.front();
    rs_queue_.pop_front();
    rs_queued_.erase(key);
    SyncReplicaSet(key);
  }
  if (!deployment_queue_.empty() || !rs_queue_.empty()) Kick();
}

void Server::SyncDeployment(const std::string& key) {
  auto it = stores_[kDeployments].objects.find(key);
  if (it == stores_[kDeployments].objects.end()) return;
  json d = json::parse(*it->second.text);
  const std::string ns = Str(d, {"metadata", "namespace"});
  const std::string name = Str(d, {"metadata", "name"});
  const std::int64_t replicas = d["spec"].value("replicas", 1);
  json tmpl = d["spec"].value("template", json::object());
  const std::string hash = SafeHash(Fnv(tmpl.dump()), 10);
  const std::string rs_name = name + "-" + hash;
  const std::string rs_key = ns + "/" + rs_name;
  auto& owned = rs_of_deployment_[key];
  owned.insert(rs_key);
  for (const std::string& other : owned) {
    auto rit = stores_[kReplicaSets].objects.find(other);
    if (rit == stores_[kReplicaSets].objects.end()) continue;
    const std::int64_t want = other == rs_key ? replicas : 0;
    json rs = json::parse(*rit->second.text);
    if (rs["spec"].value("replicas", std::int64_t{-1}) == want) continue;
    rs["spec"]["replicas"] = want;
    Put(kReplicaSets, other, rs, "MODIFIED");
    Changed(kReplicaSets, other);
  }
  if (stores_[kReplicaSets].objects.count(rs_key)) return;
  tmpl["metadata"]["labels"]["pod-template-hash"] = hash;
  json labels = tmpl["metadata"]["labels"];
  json rs = {
      {"apiVersion", "apps/v1"},
      {"kind", "ReplicaSet"},
      {"metadata",
       {{"name", rs_name},
        {"namespace", ns},
        {"uid", NewUid()},
        {"creationTimestamp", Now()},
        {"labels", labels},
        {"annotations", {{"deployment.kubernetes.io/revision", "1"}}},
        {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                          {"kind", "Deployment"},
                                          {"name", name},
                                          {"uid", d["metadata"]["uid"]},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})}}},
      {"spec",
       {{"replicas", replicas}, {"selector", {{"matchLabels", labels}}}, {"template", tmpl}}}};
  Put(kReplicaSets, rs_key, rs, "ADDED");
  Changed(kReplicaSets, rs_key);
}

void Server::SyncReplicaSet(const std::string& key) {
  auto it = stores_[kReplicaSets].objects.find(key);
  if (it == stores_[kReplicaSets].objects.end()) return;
  json rs = json::parse(*it->second.text);
  const std::string ns = Str(rs, {"metadata", "namespace"});
  const std::int64_t want = rs["spec"].value("replicas", 0);
  pods_wanted_ += want - rs_replicas_[key];
  rs_replicas_[key] = want;
  auto& pods = pods_of_rs_[key];
  while (static_cast<std::int64_t>(pods.size()) > want) {
    const std::string victim = *pods.rbegin();
    Remove(kPods, victim);  // also erases it from `pods`
    pods.erase(victim);
  }
  while (static_cast<std::int64_t>(pods.size()) < want) {
    const std::string name = Str(rs, {"metadata", "name"}) + "-" + SafeHash(++pod_names_, 5);
    const std::string pod_key = ns + "/" + name;
    Store& st = stores_[kPods];
    Stored s;
    s.rv = ++rv_;
    s.uid = NewUid();
    s.labels = LabelsOf(rs["spec"]["template"]);
    // --unschedulable-every / --bind-pods: placed, or judged unplaceable.
    const bool unschedulable =
        unschedulable_every_ > 0 && std::hash<std::string>{}(key) % unschedulable_every_ == 0;
    // --bind-pods: as a scheduler that holds, a pod is bound once its
    // PodGroup exists (BindGroup binds the earlier ones when it is created).
    const std::string group = ns + "/" +
                              wasd::workloadbuilder::PodGroupName(Str(rs, {"metadata", "name"}),
                                                                  Str(rs, {"metadata", "uid"}));
    if (bind_nodes_ > 0) rs_of_group_[group] = key;
    std::string node;
    if (bind_nodes_ > 0 && !unschedulable && stores_[5].objects.count(group) > 0) {
      node = NextNode();
    }
    const std::string status = unschedulable  ? pod_status_unschedulable_
                               : node.empty() ? pod_status_
                                              : RunningStatusNow();
    s.fields = PodFields(name, ns, node, node.empty() ? "Pending" : "Running");  // as PodText
    s.text = std::make_shared<const std::string>(PodText(rs, name, s.uid, s.rv, node, status));
    Stored& slot = st.objects[pod_key] = std::move(s);
    pods.insert(pod_key);
    if (pod_gate_ && node.empty()) gated_pods_.insert(pod_key);
    last_pod_created_ = WallSeconds();
    Notify(kPods, "ADDED", slot, ns);
  }
}

void Server::PreparePodParts(json fixture) {
  if (!fixture.is_object()) fixture = json::object();
  json& md = fixture["metadata"];
  pod_managed_fields_ = md.is_object() && md.contains("managedFields") ? md["managedFields"].dump()
                                                                       : std::string("[]");
  json rest = fixture.value("spec", json::object());
  for (const char* k : {"containers", "nodeName", "schedulingGroup", "schedulingGates",
                        "schedulerName", "priorityClassName", "priority"}) {
    rest.erase(k);
  }
  std::string r = rest.dump();
  pod_spec_rest_ = r.size() > 2 ? r.substr(1, r.size() - 2) : "";
  json status = fixture.value("status", json::object());
  status["phase"] = "Pending";
  status.erase("containerStatuses");
  pod_status_ = status.dump();
  status.erase("conditions");
  json unschedulable = status;
  unschedulable["conditions"] =
      json::array({{{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "0/100 nodes are available: 100 Insufficient nvidia.com/gpu."},
                    {"lastTransitionTime", Now()}}});
  pod_status_unschedulable_ = unschedulable.dump();
  json running = status;
  running["phase"] = "Running";
  running["conditions"] = json::array(
      {{{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", "@BOUND@"}}});
  pod_status_running_ = running.dump();
}

// The pod the ReplicaSet controller creates, as the pod webhook leaves it,
// with the bulk of --pod-fixture spliced in as text.
std::string Server::PodText(json& rs, const std::string& name, const std::string& uid,
                            std::uint64_t rv, const std::string& node, const std::string& status) {
  json tmpl = rs["spec"]["template"];
  json meta = {{"name", name},
               {"generateName", Str(rs, {"metadata", "name"}) + "-"},
               {"namespace", rs["metadata"]["namespace"]},
               {"uid", uid},
               {"resourceVersion", std::to_string(rv)},
               {"creationTimestamp", Now()},
               {"labels", tmpl["metadata"].value("labels", json::object())},
               {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                 {"kind", "ReplicaSet"},
                                                 {"name", rs["metadata"]["name"]},
                                                 {"uid", rs["metadata"]["uid"]},
                                                 {"controller", true},
                                                 {"blockOwnerDeletion", true}}})}};
  json spec = tmpl.value("spec", json::object());
  if (pod_gate_ && node.empty()) {
    spec["schedulingGates"] = json::array({{{"name", "wasd.io/pod-group"}}});
  }
  if (!node.empty()) spec["nodeName"] = node;
  spec["schedulingGroup"] = {
      {"podGroupName", wasd::workloadbuilder::PodGroupName(Str(rs, {"metadata", "name"}),
                                                           Str(rs, {"metadata", "uid"}))}};
  std::string m = meta.dump();
  m.pop_back();
  m += R"(,"managedFields":)" + pod_managed_fields_ + "}";
  std::string sp = spec.dump();
  if (!pod_spec_rest_.empty()) {
    sp.pop_back();
    sp += "," + pod_spec_rest_ + "}";
  }
  return R"({"apiVersion":"v1","kind":"Pod","metadata":)" + m + R"(,"spec":)" + sp +
         R"(,"status":)" + status + "}";
}

Reply Server::Apply(const std::string& body) {
  json list = json::parse(body, nullptr, false);
  if (!list.is_array()) return {400, StatusBody(400, "BadRequest", "want a JSON array")};
  int created = 0;
  int replaced = 0;
  for (json& d : list) {
    const std::string ns = Str(d, {"metadata", "namespace"});
    const std::string key = ns + "/" + Str(d, {"metadata", "name"});
    auto it = stores_[kDeployments].objects.find(key);
    if (it == stores_[kDeployments].objects.end()) {
      Reply r = Create(kDeployments, ns, std::move(d));
      if (r.code != 201) return r;
      ++created;
    } else {
      json old = json::parse(*it->second.text);
      d["metadata"]["uid"] = old["metadata"]["uid"];
      d["metadata"]["creationTimestamp"] = old["metadata"]["creationTimestamp"];
      // As kube-apiserver updates the main resource: status (the gang
      // doctor's GangScheduled condition) is the status subresource's.
      if (old.contains("status")) {
        d["status"] = old["status"];
      } else {
        d.erase("status");
      }
      Put(kDeployments, key, d, "MODIFIED");
      Changed(kDeployments, key);
      ++replaced;
    }
  }
  return {200, json{{"created", created}, {"replaced", replaced}}.dump()};
}

// Active ReplicaSets (replicas > 0) whose PodGroup is not stored: a rollout
// in scheduler hold has no gated pod to wait for, so convergence needs this.
std::int64_t Server::ReplicaSetsWithoutGroup() const {
  std::int64_t n = 0;
  for (const auto& [key, replicas] : rs_replicas_) {
    if (replicas <= 0) continue;
    const auto rs = stores_[kReplicaSets].objects.find(key);
    if (rs == stores_[kReplicaSets].objects.end()) continue;
    const std::string ns = key.substr(0, key.find('/'));
    const std::string name = key.substr(key.find('/') + 1);
    const std::string group = wasd::workloadbuilder::PodGroupName(name, rs->second.uid);
    if (stores_[5].objects.count(ns + "/" + group) == 0) ++n;
  }
  return n;
}

Reply Server::Stats() const {
  std::int64_t active = 0;
  for (const auto& [key, n] : rs_replicas_) active += n > 0 ? 1 : 0;
  json out = {{"resourceVersion", rv_},
              {"deployments", stores_[kDeployments].objects.size()},
              {"replicasets", stores_[kReplicaSets].objects.size()},
              {"replicasetsActive", active},
              {"pods", stores_[kPods].objects.size()},
              {"podsWanted", pods_wanted_},
              {"podsGated", gated_pods_.size()},
              {"workloads", stores_[4].objects.size()},
              {"podgroups", stores_[5].objects.size()},
              {"controllerQueue", deployment_queue_.size() + rs_queue_.size()},
              {"requests", requests_},
              {"wasdRequests", wasd_total_},
              {"wasdByVerb", wasd_requests_},
              {"watchEventsSent", watch_events_sent_},
              {"replicasetsWithoutGroup", ReplicaSetsWithoutGroup()},
              {"lastPodCreated", last_pod_created_},
              {"lastGateLifted", last_gate_lifted_},
              {"lastWorkloadWrite", last_write_.count(4) ? last_write_.at(4) : 0.0},
              {"lastPodGroupWrite", last_write_.count(5) ? last_write_.at(5) : 0.0}};
  return {200, out.dump()};
}

void Session::Read() {
  parser_ = std::make_unique<http::request_parser<http::string_body>>();
  parser_->body_limit(kMaxBody);
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                     if (ec) return;
                     self->OnRequest();
                   });
}

void Session::OnRequest() {
  const auto& req = parser_->get();
  Reply r = server_.Handle(req, shared_from_this());
  if (r.code == 0) return;  // a watch: the stream is written by SendEvent
  WriteReply(std::move(r), req.keep_alive());
}

void Session::WriteReply(Reply r, bool keep_alive) {
  response_ = {};
  response_.result(static_cast<unsigned>(r.code));
  response_.version(11);
  response_.set(http::field::content_type, "application/json");
  response_.keep_alive(keep_alive);
  response_.body() = std::move(r.body);
  response_.prepare_payload();
  http::async_write(socket_, response_,
                    [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                      if (ec) return;
                      if (keep_alive) {
                        self->Read();
                      } else {
                        beast::error_code ignored;
                        self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                      }
                    });
}

void Session::StartWatch(std::uint64_t timeout_seconds) {
  watching_ = true;
  queue_.push_back(
      {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
       "Transfer-Encoding: chunked\r\n\r\n",
       nullptr, ""});
  if (timeout_seconds > 0) {
    watch_timer_ = std::make_unique<asio::steady_timer>(socket_.get_executor(),
                                                        std::chrono::seconds(timeout_seconds));
    watch_timer_->async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->EndWatch();
    });
  }
  // A closed client ends the watch: one pending read notices.
  auto byte = std::make_shared<char>();
  socket_.async_read_some(asio::buffer(byte.get(), 1),
                          [self = shared_from_this(), byte](beast::error_code, std::size_t) {
                            self->watching_ = false;
                            self->ended_ = true;
                            beast::error_code ignored;
                            self->socket_.close(ignored);
                          });
  Flush();
}

void Session::SendEvent(const char* type, const Text& text) {
  if (ended_) return;
  std::string head = std::string(R"({"type":")") + type + R"(","object":)";
  const std::size_t len = head.size() + text->size() + 2;
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", len);
  queue_.push_back({size + head, text, "}\n\r\n"});
  Flush();
}

void Session::EndWatch() {
  if (ended_) return;
  ended_ = true;
  watching_ = false;
  queue_.push_back({"0\r\n\r\n", nullptr, ""});
  Flush();
}

void Session::Flush() {
  if (writing_ || queue_.empty()) return;
  writing_ = true;
  // Everything queued goes in one gathered write; the chunks stay alive in
  // `batch` until it completes.
  auto batch = std::make_shared<std::vector<Chunk>>();
  std::vector<asio::const_buffer> bufs;
  while (!queue_.empty() && batch->size() < 512) {
    batch->push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  for (const Chunk& c : *batch) {
    bufs.emplace_back(asio::buffer(c.head));
    if (c.text) bufs.emplace_back(asio::buffer(*c.text));
    if (!c.tail.empty()) bufs.emplace_back(asio::buffer(c.tail));
  }
  asio::async_write(socket_, bufs,
                    [self = shared_from_this(), batch](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->ended_ = true;
                        self->watching_ = false;
                        self->queue_.clear();
                        return;
                      }
                      if (!self->queue_.empty()) {
                        self->Flush();
                      } else if (self->ended_ && !self->watching_) {
                        beast::error_code ignored;
                        self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
                      }
                    });
}

int Usage() {
  std::cerr << "usage: wasd-bench-apiserver [--port N] [--ready-file FILE] [--pod-fixture FILE]\n"
               "                            [--pod-hold gate|scheduler] [--bind-pods N]\n"
               "                            [--unschedulable-every K]\n"
               "In-memory API server for tools/bench/scale_bench.py; listens on 127.0.0.1 only.\n"
               "--pod-hold scheduler: pods are created without the gate wasd.io/pod-group, as\n"
               "the webhook leaves them in scheduler hold (docs/design.md Q23).\n"
               "--bind-pods N: pods are created Running on node-0 .. node-(N-1) (a placed gang).\n"
               "--unschedulable-every K: one ReplicaSet in K (by name) gets unbound pods with\n"
               "the scheduler's Unschedulable verdict (starts the gang doctor's fit preview).\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  std::string ready_file;
  std::string fixture_file;
  bool pod_gate = true;
  std::int64_t bind_nodes = 0;
  std::int64_t unschedulable_every = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return Usage(), 0;
    if (i + 1 >= argc) return Usage();
    if (a == "--port") {
      port = std::atoi(argv[++i]);
    } else if (a == "--ready-file") {
      ready_file = argv[++i];
    } else if (a == "--pod-fixture") {
      fixture_file = argv[++i];
    } else if (a == "--bind-pods") {
      bind_nodes = std::atoll(argv[++i]);
      if (bind_nodes < 0) return Usage();
    } else if (a == "--unschedulable-every") {
      unschedulable_every = std::atoll(argv[++i]);
      if (unschedulable_every < 0) return Usage();
    } else if (a == "--pod-hold") {
      const std::string v = argv[++i];
      if (v != "gate" && v != "scheduler") return Usage();
      pod_gate = v == "gate";
    } else {
      std::cerr << "unknown flag " << a << "\n";
      return Usage();
    }
  }
  json fixture = json::object();
  if (!fixture_file.empty()) {
    std::ifstream in(fixture_file);
    fixture = json::parse(in, nullptr, false);
    if (!fixture.is_object()) {
      std::cerr << "--pod-fixture " << fixture_file << ": not a JSON object\n";
      return 2;
    }
  }
  asio::io_context io(1);
  tcp::acceptor acceptor(
      io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  Server server(io, acceptor, std::move(fixture), pod_gate);
  server.SetPlacement(bind_nodes, unschedulable_every);
  server.Accept();
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](beast::error_code, int) { io.stop(); });
  const int bound = acceptor.local_endpoint().port();
  if (!ready_file.empty()) {
    const std::string tmp = ready_file + ".tmp";
    std::ofstream(tmp) << json{{"port", bound}, {"pid", ::getpid()}}.dump() << "\n";
    std::rename(tmp.c_str(), ready_file.c_str());
  }
  std::cout << "READY http://127.0.0.1:" << bound << std::endl;
  io.run();
  return 0;
}

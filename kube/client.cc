// Client's public calls: each builds a path, query and body and hands them to
// Impl::Call (client_impl.cc). Watch is in client_watch.cc.
#include "kube/client.h"

#include <set>

#include "kube/client_impl.h"

namespace wasd::kube {

namespace {

// A LIST that keeps returning continue tokens is a broken server or proxy;
// 10,000 pages of 500 is 5 million objects, far past any cluster wasd serves.
constexpr int kMaxListPages = 10'000;

// A list body is projected per item (ListOptions::projection), never by
// RequestOptions::projection.
const base::JsonProjection& WholeBody() {
  static const base::JsonProjection whole;
  return whole;
}

Status BadArgument(std::string why) {
  return Status::Error(Status::Kind::kInvalidArgument, std::move(why));
}

Status CheckName(const Resource& resource, std::string_view ns, std::string_view name) {
  if (name.empty()) return BadArgument("empty name for " + resource.plural);
  if (resource.namespaced && ns.empty()) {
    return BadArgument("namespace required for " + resource.plural + " \"" + std::string(name) +
                       "\"");
  }
  return Status::Ok();
}

// dryRun=All and fieldValidation=Strict for a write that asks for them.
Query DryRunQuery(const RequestOptions& options) {
  Query q;
  if (options.dry_run) q.emplace_back("dryRun", "All");
  if (options.strict_field_validation) q.emplace_back("fieldValidation", "Strict");
  return q;
}

std::string Field(const nlohmann::json& j, const char* outer, const char* inner) {
  auto o = j.find(outer);
  if (o == j.end() || !o->is_object()) return {};
  auto i = o->find(inner);
  if (i == o->end() || !i->is_string()) return {};
  return i->get<std::string>();
}

}  // namespace

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
    case PatchType::kApply: return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

Client::Client(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Client::~Client() = default;

const Config& Client::config() const { return impl_->config(); }

Result<nlohmann::json> Client::Get(const Resource& resource, std::string_view ns,
                                   std::string_view name, const RequestOptions& options) {
  if (Status s = CheckName(resource, ns, name); !s.ok()) return s;
  return impl_->Call(http::verb::get, ResourcePath(resource, ns, name), {}, "", "", options);
}

Result<nlohmann::json> Client::GetGroupVersion(std::string_view group_version,
                                               const RequestOptions& options) {
  if (group_version.empty()) return BadArgument("empty group version for discovery");
  return impl_->Call(http::verb::get, GroupVersionPrefix(group_version), {}, "", "", options);
}

Result<ListResult> Client::ListPage(const Resource& resource, std::string_view ns,
                                    const ListOptions& options) {
  Query q;
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (options.limit > 0) q.emplace_back("limit", std::to_string(options.limit));
  if (!options.continue_token.empty()) {
    q.emplace_back("continue", options.continue_token);
  } else if (!options.resource_version.empty()) {
    q.emplace_back("resourceVersion", options.resource_version);
  }
  std::optional<base::JsonProjection> list_projection;
  if (options.projection != nullptr && !options.projection->keeps_all()) {
    list_projection = options.projection->Under("items", {"metadata", "kind", "apiVersion"});
  }
  Result<nlohmann::json> r =
      impl_->Call(http::verb::get, ResourcePath(resource, ns, ""), q, "", "", options.request,
                  list_projection ? &*list_projection : &WholeBody());
  if (!r.ok()) return r.status();
  nlohmann::json& j = r.value();  // non-const: the items are moved out below
  ListResult out;
  auto items = j.find("items");
  if (!j.is_object() || (items != j.end() && !items->is_array() && !items->is_null())) {
    return Status::Error(Status::Kind::kBadResponse,
                         "LIST " + resource.plural + ": response is not a list");
  }
  if (items != j.end() && items->is_array()) {
    out.items.reserve(items->size());
    for (auto& item : *items) out.items.push_back(std::move(item));
  }
  out.resource_version = Field(j, "metadata", "resourceVersion");
  out.continue_token = Field(j, "metadata", "continue");
  return out;
}

Result<ListResult> Client::List(const Resource& resource, std::string_view ns,
                                const ListOptions& options) {
  ListOptions page_options = options;
  ListResult all;
  std::set<std::string> seen_tokens;
  for (int page = 0; page < kMaxListPages; ++page) {
    Result<ListResult> r = ListPage(resource, ns, page_options);
    if (!r.ok()) return r.status();
    ListResult p = std::move(r).value();
    if (page == 0) all.resource_version = p.resource_version;
    for (auto& item : p.items) all.items.push_back(std::move(item));
    if (p.continue_token.empty()) return all;
    if (!seen_tokens.insert(p.continue_token).second) {
      return Status::Error(Status::Kind::kBadResponse,
                           "LIST " + resource.plural + ": server repeated a continue token");
    }
    page_options.continue_token = p.continue_token;
  }
  return Status::Error(Status::Kind::kBadResponse, "LIST " + resource.plural + ": more than " +
                                                       std::to_string(kMaxListPages) + " pages");
}

Result<nlohmann::json> Client::Create(const Resource& resource, std::string_view ns,
                                      const nlohmann::json& object, const RequestOptions& options) {
  return CreateEncoded(resource, ns, object.dump(), options);
}

Result<nlohmann::json> Client::CreateEncoded(const Resource& resource, std::string_view ns,
                                             const std::string& body,
                                             const RequestOptions& options) {
  if (resource.namespaced && ns.empty())
    return BadArgument("namespace required to create " + resource.plural);
  return impl_->Call(http::verb::post, ResourcePath(resource, ns, ""), DryRunQuery(options), body,
                     "application/json", options);
}

Result<nlohmann::json> Client::Update(const Resource& resource, std::string_view ns,
                                      std::string_view name, const nlohmann::json& object,
                                      const RequestOptions& options) {
  if (Status s = CheckName(resource, ns, name); !s.ok()) return s;
  return impl_->Call(http::verb::put, ResourcePath(resource, ns, name), DryRunQuery(options),
                     object.dump(), "application/json", options);
}

Result<nlohmann::json> Client::Patch(const Resource& resource, std::string_view ns,
                                     std::string_view name, PatchType type,
                                     const nlohmann::json& patch, const PatchOptions& options) {
  if (Status s = CheckName(resource, ns, name); !s.ok()) return s;
  if (type == PatchType::kJson && !patch.is_array()) {
    return BadArgument("a JSON patch must be an array of operations");
  }
  if (type != PatchType::kJson && !patch.is_object()) {
    return BadArgument("a merge, strategic-merge or apply patch must be an object");
  }
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return BadArgument("server-side apply needs a field manager");
  }
  Query q = DryRunQuery(options.request);
  if (!options.field_manager.empty()) q.emplace_back("fieldManager", options.field_manager);
  if (type == PatchType::kApply && options.force) q.emplace_back("force", "true");
  return impl_->Call(http::verb::patch, ResourcePath(resource, ns, name), q, patch.dump(),
                     PatchContentType(type), options.request);
}

Result<nlohmann::json> Client::Delete(const Resource& resource, std::string_view ns,
                                      std::string_view name, const DeleteOptions& options) {
  if (Status s = CheckName(resource, ns, name); !s.ok()) return s;
  nlohmann::json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!options.precondition_uid.empty()) body["preconditions"]["uid"] = options.precondition_uid;
  if (!options.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = options.precondition_resource_version;
  }
  if (!options.propagation_policy.empty()) body["propagationPolicy"] = options.propagation_policy;
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  return impl_->Call(http::verb::delete_, ResourcePath(resource, ns, name),
                     DryRunQuery(options.request), body.dump(), "application/json",
                     options.request);
}

}  // namespace wasd::kube

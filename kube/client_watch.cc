// Client::Watch: one watch request, its events decoded incrementally from the
// chunked body as they arrive.
#include <array>

#include "kube/client.h"
#include "kube/client_impl.h"

namespace wasd::kube {

namespace {

// Read granularity for watch bodies; events larger than this span reads.
constexpr std::size_t kWatchReadBytes = std::size_t{64} * 1024;
// Error answers to a watch request are small Status objects.
constexpr std::size_t kMaxWatchErrorBody = std::size_t{1024} * 1024;

}  // namespace

Status Client::Watch(const Resource& resource, std::string_view ns, const WatchOptions& options,
                     const std::function<bool(const WatchEvent&)>& on_event) {
  Impl& impl = *impl_;
  if (!impl.setup_error().ok()) return impl.setup_error();
  const Config& config = impl.config();
  Query q{{"watch", "true"}};
  if (!options.resource_version.empty())
    q.emplace_back("resourceVersion", options.resource_version);
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (options.allow_bookmarks) q.emplace_back("allowWatchBookmarks", "true");
  if (options.timeout_seconds > 0)
    q.emplace_back("timeoutSeconds", std::to_string(options.timeout_seconds));
  const std::string target = impl.Target(ResourcePath(resource, ns, ""), q);
  const std::stop_token& stop = options.stop;

  // Opening the watch and reading its header is bounded like any request.
  const auto header_deadline = Clock::now() + config.timeouts.request;
  if (Status s = impl.Throttle(header_deadline, stop, target); !s.ok()) return s;
  Result<std::unique_ptr<Connection>> opened = impl.Open(header_deadline, stop);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<Connection> conn = std::move(opened).value();
  Result<http::request<http::string_body>> req = impl.MakeRequest(http::verb::get, target, "", "");
  if (!req.ok()) return req.status();
  if (Status s = conn->Write(req.value(), header_deadline, stop); !s.ok()) return s;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);  // a watch is an endless stream; lines are bounded instead
  if (Status s = conn->ReadHeader(parser, header_deadline, stop); !s.ok()) return s;

  const int code = static_cast<int>(parser.get().result_int());
  if (code == 401) impl.Unauthorized();  // an exec plugin's token is fetched anew
  std::array<char, kWatchReadBytes> buf;
  std::string error_body;
  WatchDecoder decoder = options.projection != nullptr
                             ? WatchDecoder(config.limits.max_watch_line_bytes, *options.projection)
                             : WatchDecoder(config.limits.max_watch_line_bytes);
  std::vector<WatchEvent> events;
  while (!parser.is_done()) {
    parser.get().body().data = buf.data();
    parser.get().body().size = buf.size();
    // Each read may wait up to watch_idle: a live watch sends events or
    // bookmarks, a silent one is dead.
    const auto deadline =
        Clock::now() + (code == 200 ? config.timeouts.watch_idle : config.timeouts.request);
    Status s = conn->ReadBody(parser, deadline, stop);
    const std::size_t n = buf.size() - parser.get().body().size;
    if (!s.ok()) {
      if (s.kind() == Status::Kind::kUnreachable) {
        return Status::Error(Status::Kind::kUnreachable,
                             "watch " + target + ": connection lost: " + s.message());
      }
      return s;
    }
    if (code != 200) {
      error_body.append(buf.data(), n);
      if (error_body.size() > kMaxWatchErrorBody) break;
      continue;
    }
    events.clear();
    Status decoded = decoder.Feed(std::string_view(buf.data(), n), events);
    for (const WatchEvent& ev : events) {
      if (ev.type == WatchEventType::kError) return Status::FromStatusObject(ev.object, 500);
      if (!on_event(ev)) return Status::Ok();
    }
    if (!decoded.ok()) return decoded;
  }
  if (code != 200) {
    HttpResponse response{code, error_body.substr(0, kMaxWatchErrorBody), ""};
    if (auto it = parser.get().find(http::field::retry_after); it != parser.get().end()) {
      response.retry_after = std::string(it->value());
    }
    return ErrorFromResponse(response, config.retry.max_retry_after);
  }
  events.clear();
  Status decoded = decoder.Finish(events);
  for (const WatchEvent& ev : events) {
    if (ev.type == WatchEventType::kError) return Status::FromStatusObject(ev.object, 500);
    if (!on_event(ev)) return Status::Ok();
  }
  return decoded;
}

}  // namespace wasd::kube

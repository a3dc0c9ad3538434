#include "kube/watch_decoder.h"

#include <string>

namespace wasd::kube {

std::string_view WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded: return "ADDED";
    case WatchEventType::kModified: return "MODIFIED";
    case WatchEventType::kDeleted: return "DELETED";
    case WatchEventType::kBookmark: return "BOOKMARK";
    case WatchEventType::kError: return "ERROR";
  }
  return "?";
}

std::string WatchEvent::ResourceVersion() const {
  if (!object.is_object()) return {};
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return {};
  auto rv = md->find("resourceVersion");
  if (rv == md->end() || !rv->is_string()) return {};
  return rv->get<std::string>();
}

WatchDecoder::WatchDecoder(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

WatchDecoder::WatchDecoder(std::size_t max_line_bytes, const base::JsonProjection& projection)
    : max_line_bytes_(max_line_bytes) {
  if (!projection.keeps_all()) event_projection_ = projection.Under("object", {"type"});
}

Status WatchDecoder::Feed(std::string_view bytes, std::vector<WatchEvent>& out) {
  if (!error_.ok()) return error_;
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (line_.size() + piece.size() > max_line_bytes_) {
      error_ = Status::Error(Status::Kind::kBadResponse,
                             "watch event line " + std::to_string(lines_ + 1) + " exceeds " +
                                 std::to_string(max_line_bytes_) + " bytes");
      line_.clear();
      return error_;
    }
    if (nl == std::string_view::npos) {
      line_.append(piece);
      return Status::Ok();
    }
    bytes.remove_prefix(nl + 1);
    Status s;
    if (line_.empty()) {
      s = DecodeLine(piece, out);  // the common case: a whole line in one piece, no copy
    } else {
      line_.append(piece);
      s = DecodeLine(line_, out);
      line_.clear();
    }
    if (!s.ok()) {
      error_ = s;
      return error_;
    }
  }
  return Status::Ok();
}

Status WatchDecoder::Finish(std::vector<WatchEvent>& out) {
  if (!error_.ok()) return error_;
  if (line_.empty()) return Status::Ok();
  Status s = DecodeLine(line_, out);
  line_.clear();
  if (!s.ok()) error_ = s;
  return s;
}

Status WatchDecoder::DecodeLine(std::string_view line, std::vector<WatchEvent>& out) {
  ++lines_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return Status::Ok();
  auto bad = [&](const std::string& why) {
    return Status::Error(Status::Kind::kBadResponse,
                         "watch event line " + std::to_string(lines_) + ": " + why);
  };
  nlohmann::json j = event_projection_
                         ? event_projection_->Parse(line)
                         : nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (event_projection_ && j.is_object()) {
    // An ERROR event carries a metav1.Status, not an object of the resource.
    auto t = j.find("type");
    if (t != j.end() && t->is_string() && t->get_ref<const std::string&>() == "ERROR") {
      j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    }
  }
  if (!j.is_object()) return bad("not a JSON object");
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) return bad("no \"type\"");
  auto object = j.find("object");
  if (object == j.end() || !object->is_object()) return bad("no \"object\"");
  const std::string& t = type->get_ref<const std::string&>();
  WatchEvent ev;
  if (t == "ADDED") {
    ev.type = WatchEventType::kAdded;
  } else if (t == "MODIFIED") {
    ev.type = WatchEventType::kModified;
  } else if (t == "DELETED") {
    ev.type = WatchEventType::kDeleted;
  } else if (t == "BOOKMARK") {
    ev.type = WatchEventType::kBookmark;
  } else if (t == "ERROR") {
    ev.type = WatchEventType::kError;
  } else {
    return bad("unknown type \"" + t.substr(0, 64) + "\"");
  }
  ev.object = std::move(*object);
  out.push_back(std::move(ev));
  return Status::Ok();
}

}  // namespace wasd::kube

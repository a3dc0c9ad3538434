// WatchDecoder: an incremental decoder for a Kubernetes watch stream, pure
// (bytes in, events out; no I/O), so the client, tests and a fuzzer drive it
// the same way.
//
// A watch response body (after HTTP chunked decoding) is a sequence of JSON
// objects {"type": "...", "object": {...}}, one per line. Bytes arrive in
// arbitrary pieces: an event may be split at any byte, and one piece may carry
// many events. Blank lines are skipped; a final event without a trailing
// newline is decoded by Finish().
//
// Errors are sticky: a malformed line (not JSON, not an object, unknown or
// missing type, object missing) or a line longer than the limit ends decoding;
// Feed() and Finish() then keep returning that error, and no later events are
// produced. The caller ends the watch and re-watches from the last
// resourceVersion it saw — as client-go does on a decode error.
//
// ERROR events are decoded like any other (type kError, object = the
// metav1.Status); Status::FromStatusObject() turns them into a Status
// (e.g. gone() for 410 Expired).
//
// Not thread-safe: one decoder per stream.
#ifndef WASD_KUBE_WATCH_DECODER_H_
#define WASD_KUBE_WATCH_DECODER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_projection.h"
#include "base/status.h"

namespace wasd::kube {

using base::Result;
using base::Status;

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

std::string_view WatchEventTypeName(WatchEventType t);  // "ADDED", …

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  nlohmann::json object;
  // object.metadata.resourceVersion, or "" (ERROR events have none).
  std::string ResourceVersion() const;
};

class WatchDecoder {
 public:
  // One event line carries one object. The API server refuses request bodies
  // over 3 MiB and etcd objects default to 1.5 MiB; 16 MiB leaves room for
  // JSON escaping and managedFields growth while bounding memory per watch.
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t{16} * 1024 * 1024;

  explicit WatchDecoder(std::size_t max_line_bytes = kDefaultMaxLineBytes);
  // Keeps only the members of `projection` of each event's object, decoded
  // straight from the line (an ERROR event's Status is decoded whole).
  WatchDecoder(std::size_t max_line_bytes, const base::JsonProjection& projection);

  // Consumes `bytes`, appending every event completed by them to `out`.
  // Returns OK, or kBadResponse (sticky) describing the first bad line.
  Status Feed(std::string_view bytes, std::vector<WatchEvent>& out);
  // End of stream: decodes a final unterminated line, if any.
  Status Finish(std::vector<WatchEvent>& out);

  // Bytes buffered of an incomplete line.
  std::size_t pending_bytes() const { return line_.size(); }

 private:
  Status DecodeLine(std::string_view line, std::vector<WatchEvent>& out);

  std::size_t max_line_bytes_;
  std::optional<base::JsonProjection> event_projection_;  // {type, object: <projection>}
  std::string line_;
  std::size_t lines_ = 0;  // lines seen, for error messages
  Status error_;
};

}  // namespace wasd::kube

#endif  // WASD_KUBE_WATCH_DECODER_H_

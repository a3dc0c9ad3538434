// Fuzz target watch_decoder: arbitrary bytes as a watch response body, fed to
// kube::WatchDecoder in one piece and again in pieces cut at fuzzed points.
//
// Input layout: the first byte chooses the line limit (small limits reach the
// over-long-line path with short inputs), the next two the piece lengths of
// the split feed; the rest is the stream.
//
// Invariants: nothing throws; the split decode yields exactly the events
// (type and object) and the same final status as the whole decode; an error
// is sticky (a later Feed/Finish returns it and adds no events); nothing stays
// buffered after Finish; every event's object is a JSON object and
// ResourceVersion() never throws.
//
// Header-only so that the libFuzzer entry (watch_decoder_fuzz.cc) and the
// Catch2 corpus replay (tests/kube/fuzz_replay_test.cc) share one body.
// Thread-safe (no state).
#ifndef WASD_TESTS_FUZZ_WATCH_DECODER_TARGET_H_
#define WASD_TESTS_FUZZ_WATCH_DECODER_TARGET_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kube/watch_decoder.h"
#include "tests/fuzz/check.h"

namespace wasd::fuzz {

namespace watch_decoder_detail {

struct Decoded {
  std::vector<kube::WatchEvent> events;
  base::Status status;
};

// Feeds `stream` in pieces of lengths cycling through `pieces` (0 = whole),
// then Finish(). Stops feeding at the first error.
inline Decoded Decode(std::string_view stream, std::size_t max_line,
                      const std::vector<std::size_t>& pieces) {
  kube::WatchDecoder decoder(max_line);
  Decoded d;
  std::size_t k = 0;
  while (!stream.empty() && d.status.ok()) {
    std::size_t n = pieces.empty() || pieces[k % pieces.size()] == 0 ? stream.size()
                                                                     : pieces[k % pieces.size()];
    n = std::min(n, stream.size());
    ++k;
    d.status = decoder.Feed(stream.substr(0, n), d.events);
    stream.remove_prefix(n);
  }
  if (d.status.ok()) {
    d.status = decoder.Finish(d.events);
    FUZZ_CHECK(!d.status.ok() || decoder.pending_bytes() == 0,
               std::to_string(decoder.pending_bytes()));
  }
  if (!d.status.ok()) {
    // Sticky: nothing more is decoded, the same error comes back.
    const std::size_t before = d.events.size();
    const base::Status again = decoder.Feed("{\"type\":\"ADDED\",\"object\":{}}\n", d.events);
    FUZZ_CHECK(again.ToString() == d.status.ToString(), again.ToString());
    FUZZ_CHECK(decoder.Finish(d.events).ToString() == d.status.ToString(), "");
    FUZZ_CHECK(d.events.size() == before, "events after a sticky error");
  }
  return d;
}

inline void CheckSame(const Decoded& a, const Decoded& b) {
  FUZZ_CHECK(a.status.ToString() == b.status.ToString(),
             a.status.ToString() + " vs " + b.status.ToString());
  FUZZ_CHECK(a.events.size() == b.events.size(),
             std::to_string(a.events.size()) + " vs " + std::to_string(b.events.size()));
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    FUZZ_CHECK(a.events[i].type == b.events[i].type, std::to_string(i));
    FUZZ_CHECK(a.events[i].object == b.events[i].object, std::to_string(i));
  }
}

}  // namespace watch_decoder_detail

inline int WatchDecoderOneInput(const std::uint8_t* data, std::size_t size) {
  using watch_decoder_detail::Decode;
  if (size < 3) return 0;
  // Limits 16..4096 bytes, or the default 16 MiB for a zero byte.
  const std::size_t max_line =
      data[0] == 0 ? kube::WatchDecoder::kDefaultMaxLineBytes : std::size_t{16} * data[0];
  const std::vector<std::size_t> pieces = {std::size_t{data[1]} + 1, data[2]};
  const std::string_view stream(reinterpret_cast<const char*>(data) + 3, size - 3);

  const auto whole = Decode(stream, max_line, {});
  for (const kube::WatchEvent& ev : whole.events) {
    FUZZ_CHECK(ev.object.is_object(), "");
    (void)ev.ResourceVersion();
    (void)kube::WatchEventTypeName(ev.type);
  }
  watch_decoder_detail::CheckSame(whole, Decode(stream, max_line, pieces));
  watch_decoder_detail::CheckSame(whole, Decode(stream, max_line, {1}));
  return 0;
}

}  // namespace wasd::fuzz

#endif  // WASD_TESTS_FUZZ_WATCH_DECODER_TARGET_H_

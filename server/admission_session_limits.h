// The time and size bounds of one admission connection
// (server/admission_session.cc reads, server/admission_session_send.cc
// writes and closes).
#ifndef WASD_SERVER_ADMISSION_SESSION_LIMITS_H_
#define WASD_SERVER_ADMISSION_SESSION_LIMITS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace wasd::server::session_limits {

// Bytes asked for by the read that waits for a request to begin. Big enough
// for a typical AdmissionReview's headers and a good part of its body in
// one go; the buffer is reused, so this is allocated once per connection.
inline constexpr std::size_t kFirstReadBytes = std::size_t{16} * 1024;
// After a 413 or a malformed request the connection is closed, but the
// client may still be sending its body; closing with unread data makes the
// kernel send a reset that can destroy the response before the client reads
// it. So the rest of the body is read and dropped for at most this long and
// this many bytes, then the connection is closed.
inline constexpr std::chrono::milliseconds kLingerTimeout{2'000};
inline constexpr std::uint64_t kLingerMaxBytes = 64ull * 1024 * 1024;
// Deadline for the TLS close_notify exchange on an orderly close.
inline constexpr std::chrono::milliseconds kTlsShutdownTimeout{2'000};
// On SIGTERM a connection that has not carried a request yet gets this long
// for its first request to arrive (the client may have sent it already)
// before it is closed.
inline constexpr std::chrono::milliseconds kFreshConnectionDrainGrace{5'000};
// A keep-alive connection between requests gets this long: its client cannot
// know of the drain and may have sent the next request just before the
// signal; closing at once would drop that request unanswered. A request that
// has arrived is read and answered (with Connection: close); a quiet
// connection is closed when this ends. One second covers a request already in
// our socket buffer or in flight on the network.
inline constexpr std::chrono::milliseconds kIdleConnectionDrainGrace{1'000};
// A read buffer (which holds a Content-Length body) or chunked-body string
// larger than this is freed after the request rather than kept for the next
// one: keep-alive connections should not each pin megabytes after one large
// review.
inline constexpr std::size_t kMaxKeptBodyCapacity = std::size_t{1024} * 1024;

}  // namespace wasd::server::session_limits

#endif  // WASD_SERVER_ADMISSION_SESSION_LIMITS_H_

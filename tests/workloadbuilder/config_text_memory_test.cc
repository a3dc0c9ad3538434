// Peak heap use of ParseConfigText on the worst annotation texts a user can
// store (256 KiB, the API server's limit for all annotations of an object):
// docs/design.md Q16's bound checked at the allocation level, where it is exact and
// does not depend on the allocator or the machine. tools/bench/worst_case_memory.py
// measures the same shapes as the webhook's peak RSS.
//
// This file replaces the global operator new and delete of workloadbuilder_test
// to count the bytes in use (atomics; nothing else changes).
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>

#include "workloadbuilder/config_text.h"
#include "workloadbuilder/scheduling_config.h"

namespace {

std::atomic<std::size_t> g_in_use{0};
std::atomic<std::size_t> g_peak{0};

// Each block carries its size in front, keeping max_align_t alignment.
struct alignas(std::max_align_t) Header {
  std::size_t size;
};

void* Allocate(std::size_t n) {
  void* p = std::malloc(n + sizeof(Header));
  if (p == nullptr) throw std::bad_alloc();
  static_cast<Header*>(p)->size = n;
  const std::size_t now = g_in_use.fetch_add(n) + n;
  std::size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(p) + sizeof(Header);
}

void Release(void* p) noexcept {
  if (p == nullptr) return;
  auto* h = reinterpret_cast<Header*>(static_cast<char*>(p) - sizeof(Header));
  g_in_use.fetch_sub(h->size);
  std::free(h);
}

// Bytes allocated at the peak of `f`, above what was in use before it.
std::size_t PeakDuring(const std::function<void()>& f) {
  const std::size_t before = g_in_use.load();
  g_peak.store(before);
  f();
  return g_peak.load() - before;
}

std::string Repeat(const std::string& unit, std::size_t bytes) {
  std::string s;
  s.reserve(bytes);
  while (s.size() + unit.size() <= bytes) s += unit;
  return s;
}

}  // namespace

void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }

namespace wb = wasd::workloadbuilder;

TEST_CASE("Worst-case annotations parse within 4 MiB of heap", "[unit]") {
  constexpr std::size_t kMax = wb::kMaxConfigTextBytes;
  constexpr std::size_t kBound = 4u << 20;  // docs/design.md Q16: <= 4 MiB above idle
  std::string billion_laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b', prev = 'a'; c <= 'j'; prev = c++) {
    billion_laughs +=
        std::string(1, c) + ": &" + c + " [" + Repeat(std::string("*") + prev + ", ", 60) + "x]\n";
  }
  const std::pair<const char*, std::string> cases[] = {
      {"[ x 256 KiB", std::string(kMax, '[')},
      {"x: [ x 256 KiB", "x: " + std::string(kMax - 3, '[')},
      {"{a:  x 256 KiB", Repeat("{a: ", kMax)},
      {"- x 128 Ki on one line", Repeat("- ", kMax - 1) + "x"},
      {"JSON nesting", std::string(kMax / 2, '[') + std::string(kMax / 2, ']')},
      {"JSON flat array", "[" + Repeat("1,", kMax - 3) + "1]"},
      {"YAML block sequence", Repeat("- 1\n", kMax)},
      {"YAML flow sequence", "[" + Repeat("a,", kMax - 3) + "a]"},
      {"YAML keys",
       [&] {
         std::string s;
         for (int i = 0; s.size() < kMax - 16; ++i) s += "k" + std::to_string(i) + ": 1\n";
         return s;
       }()},
      {"long plain scalar", "a: " + std::string(kMax - 3, 'x')},
      {"long quoted scalar", "a: \"" + std::string(kMax - 5, 'x') + "\""},
      {"long JSON string", "{\"a\":\"" + std::string(kMax - 8, 'x') + "\"}"},
      {"billion laughs", billion_laughs},
      {"anchors", "[" + Repeat("&a 1, ", kMax - 3) + "1]"},
      {"aliases", "a: &a [1, 2, 3]\nb: [" + Repeat("*a, ", kMax - 40) + "*a]"},
  };
  for (const auto& [name, text] : cases) {
    INFO(name << " (" << text.size() << " bytes)");
    REQUIRE(text.size() <= kMax);
    const std::size_t peak = PeakDuring([&] { (void)wb::ParseConfigText(text); });
    INFO("peak heap " << peak << " bytes");
    CHECK(peak <= kBound);
    // Through the Deployment reader too (annotation member, error echo).
    const nlohmann::json deployment = {
        {"metadata", {{"annotations", {{std::string(wb::kSchedulingAnnotation), text}}}}}};
    CHECK(PeakDuring([&] { (void)wb::ReadSchedulingConfig(deployment); }) <= kBound);
  }
}

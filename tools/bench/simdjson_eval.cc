// simdjson_eval: the measurement behind tools/bench/RESULTS.md "simdjson On-Demand,
// evaluated" (issue 18). Not part of the build: simdjson is not a dependency of
// wasd. To re-run it (Debian: apt-get install libsimdjson-dev):
//
//   g++ -std=c++20 -O2 -g -I. tools/bench/simdjson_eval.cc admission/pruned_json.cc base/utf8.cc \
//       -lsimdjson -o /tmp/simdjson_eval
//   /tmp/simdjson_eval tests/testdata/bench/*.json          # ns per decode, best of 7 rounds
//   valgrind --tool=callgrind /tmp/simdjson_eval --once VARIANT FILE   # instructions
//
// For each body it decodes the AdmissionReview into the same pruned
// nlohmann::json document that admission::Review builds (the selection of
// admission/review.cc, copied here), four ways:
//   pruned     admission::PrunedParse, the decoder in use: every byte validated
//              as nlohmann::json::parse would, only the selected members built
//   od-select  simdjson On-Demand: the selected members converted into
//              nlohmann values, everything else skipped as On-Demand skips it
//              (structure and UTF-8 checked by stage 1; numbers, literals and
//              escapes of skipped values NOT checked)
//   od-full    simdjson On-Demand, every skipped value also visited (strings
//              unescaped, numbers parsed, literals read): what it takes to
//              refuse the texts nlohmann refuses
//   nlohmann   nlohmann::json::parse of the whole body (the decoder before
//              issue 9), for scale
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>

#include <simdjson.h>
#include <nlohmann/json.hpp>

#include "base/pruned_json.h"

namespace {

using nlohmann::json;
using wasd::base::Selection;
namespace od = simdjson::ondemand;

// admission/review.cc's kReviewOf<kObject> (validating webhooks).
constexpr std::string_view kAnn = "wasd.io/scheduling";
constexpr Selection kTemplateAnnotations[] = {{kAnn}};
constexpr Selection kTemplateMetadata[] = {{"labels"}, {"annotations", kTemplateAnnotations}};
constexpr Selection kTemplateSpec[] = {{"schedulingGroup"}};
constexpr Selection kTemplate[] = {{"metadata", kTemplateMetadata}, {"spec", kTemplateSpec}};
constexpr Selection kStrategy[] = {{"type"}};
constexpr Selection kSpec[] = {{"replicas"},        {"strategy", kStrategy},
                               {"scheduling"},      {"template", kTemplate},
                               {"schedulingGroup"}, {"schedulingGates"}};
constexpr Selection kAnnotations[] = {{kAnn}, {"wasd.io/*"}};
constexpr Selection kMetadata[] = {{"name"},           {"generateName"},
                                   {"namespace"},      {"uid"},
                                   {"labels"},         {"annotations", kAnnotations},
                                   {"ownerReferences"}};
constexpr Selection kObject[] = {
    {"apiVersion"}, {"kind"}, {"metadata", kMetadata}, {"spec", kSpec}};
constexpr Selection kRequest[] = {{"uid"},
                                  {"kind"},
                                  {"resource"},
                                  {"name"},
                                  {"namespace"},
                                  {"operation"},
                                  {"subResource"},
                                  {"object", kObject},
                                  {"oldObject", kObject}};
constexpr Selection kReview[] = {{"apiVersion"}, {"kind"}, {"request", kRequest}};

const Selection* Find(std::span<const Selection> sel, std::string_view key) {
  for (const Selection& s : sel) {
    if (s.key.ends_with('*') ? key.starts_with(s.key.substr(0, s.key.size() - 1)) : key == s.key)
      return &s;
  }
  return nullptr;
}

using simdjson::error_code;
using simdjson::SUCCESS;

// Builds the whole value.
error_code Build(od::value v, json* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::object: {
      *out = json::object();
      od::object o;
      if (auto e = v.get_object().get(o)) return e;
      for (auto f : o) {
        std::string_view key;
        if (auto e = f.unescaped_key().get(key)) return e;
        od::value child;
        if (auto e = f.value().get(child)) return e;
        if (auto e = Build(child, &(*out)[std::string(key)])) return e;
      }
      return SUCCESS;
    }
    case od::json_type::array: {
      *out = json::array();
      od::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto el : a) {
        od::value child;
        if (auto e = el.get(child)) return e;
        out->push_back(nullptr);
        if (auto e = Build(child, &out->back())) return e;
      }
      return SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return e;
      *out = std::string(s);
      return SUCCESS;
    }
    case od::json_type::number: {
      od::number n;
      if (auto e = v.get_number().get(n)) return e;
      if (n.is_uint64())
        *out = n.get_uint64();
      else if (n.is_int64()) {
        const std::int64_t i = n.get_int64();
        if (i >= 0)
          *out = static_cast<std::uint64_t>(i);
        else
          *out = i;
      } else
        *out = n.get_double();
      return SUCCESS;
    }
    case od::json_type::boolean: {
      bool b;
      if (auto e = v.get_bool().get(b)) return e;
      *out = b;
      return SUCCESS;
    }
    case od::json_type::null: {
      bool is_null;
      if (auto e = v.is_null().get(is_null)) return e;
      if (!is_null) return simdjson::INCORRECT_TYPE;
      *out = nullptr;
      return SUCCESS;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

// Visits the whole value without building it (od-full's skip).
error_code Validate(od::value v) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::object: {
      od::object o;
      if (auto e = v.get_object().get(o)) return e;
      for (auto f : o) {
        std::string_view key;
        if (auto e = f.unescaped_key().get(key)) return e;
        od::value child;
        if (auto e = f.value().get(child)) return e;
        if (auto e = Validate(child)) return e;
      }
      return SUCCESS;
    }
    case od::json_type::array: {
      od::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto el : a) {
        od::value child;
        if (auto e = el.get(child)) return e;
        if (auto e = Validate(child)) return e;
      }
      return SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      return v.get_string().get(s);
    }
    case od::json_type::number: {
      od::number n;
      return v.get_number().get(n);
    }
    case od::json_type::boolean: {
      bool b;
      return v.get_bool().get(b);
    }
    case od::json_type::null: {
      bool is_null;
      if (auto e = v.is_null().get(is_null)) return e;
      return is_null ? SUCCESS : simdjson::INCORRECT_TYPE;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

// An object pruned to `sel`; other values kept whole.
error_code Select(od::value v, std::span<const Selection> sel, bool validate_skipped, json* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t != od::json_type::object) return Build(v, out);
  *out = json::object();
  od::object o;
  if (auto e = v.get_object().get(o)) return e;
  for (auto f : o) {
    std::string_view key;
    if (auto e = f.unescaped_key().get(key)) return e;
    od::value child;
    if (auto e = f.value().get(child)) return e;
    const Selection* s = Find(sel, key);
    if (s == nullptr) {
      if (validate_skipped) {
        if (auto e = Validate(child)) return e;
      }
      continue;  // On-Demand skips it structurally on the next step
    }
    json& slot = (*out)[std::string(key)];
    if (auto e = s->members.empty() ? Build(child, &slot)
                                    : Select(child, s->members, validate_skipped, &slot))
      return e;
  }
  return SUCCESS;
}

bool DecodeOnDemand(od::parser& parser, const simdjson::padded_string& body, bool validate_skipped,
                    json* out) {
  od::document doc;
  if (parser.iterate(body).get(doc)) return false;
  od::value root;
  if (doc.get_value().get(root)) return false;
  if (Select(root, kReview, validate_skipped, out)) return false;
  return true;  // 3.0.1 has no document::at_end(): text after the root is not checked here
}

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename F>
double BestNs(F&& f, int iterations) {
  double best = 1e18;
  for (int round = 0; round < 7; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) f();
    const auto ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, ns / iterations);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  od::parser parser;
  if (argc == 4 && std::strcmp(argv[1], "--once") == 0) {
    const std::string variant = argv[2];
    const std::string text = ReadFile(argv[3]);
    json out;
    bool ok = false;
    for (int i = 0; i < 100; ++i) {  // 100 decodes: divide callgrind's total by 100
      if (variant == "pruned") {
        ok = wasd::base::PrunedParse(text, kReview, 100, &out) == wasd::base::PruneStatus::kOk;
      } else if (variant == "od-select" || variant == "od-full") {
        const simdjson::padded_string padded(text);  // the copy that gives simdjson its padding
        ok = DecodeOnDemand(parser, padded, variant == "od-full", &out);
      } else {
        out = json::parse(text, nullptr, false);
        ok = !out.is_discarded();
      }
    }
    std::printf("%s ok=%d\n", variant.c_str(), ok);
    return ok ? 0 : 1;
  }
  std::printf("%-36s %8s %12s %12s %12s %12s  %s\n", "body", "bytes", "pruned ns", "od-select ns",
              "od-full ns", "nlohmann ns", "same document");
  for (int i = 1; i < argc; ++i) {
    const std::string text = ReadFile(argv[i]);
    const int iterations = text.size() > 100'000 ? 200 : 2000;
    json a, b, c;
    wasd::base::PrunedParse(text, kReview, 100, &a);
    DecodeOnDemand(parser, simdjson::padded_string(text), false, &b);
    DecodeOnDemand(parser, simdjson::padded_string(text), true, &c);
    const double pruned = BestNs(
        [&] {
          json out;
          wasd::base::PrunedParse(text, kReview, 100, &out);
        },
        iterations);
    const double select = BestNs(
        [&] {
          json out;
          const simdjson::padded_string padded(text);
          DecodeOnDemand(parser, padded, false, &out);
        },
        iterations);
    const double full = BestNs(
        [&] {
          json out;
          const simdjson::padded_string padded(text);
          DecodeOnDemand(parser, padded, true, &out);
        },
        iterations);
    const double whole =
        BestNs([&] { json out = json::parse(text, nullptr, false); }, iterations / 4 + 1);
    std::string name = argv[i];
    name = name.substr(name.find_last_of('/') + 1);
    std::printf("%-36s %8zu %12.0f %12.0f %12.0f %12.0f  %s\n", name.c_str(), text.size(), pruned,
                select, full, whole, a == b && a == c ? "yes" : "NO");
  }
  return 0;
}

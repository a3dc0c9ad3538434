#include "workloadbuilder/document_builder.h"

#include <string_view>
#include <utility>

#include "base/utf8.h"

namespace wasd::workloadbuilder {

using nlohmann::json;

DocumentBuilder::DocumentBuilder(int max_depth, int max_values, FieldPath base)
    : max_depth_(max_depth), max_values_(max_values), base_(std::move(base)) {}

bool DocumentBuilder::Refuse(Stop why) {
  if (stop_ == Stop::kNone) stop_ = why;
  return false;
}

bool DocumentBuilder::Count(int n) {
  if (n > max_values_ - values_) return Refuse(Stop::kTooManyValues);
  values_ += n;
  return true;
}

bool DocumentBuilder::ExpectsKey() const {
  return !frames_.empty() && frames_.back().value.is_object() && !frames_.back().has_key;
}

bool DocumentBuilder::Start(json container) {
  if (stop_ != Stop::kNone || done_ || ExpectsKey()) return false;
  if (depth() >= max_depth_) return Refuse(Stop::kTooDeep);
  if (!Count(1)) return false;
  frames_.push_back(Frame{std::move(container), {}, false});
  return true;
}

bool DocumentBuilder::Key(std::string key) {
  if (stop_ != Stop::kNone || !ExpectsKey()) return false;
  Frame& f = frames_.back();
  if (f.value.contains(key)) {
    duplicate_path_ = PathOfOpenValue().Child(key);
    duplicate_key_ = std::move(key);
    return Refuse(Stop::kDuplicateKey);
  }
  f.key = std::move(key);
  f.has_key = true;
  return true;
}

bool DocumentBuilder::Value(json scalar) {
  if (stop_ != Stop::kNone || done_ || ExpectsKey()) return false;
  if (!Count(1)) return false;
  return Place(std::move(scalar));
}

bool DocumentBuilder::Insert(const json& value, int values, int value_depth) {
  if (stop_ != Stop::kNone || done_ || ExpectsKey()) return false;
  if (value_depth > max_depth_ - depth()) return Refuse(Stop::kTooDeep);
  if (!Count(values)) return false;
  return Place(value);
}

const json* DocumentBuilder::End() {
  if (stop_ != Stop::kNone || frames_.empty() || frames_.back().has_key) return nullptr;
  json value = std::move(frames_.back().value);
  frames_.pop_back();
  if (!Place(std::move(value))) return nullptr;
  return last_closed_;
}

bool DocumentBuilder::Place(json value) {
  if (frames_.empty()) {
    root_ = std::move(value);
    done_ = true;
    last_closed_ = &root_;
    return true;
  }
  Frame& f = frames_.back();
  if (f.value.is_array()) {
    f.value.push_back(std::move(value));
    last_closed_ = &f.value.back();
  } else {
    auto [it, inserted] = f.value.emplace(std::move(f.key), std::move(value));
    last_closed_ = &it.value();
    f.key.clear();
    f.has_key = false;
    if (!inserted) return false;  // Key() refused repeats; unreachable
  }
  return true;
}

FieldPath DocumentBuilder::PathOfOpenValue() const {
  FieldPath path = base_;
  // Frame i holds frame i+1 at its pending key, or at the end of its array.
  for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
    const Frame& f = frames_[i];
    path = f.value.is_array() ? path.Index(f.value.size()) : path.Child(f.key);
  }
  return path;
}

std::string DocumentBuilder::Reason() const {
  switch (stop_) {
    case Stop::kNone: return {};
    case Stop::kTooDeep: return "nests deeper than " + std::to_string(max_depth_) + " levels";
    case Stop::kTooManyValues: return "holds more than " + std::to_string(max_values_) + " values";
    case Stop::kDuplicateKey: {
      constexpr std::size_t kMaxEcho = 40;  // keys are echoed, not dumped
      const std::string_view key = duplicate_key_;
      return "duplicate key \"" + base::OneLine(key.substr(0, kMaxEcho)) +
             (key.size() > kMaxEcho ? "...\"" : "\"");
    }
  }
  return {};
}

json DocumentBuilder::Take() {
  if (!done_) return nullptr;
  done_ = false;
  last_closed_ = nullptr;
  return std::move(root_);
}

}  // namespace wasd::workloadbuilder

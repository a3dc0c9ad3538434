// JsonPatch: builds an RFC 6902 JSON Patch document (the `patch` of a
// mutating AdmissionReview response) as compact JSON text, op by op, without
// materialising or diffing objects. Paths are JSON Pointers (use
// workloadbuilder::EscapeJsonPointerToken for tokens).
//
// Not thread-safe; one per response.
#ifndef WASD_ADMISSION_JSON_PATCH_H_
#define WASD_ADMISSION_JSON_PATCH_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wasd::admission {

class JsonPatch {
 public:
  // Appends {"op":"add","path":path,"value":value}. RFC 6902 "add" on an
  // existing object member replaces it; "-" as the last token appends to an array.
  void Add(std::string_view path, const nlohmann::json& value);
  // Appends {"op":"remove","path":path}; the target must exist, or the API
  // server refuses the whole patch.
  void Remove(std::string_view path);

  bool empty() const { return ops_ == 0; }
  int size() const { return ops_; }
  // The patch document, e.g. [{"op":"add",…}] ("[]" when empty).
  std::string Json() const { return "[" + body_ + "]"; }

 private:
  std::string body_;
  int ops_ = 0;
};

}  // namespace wasd::admission

#endif  // WASD_ADMISSION_JSON_PATCH_H_

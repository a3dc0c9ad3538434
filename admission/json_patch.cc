#include "admission/json_patch.h"

namespace wasd::admission {

void JsonPatch::Add(std::string_view path, const nlohmann::json& value) {
  if (ops_ > 0) body_ += ',';
  body_ += R"({"op":"add","path":)";
  body_ += nlohmann::json(path).dump();
  body_ += R"(,"value":)";
  body_ += value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  body_ += '}';
  ++ops_;
}

void JsonPatch::Remove(std::string_view path) {
  if (ops_ > 0) body_ += ',';
  body_ += R"({"op":"remove","path":)";
  body_ += nlohmann::json(path).dump();
  body_ += '}';
  ++ops_;
}

}  // namespace wasd::admission

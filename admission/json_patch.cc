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

std::string Base64Encode(std::string_view data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(data[i]) << 16) |
                       (static_cast<unsigned char>(data[i + 1]) << 8) |
                       static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = data.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned char>(data[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace wasd::admission

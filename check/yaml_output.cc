#include "check/yaml_output.h"

#include <algorithm>
#include <cctype>

#include <yaml-cpp/yaml.h>

namespace wasd::check {

namespace {

bool Ambiguous(const std::string& s) {
  if (s.empty()) return true;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const char* const kWords[] = {"true", "false", "yes", "no", "on",
                                       "off",  "null",  "~",   "y",  "n"};
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  const char c = s[0];
  return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
}

void Emit(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      return;
    case nlohmann::json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case nlohmann::json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (Ambiguous(s)) out << YAML::DoubleQuoted;
      out << s;
      return;
    }
    case nlohmann::json::value_t::null: out << YAML::Null; return;
    default: out << v.dump(); return;
  }
}

}  // namespace

std::string ToYaml(const nlohmann::json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  Emit(out, value);
  std::string s = out.c_str();
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

}  // namespace wasd::check

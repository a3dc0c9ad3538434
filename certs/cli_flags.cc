#include "certs/cli_flags.h"

#include <algorithm>
#include <string_view>

namespace wasd::certs {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool IsFlag(std::string_view arg) { return arg.rfind("--", 0) == 0; }

// Appends the comma-separated items of `text` (empty items dropped).
void AppendItems(const std::string& text, std::vector<std::string>* out) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    if (!item.empty()) out->push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

}  // namespace

std::string ParsedFlags::Get(const std::string& name, const std::string& fallback) const {
  const auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

std::vector<std::string> ParsedFlags::List(const std::string& name) const {
  const auto it = lists.find(name);
  return it == lists.end() ? std::vector<std::string>{} : it->second;
}

bool ParsedFlags::On(const std::string& name) const { return switches.count(name) != 0; }

bool ParseFlags(int argc, char** argv, const FlagSpec& spec, ParsedFlags* out,
                std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      out->help = true;
      return true;
    }
    if (!IsFlag(arg)) {
      *error = "unexpected argument " + arg;
      return false;
    }
    std::string value;
    const std::size_t eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    const std::string name = arg.substr(2);
    if (Contains(spec.switches, name)) {
      if (inline_value && value != "true" && value != "false") {
        *error = arg + " takes no value other than true or false";
        return false;
      }
      if (!inline_value || value == "true") out->switches[name] = true;
      continue;
    }
    const bool single = Contains(spec.single, name);
    if (!single && !Contains(spec.repeated, name)) {
      *error = "unknown flag " + arg;
      return false;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        *error = arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (single) {
      if (out->values.count(name) != 0) {
        *error = arg + " given twice";
        return false;
      }
      out->values[name] = value;
      continue;
    }
    std::vector<std::string>& list = out->lists[name];
    AppendItems(value, &list);
    while (!inline_value && i + 1 < argc && !IsFlag(argv[i + 1])) AppendItems(argv[++i], &list);
  }
  return true;
}

}  // namespace wasd::certs

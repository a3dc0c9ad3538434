#include "cmd/completion.h"

namespace wasd::cmd {

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

const runtime::FlagInfo* FindLong(const CompletionNode& node, std::string_view name) {
  for (const runtime::FlagInfo& f : node.flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const runtime::FlagInfo* FindShort(const CompletionNode& node, char alias) {
  for (const runtime::FlagInfo& f : node.flags) {
    if (f.alias != 0 && f.alias == alias) return &f;
  }
  return nullptr;
}

const CompletionNode* FindSub(const CompletionNode& node, std::string_view name) {
  for (const CompletionNode& sub : node.subcommands) {
    if (sub.name == name) return &sub;
  }
  return nullptr;
}

// `values` that start with `typed`, each written after `head` ("--output="
// or "-o" for a value in the same word, else "").
void AddValues(const std::vector<std::string>& values, std::string_view head,
               std::string_view typed, std::vector<std::string>* out) {
  for (const std::string& v : values) {
    if (StartsWith(v, typed)) out->push_back(std::string(head) + v);
  }
}

void AddIfPrefix(std::string candidate, std::string_view typed, std::vector<std::string>* out) {
  if (StartsWith(candidate, typed)) out->push_back(std::move(candidate));
}

// The flag that takes the value of a word such as "-o", "-Ro" (booleans run
// together, the last letter takes the next word), or nullptr.
const runtime::FlagInfo* ShortTakingNext(const CompletionNode& node, std::string_view word) {
  const runtime::FlagInfo* flag = nullptr;
  for (std::size_t k = 1; k < word.size(); ++k) {
    flag = FindShort(node, word[k]);
    if (flag == nullptr) return nullptr;
    if (flag->takes_value) return k + 1 == word.size() ? flag : nullptr;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> Complete(const CompletionNode& root,
                                  const std::vector<std::string>& words) {
  std::vector<std::string> out;
  if (words.empty()) return out;
  const std::string_view cur = words.back();
  const CompletionNode* node = &root;
  std::size_t i = 0;
  bool help = false;
  if (words.size() > 1 && words[0] == "help") {
    help = true;
    i = 1;
  }
  const runtime::FlagInfo* pending = nullptr;  // the flag whose value comes next
  int arguments = 0;                           // plain arguments of the leaf command
  for (; i + 1 < words.size(); ++i) {
    const std::string_view w = words[i];
    if (pending != nullptr) {
      pending = nullptr;
      continue;
    }
    if (StartsWith(w, "--") && w.size() > 2) {
      const std::size_t eq = w.find('=');
      const runtime::FlagInfo* f = FindLong(*node, w.substr(2, eq - 2));
      if (f != nullptr && f->takes_value && eq == std::string_view::npos) pending = f;
      continue;
    }
    if (StartsWith(w, "-") && w.size() > 1) {
      pending = ShortTakingNext(*node, w);
      continue;
    }
    if (const CompletionNode* sub = FindSub(*node, w); sub != nullptr && arguments == 0) {
      node = sub;
      continue;
    }
    ++arguments;
  }
  if (pending != nullptr) {
    AddValues(pending->values, "", cur, &out);
    return out;
  }
  if (StartsWith(cur, "--") && !help) {
    if (const std::size_t eq = cur.find('='); eq != std::string_view::npos) {
      if (const runtime::FlagInfo* f = FindLong(*node, cur.substr(2, eq - 2)); f != nullptr) {
        AddValues(f->values, cur.substr(0, eq + 1), cur.substr(eq + 1), &out);
      }
      return out;
    }
    for (const runtime::FlagInfo& f : node->flags) AddIfPrefix("--" + f.name, cur, &out);
    AddIfPrefix("--help", cur, &out);
    return out;
  }
  if (StartsWith(cur, "-") && !help) {
    // "-o=js", "-ojs": the value of a short flag in the same word.
    if (cur.size() > 2) {
      const runtime::FlagInfo* f = FindShort(*node, cur[1]);
      if (f != nullptr && f->takes_value) {
        const std::size_t skip = cur[2] == '=' ? 3 : 2;
        AddValues(f->values, cur.substr(0, skip), cur.substr(skip), &out);
      }
      return out;
    }
    for (const runtime::FlagInfo& f : node->flags) {
      if (f.alias != 0) out.push_back(std::string("-") + f.alias);
    }
    for (const runtime::FlagInfo& f : node->flags) out.push_back("--" + f.name);
    out.push_back("-h");
    out.push_back("--help");
    return out;
  }
  if (!node->subcommands.empty()) {
    for (const CompletionNode& sub : node->subcommands) AddIfPrefix(sub.name, cur, &out);
    return out;
  }
  if (help || arguments > 0) return out;
  for (const std::string& a : node->arguments) AddIfPrefix(a, cur, &out);
  return out;
}

}  // namespace wasd::cmd

#include "workloadbuilder/names.h"

namespace wasd::workloadbuilder {

std::uint32_t Fnv1a32(std::string_view data) {
  constexpr std::uint32_t kOffsetBasis = 2166136261U;
  constexpr std::uint32_t kPrime = 16777619U;
  std::uint32_t h = kOffsetBasis;
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= kPrime;
  }
  return h;
}

std::string SafeEncodeHash(std::uint32_t hash) {
  // 27 characters: Kubernetes' rand.SafeEncodeString alphabet.
  constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out = std::to_string(hash);
  for (char& c : out) c = kAlphabet[static_cast<unsigned char>(c) % kAlphabet.size()];
  return out;
}

std::string GenerateWorkloadName(std::string_view owner_name, std::string_view owner_uid) {
  std::string hashed = "(types.UID)";
  hashed += owner_uid;
  std::string hash = SafeEncodeHash(Fnv1a32(hashed));  // non-const: moved out when returned
  if (owner_name.empty()) return hash;
  const std::size_t room = kMaxObjectNameLength - hash.size() - 1;
  std::string name(owner_name.substr(0, room));
  name += '-';
  name += hash;
  return name;
}

}  // namespace wasd::workloadbuilder

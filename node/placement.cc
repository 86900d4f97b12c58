#include "node/placement.h"

#include <openssl/sha.h>

#include <algorithm>
#include <utility>

namespace aweft::node {

uint64_t RendezvousWeight(std::string_view name, std::string_view node_id) {
  std::string input;
  input.reserve(name.size() + 1 + node_id.size());
  input.append(name).push_back('\0');
  input.append(node_id);
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), hash);
  uint64_t weight = 0;
  for (int i = 0; i < 8; ++i) weight = weight << 8 | hash[i];
  return weight;
}

bool RanksBefore(std::string_view name, std::string_view a, std::string_view b) {
  const uint64_t wa = RendezvousWeight(name, a), wb = RendezvousWeight(name, b);
  return wa != wb ? wa > wb : a < b;
}

std::vector<std::string> Rank(std::string_view name, std::vector<std::string> peers) {
  std::vector<std::pair<uint64_t, std::string>> weighed;
  weighed.reserve(peers.size());
  for (std::string& peer : peers) {
    const uint64_t weight = RendezvousWeight(name, peer);
    weighed.emplace_back(weight, std::move(peer));
  }
  std::sort(weighed.begin(), weighed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> ranked;
  ranked.reserve(weighed.size());
  for (auto& [weight, peer] : weighed) ranked.push_back(std::move(peer));
  return ranked;
}

std::vector<std::string> Replicas(std::string_view name, std::vector<std::string> peers,
                                  size_t replicas) {
  std::vector<std::string> ranked = Rank(name, std::move(peers));
  if (ranked.size() > replicas) ranked.resize(replicas);
  return ranked;
}

}  // namespace aweft::node

#include "node/placement.h"

#include <openssl/sha.h>

#include <algorithm>

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

std::vector<std::string> Rank(std::string_view name, std::vector<std::string> peers) {
  std::vector<Weighed> weighed;
  weighed.reserve(peers.size());
  for (const std::string& peer : peers) weighed.push_back(Weigh(name, peer));
  std::sort(weighed.begin(), weighed.end(),
            [](const Weighed& a, const Weighed& b) { return a.Before(b); });
  std::vector<std::string> ranked;
  ranked.reserve(weighed.size());
  for (const Weighed& peer : weighed) ranked.emplace_back(peer.id);
  return ranked;
}

std::vector<std::string> Replicas(std::string_view name, std::vector<std::string> peers,
                                  size_t replicas) {
  std::vector<std::string> ranked = Rank(name, std::move(peers));
  if (ranked.size() > replicas) ranked.resize(replicas);
  return ranked;
}

}  // namespace aweft::node

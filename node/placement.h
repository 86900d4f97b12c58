#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// Where a document lives in a cluster of peers (issue 26): rendezvous
// (highest random weight) hashing ranks the peers for each name. The first
// is the document's home, the place that orders its commits; the first R
// keep it. Every node that knows the same peers ranks them the same, and a
// peer that leaves moves only the documents it ranked first for, to the
// peer ranked next (no other document changes home).
namespace aweft::node {

// The weight of `node_id` for `name`: the first 8 bytes, big-endian, of
// SHA-256 over name, one zero byte, node_id. The same on every node, build
// and platform.
uint64_t RendezvousWeight(std::string_view name, std::string_view node_id);

// A peer's place in a name's ranking (Rank's order): before another when
// its weight is higher, or equal with the lesser id. `id` is borrowed.
struct Weighed {
  uint64_t weight;
  std::string_view id;
  bool Before(const Weighed& other) const {
    return weight != other.weight ? weight > other.weight : id < other.id;
  }
};
inline Weighed Weigh(std::string_view name, std::string_view node_id) {
  return {RendezvousWeight(name, node_id), node_id};
}

// `peers` (node ids) by their weight for `name`, highest first; equal weights
// by node id. Duplicates are kept.
std::vector<std::string> Rank(std::string_view name, std::vector<std::string> peers);

// The first `replicas` of Rank(name, peers), or all of them when fewer.
std::vector<std::string> Replicas(std::string_view name, std::vector<std::string> peers,
                                  size_t replicas);

}  // namespace aweft::node

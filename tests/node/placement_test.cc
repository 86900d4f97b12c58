// Rendezvous placement of documents on peers (node/placement.h).

#include "node/placement.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace aweft::node {
namespace {

const std::vector<std::string> kPeers{"n1", "n2", "n3", "n4", "n5"};

std::string Name(int i) { return "doc-" + std::to_string(i); }

TEST_CASE("rendezvous weights are SHA-256 of name, zero, node id: pinned", "[placement]") {
  // From Python: int.from_bytes(sha256(b"board\0node-a").digest()[:8], "big").
  // Nodes of every version must agree: these never change.
  CHECK(RendezvousWeight("board", "node-a") == 0x99362de57035f43aULL);
  CHECK(RendezvousWeight("board", "node-b") == 0x64dcbca8e9afa747ULL);
  CHECK(RendezvousWeight("team/plan", "node-a") == 0x6e127ef2e84e3cbdULL);
  CHECK(Rank("board", {"node-b", "node-a"}) == std::vector<std::string>{"node-a", "node-b"});
}

TEST_CASE("every order of the same peers ranks a name the same", "[placement]") {
  std::mt19937 random(7);
  for (int i = 0; i < 200; ++i) {
    std::vector<std::string> shuffled = kPeers;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    INFO(Name(i));
    CHECK(Rank(Name(i), shuffled) == Rank(Name(i), kPeers));
    std::vector<std::string> sorted = Rank(Name(i), kPeers);
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == kPeers);  // A ranking, nothing lost or added.
    const std::vector<std::string> ranked = Rank(Name(i), kPeers);
    for (size_t a = 0; a < ranked.size(); ++a) {
      for (size_t b = 0; b < ranked.size(); ++b) {
        CHECK(Weigh(Name(i), ranked[a]).Before(Weigh(Name(i), ranked[b])) == (a < b));
      }
    }
  }
}

TEST_CASE("homes and replicas spread evenly over the peers", "[placement]") {
  std::map<std::string, int> homes, kept;
  const int names = 10000;
  for (int i = 0; i < names; ++i) {
    const std::vector<std::string> three = Replicas(Name(i), kPeers, 3);
    REQUIRE(three.size() == 3);
    ++homes[three[0]];
    for (const std::string& peer : three) ++kept[peer];
  }
  for (const std::string& peer : kPeers) {
    INFO(peer << ": home of " << homes[peer] << ", keeps " << kept[peer]);
    // Expected 2,000 and 6,000; the bounds are five standard deviations.
    CHECK(std::abs(homes[peer] - 2000) <= 200);
    CHECK(std::abs(kept[peer] - 6000) <= 250);
  }
}

TEST_CASE("a peer that leaves moves only the documents it was home for, to the next",
          "[placement]") {
  std::vector<std::string> without = kPeers;
  std::erase(without, "n3");
  int moved = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::vector<std::string> before = Rank(Name(i), kPeers);
    const std::vector<std::string> after = Rank(Name(i), without);
    std::vector<std::string> expected = before;
    std::erase(expected, "n3");
    INFO(Name(i));
    CHECK(after == expected);  // The others keep their order.
    if (before[0] == "n3") {
      ++moved;
      CHECK(after[0] == before[1]);
    }
  }
  CHECK(moved > 0);
  // A peer that joins takes only the documents it ranks first for.
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::string> with = kPeers;
    with.push_back("n6");
    const std::string home = Rank(Name(i), with)[0];
    if (home != "n6") CHECK(home == Rank(Name(i), kPeers)[0]);
  }
}

TEST_CASE("fewer peers than replicas: all of them keep it", "[placement]") {
  CHECK(Replicas("board", {"a", "b"}, 3).size() == 2);
  CHECK(Replicas("board", {}, 3).empty());
  CHECK(Replicas("board", kPeers, 1) == std::vector<std::string>{Rank("board", kPeers)[0]});
}

}  // namespace
}  // namespace aweft::node

// Hostile input at a node-like end: random and mutated frames sent as binary
// to a link over an accepted socket, beside a healthy link on the same
// document. Each bad input ends its own connection with a reason named by the
// codec; nothing crashes or hangs, and the healthy link keeps converging.

#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codec/id.h"
#include "sync/link.h"
#include "sync/snapshot.h"
#include "tests/sync/loopback.h"

namespace aweft::sync::testing {
namespace {

using codec::DeltaType;

// A node in miniature: every accepted connection gets a link, and an `open`
// for "board" is answered by sharing the one document.
template <typename Socket>
struct Node {
  struct Connection {
    std::unique_ptr<typename Socket::Channel> channel;  // Outlives the link.
    std::unique_ptr<Link> link;
  };

  explicit Node(Loopback<Socket>& net) : net(net) {}

  void Accept() {
    while (!net.accepted.empty()) {
      Connection c{std::move(net.accepted.front()), nullptr};
      net.accepted.pop_front();
      c.link = std::make_unique<Link>(*c.channel, net.scheduler);
      Link* link = c.link.get();
      link->OnOpen([this, link](const codec::OpenFrame& open) {
        if (open.name == "board") (void)link->Share("board", &doc);
      });
      connections.push_back(std::move(c));
    }
  }

  Loopback<Socket>& net;
  Document doc{Kind::kObject};
  std::vector<Connection> connections;
};

// Valid frames of every kind, encoded: what mutations start from. Their root
// is not the node's, so nothing here can pair with its document.
std::vector<std::string> Samples(std::mt19937_64& rng) {
  codec::Id root, child;
  for (auto& b : root.bytes) b = static_cast<uint8_t>(rng());
  for (auto& b : child.bytes) b = static_cast<uint8_t>(rng());
  const Commit one{{{DeltaType::kAdd, root, {Kind::kObject, "title"}, Value(std::string("plan"))}},
                   {}};
  const Commit two{
      {{DeltaType::kAdd,
        root,
        {Kind::kObject, "child"},
        Value(codec::Reference{codec::Edge::kAttach, Kind::kArray, child})},
       {DeltaType::kAdd, child, {Kind::kArray, std::string("\x81\x01\x02\x03", 4)}, Value(2.5)},
       {DeltaType::kReplace, root, {Kind::kObject, "n"}, Value(codec::Bytes{"\x00\x01"})}},
      std::string("tag!")};
  const std::vector<codec::Frame> frames = {
      codec::OpenFrame{1, "board", codec::RootRef{std::string(root.view()), Kind::kObject}, false},
      codec::OpenFrame{2, "other", std::nullopt, true},
      codec::StateFrame{1, one},
      codec::StateFrame{1, std::nullopt},
      codec::CommitsFrame{1, 1, {one, two}},
      codec::RefusedFrame{1, 3, {{"not-here", "sealed", std::vector<std::string>{"sealed"}}}},
      codec::LeaveFrame{1},
      codec::FaultFrame{1, "left", "bye"},
  };
  std::vector<std::string> out;
  for (const auto& frame : frames) out.push_back(*codec::EncodeFrame(frame));
  return out;
}

// Random bytes, or a sample truncated, bit-flipped, grown or shrunk by a byte.
std::string Mutate(std::mt19937_64& rng, const std::vector<std::string>& samples) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string bytes = samples[pick(samples.size())];
  switch (pick(5)) {
    case 0: {
      bytes.resize(pick(65));
      for (char& c : bytes) c = static_cast<char>(rng());
      break;
    }
    case 1:
      bytes.resize(pick(bytes.size()));
      break;
    case 2:
      bytes[pick(bytes.size())] ^= static_cast<char>(1 << pick(8));
      break;
    case 3:
      bytes.insert(bytes.begin() + static_cast<long>(pick(bytes.size() + 1)),
                   static_cast<char>(rng()));
      break;
    default:
      bytes.erase(pick(bytes.size()), 1);
      break;
  }
  return bytes;
}

TEMPLATE_TEST_CASE("hostile frames end their own connection while a healthy link converges",
                   "[sync][hostile][refusal]", WebSocketKind, TcpKind) {
  Loopback<TestType> net;
  Node<TestType> node(net);
  auto healthy = net.Dial();
  Link client(*healthy, net.scheduler);
  Shared* board = *client.Share("board");
  REQUIRE(RunUntil(net.io, [&] {
    node.Accept();
    return board->ready();
  }));
  Document& copy = *board->document();

  std::mt19937_64 rng(20260913);
  const auto samples = Samples(rng);
  int bad = 0, decoded = 0;
  std::set<std::string> reasons;
  for (int i = 0; i < 160; ++i) {
    const std::string bytes = Mutate(rng, samples);
    auto frame = codec::DecodeFrame(bytes);
    INFO("input " << i << ": " << codec::Hex(bytes));
    const size_t before = node.connections.size();
    auto hostile = net.Dial();
    bool hostile_closed = false;
    hostile->Closed([&] { hostile_closed = true; });
    hostile->SendBinary(bytes);
    REQUIRE(RunUntil(net.io, [&] {
      node.Accept();
      return node.connections.size() > before;
    }));
    auto& connection = node.connections.back();
    if (!frame) {
      ++bad;
      REQUIRE(RunUntil(net.io, [&] { return connection.link->closed() && hostile_closed; }));
      REQUIRE(connection.channel->end_reason());
      CHECK(connection.channel->end_reason()->reason == frame.error().reason);
      reasons.emplace(codec::Name(frame.error().reason));
    } else {
      // A mutant that still decodes is an ordinary frame: the link answers it
      // as it would any peer's.
      ++decoded;
      REQUIRE(RunUntil(net.io, [&] {
        return connection.link->stats().frames_in == 1 || connection.link->closed();
      }));
    }
    node.connections.pop_back();
    if (i % 8 == 0) {
      REQUIRE(copy.Set(copy.root(), "client" + std::to_string(i), 1.0 * i));
      REQUIRE(node.doc.Set(node.doc.root(), "node" + std::to_string(i), 1.0 * i));
    }
  }
  REQUIRE(RunUntil(net.io, [&] { return TakeSnapshot(copy) == TakeSnapshot(node.doc); }));
  CHECK_FALSE(board->ended());
  CHECK_FALSE(healthy->ended());
  CHECK(copy.root().size() == 40);
  CHECK(bad > 100);
  CHECK(decoded > 0);
  CHECK(reasons.count("bad-frame"));
  CHECK(reasons.count("truncated"));
  CHECK(reasons.size() >= 4);
}

TEST_CASE("a link over a WebSocket ignores text messages", "[sync][websocket]") {
  Loopback<WebSocketKind> net;
  auto [dialed, far] = net.Join();
  REQUIRE(far);
  Link link(*far, net.scheduler);  // No text handler: text is dropped.
  std::vector<codec::Frame> answers;
  dialed->Receive([&](const codec::Frame& f) { answers.push_back(f); });
  dialed->SendText("{\"id\":1,\"name\":\"hello\"}");
  dialed->SendText("not even JSON");
  dialed->Send(codec::LeaveFrame{5});
  REQUIRE(RunUntil(net.io, [&] { return !answers.empty(); }));
  CHECK(link.stats().frames_in == 1);
  CHECK_FALSE(link.closed());
  const auto* fault = std::get_if<codec::FaultFrame>(&answers[0]);
  REQUIRE(fault);
  CHECK(fault->reason == "no-topic");
}

}  // namespace
}  // namespace aweft::sync::testing

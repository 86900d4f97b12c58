// Clusters of aweft-node processes on loopback: chains, restarts, cycles.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "node/client.h"
#include "sync/snapshot.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

using sync::Document;

std::vector<std::string> Upstream(const NodeProcess& above) {
  return {"--upstream", above.url()};
}

TEST_CASE("a chain of three nodes with clients at both ends converges, and a killed "
          "middle node loses nothing confirmed",
          "[node][cluster]") {
  TempDir dir;
  boost::asio::io_context io;
  NodeProcess a(dir.path() + "/a");
  a.Start();
  NodeProcess b(dir.path() + "/b", Upstream(a));
  const uint16_t b_port = b.Start();
  NodeProcess c(dir.path() + "/c", Upstream(b));
  c.Start();

  aweft::Client::Options at_a, at_c;
  at_a.url = a.url();
  at_c.url = c.url();
  aweft::Client top(io.get_executor(), at_a), bottom(io.get_executor(), at_c);
  Document board(codec::Kind::kObject);
  sync::Observable& list = board.Create(codec::Kind::kArray);
  REQUIRE(board.Set(board.root(), "list", sync::Attach(list)));
  REQUIRE(top.Share("board", board));
  REQUIRE(RunUntil(io, [&] { return top.connected() && top.unconfirmed("board") == 0; }));
  Document* below = nullptr;
  // Nodes c and b do not hold it: they find it upstream.
  RunUntil(io, [&] { return false; }, std::chrono::milliseconds(300));
  bottom.Open("board", [&](Document& d) { below = &d; });
  REQUIRE(RunUntil(io, [&] { return below != nullptr; }, std::chrono::milliseconds(10000)));

  auto equal = [&] {
    return below && sync::TakeSnapshot(board) == sync::TakeSnapshot(*below);
  };
  REQUIRE(RunUntil(io, equal, std::chrono::milliseconds(10000)));
  // Writes at both ends reach the other.
  REQUIRE(board.Set(board.root(), "from-top", true));
  REQUIRE(below->Set(below->root(), "from-bottom", true));
  REQUIRE(RunUntil(io, equal, std::chrono::milliseconds(10000)));

  // Under load, the middle node dies and comes back.
  for (int i = 0; i < 30; ++i) {
    REQUIRE(board.Push(list, std::string("top-") + std::to_string(i)));
    sync::Observable* their_list = below->Find(list.id());
    REQUIRE(their_list);
    REQUIRE(below->Push(*their_list, std::string("bottom-") + std::to_string(i)));
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
    if (i == 10) b.Kill();
    if (i == 20) b.Start(b_port);
  }
  REQUIRE(RunUntil(io, [&] {
    return equal() && top.unconfirmed("board") == 0 && bottom.unconfirmed("board") == 0;
  }, std::chrono::milliseconds(20000)));
  CHECK(list.size() == 60);  // Every write of both ends, once.
  CHECK(board.root().Get("from-bottom"));
  CHECK(below->root().Get("from-top"));
}

TEST_CASE("a cycle of three nodes is refused with a clear error and the nodes keep running",
          "[node][cluster][refusal]") {
  TempDir dir;
  boost::asio::io_context io;
  // Fixed ports so each can name the next before it starts.
  NodeProcess a(dir.path() + "/a", {"--node-id", "node-a", "--upstream", "ws://127.0.0.1:7631/",
                                    "--log-level", "info"});
  NodeProcess b(dir.path() + "/b", {"--node-id", "node-b", "--upstream", "ws://127.0.0.1:7632/",
                                    "--log-level", "info"});
  NodeProcess c(dir.path() + "/c", {"--node-id", "node-c", "--upstream", "ws://127.0.0.1:7630/",
                                    "--log-level", "info"});
  a.Start(7630);
  b.Start(7631);
  c.Start(7632);
  std::string errors;
  const bool found = RunUntil(io, [&] {
    errors += a.Drain() + b.Drain() + c.Drain();
    return errors.find("event=cycle") != std::string::npos;
  }, std::chrono::milliseconds(10000));
  INFO(errors);
  REQUIRE(found);
  CHECK(errors.find("node-a") != std::string::npos);
  CHECK(errors.find("node-b") != std::string::npos);
  CHECK(errors.find("node-c") != std::string::npos);
  // Each still serves its own clients.
  for (NodeProcess* node : {&a, &b, &c}) {
    aweft::Client::Options options;
    options.url = node->url();
    aweft::Client client(io.get_executor(), options);
    Document doc(codec::Kind::kObject);
    REQUIRE(client.Share("local", doc));
    REQUIRE(doc.Set(doc.root(), "k", 1.0));
    CHECK(RunUntil(io, [&] { return client.connected() && client.unconfirmed("local") == 0; }));
  }
}

}  // namespace
}  // namespace aweft::node::testing

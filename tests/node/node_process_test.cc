// aweft-node as a real process on loopback, with clients over WebSocket.

#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "sync/snapshot.h"
#include "tests/node/node_process.h"
#include "tests/sync/editor.h"

namespace aweft::node::testing {
namespace {

using sync::Document;
using sync::Shared;

struct Fixture {
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler{io.get_executor()};

  Shared* ShareOrFail(Client& client, const std::string& name, Document* doc,
                      sync::ShareHandlers handlers = {}) {
    auto shared = client.link->Share(name, doc, std::move(handlers));
    REQUIRE(shared);
    return *shared;
  }
};

TEST_CASE("two clients converge through a node; a third joining empty gets the state",
          "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document mine(codec::Kind::kObject);
  Client one(f.io, f.scheduler, node.url()), two(f.io, f.scheduler, node.url());
  f.ShareOrFail(one, "board", &mine);  // Creates it on the node.
  REQUIRE(RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(200)) == false);
  Shared* second = f.ShareOrFail(two, "board", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return second->ready(); }));
  Document& theirs = *second->document();
  sync::testing::Editor a(1), b(2);
  for (int i = 0; i < 100; ++i) {
    a.RandomEdit(mine);
    b.RandomEdit(theirs);
    f.io.restart();
    f.io.run_for(std::chrono::milliseconds(1));
  }
  auto equal = [&] { return sync::TakeSnapshot(mine) == sync::TakeSnapshot(theirs); };
  // Concurrent writes to one slot can leave two ends swapped: one yields.
  RunUntil(f.io, equal, std::chrono::milliseconds(1000));
  if (!equal()) second->Resync();
  REQUIRE(RunUntil(f.io, equal));
  Client three(f.io, f.scheduler, node.url());
  Shared* third = f.ShareOrFail(three, "board", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return third->ready(); }));
  CHECK(sync::TakeSnapshot(*third->document()) == sync::TakeSnapshot(mine));
}

TEST_CASE("no-document is answered at once, creates nothing, and the connection goes on",
          "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string heard;
    Shared* missing = f.ShareOrFail(client, "nothing-here", nullptr,
                                    {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
    REQUIRE(RunUntil(f.io, [&] { return missing->ended(); }, std::chrono::milliseconds(1000)));
    CHECK(heard == "no-document");
  }
  Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "x", 1.0));
  f.ShareOrFail(client, "other", &doc);
  Client reader(f.io, f.scheduler, node.url());
  Shared* read = f.ShareOrFail(reader, "other", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  CHECK(read->document()->root().Get("x"));
}

TEST_CASE("undecodable bytes close that connection only", "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document doc(codec::Kind::kObject);
  Client healthy(f.io, f.scheduler, node.url());
  f.ShareOrFail(healthy, "doc", &doc);
  for (std::string garbage : {std::string("\x64open"), std::string("\x84\x02\x01"),
                              std::string("\x82\x09\x01", 3)}) {
    Client bad(f.io, f.scheduler, node.url());
    bool closed = false;
    bad.channel->Closed([&] { closed = true; });
    REQUIRE(RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(100)) == false);
    bad.channel->SendBinary(garbage);
    CHECK(RunUntil(f.io, [&] { return closed; }, std::chrono::milliseconds(1000)));
  }
  Client reader(f.io, f.scheduler, node.url());
  REQUIRE(doc.Set(doc.root(), "still", true));
  Shared* read = f.ShareOrFail(reader, "doc", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready() && read->document()->root().Get("still"); }));
}

TEST_CASE("an open whose root id is not 12 bytes is answered root-mismatch",
          "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  std::vector<codec::Frame> heard;
  client.channel->Receive([&](const codec::Frame& frame) { heard.push_back(frame); });
  client.channel->Send(codec::OpenFrame{5, "short", codec::RootRef{"abc", codec::Kind::kObject}, false});
  REQUIRE(RunUntil(f.io, [&] { return !heard.empty(); }));
  const auto* fault = std::get_if<codec::FaultFrame>(&heard[0]);
  REQUIRE(fault);
  CHECK(fault->topic == 5);
  CHECK(fault->reason == "root-mismatch");
}

TEST_CASE("open then a repeated open with want gets exactly one state",
          "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "k", 1.0));
  {
    Client writer(f.io, f.scheduler, node.url());
    f.ShareOrFail(writer, "doc", &doc);
    RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(300));
  }
  Client client(f.io, f.scheduler, node.url());
  std::vector<codec::Frame> heard;
  client.channel->Receive([&](const codec::Frame& frame) { heard.push_back(frame); });
  const codec::RootRef root{std::string(doc.root().id().view()), codec::Kind::kObject};
  client.channel->Send(codec::OpenFrame{1, "doc", root, false});
  client.channel->Send(codec::OpenFrame{1, "doc", root, true});
  RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(500));
  int states = 0;
  for (const auto& frame : heard) states += std::holds_alternative<codec::StateFrame>(frame);
  CHECK(states == 1);
}

TEST_CASE("frames of a mebibyte are accepted", "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url());
  f.ShareOrFail(writer, "big", &doc);
  REQUIRE(doc.Set(doc.root(), "blob", codec::Bytes{std::string(1 << 20, 'x')}));
  Client reader(f.io, f.scheduler, node.url());
  Shared* read = f.ShareOrFail(reader, "big", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready() && read->document()->root().Get("blob"); }));
}

TEST_CASE("after SIGKILL and restart a client resyncs with ids and objects kept",
          "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  const uint16_t port = node.Start();
  Document doc(codec::Kind::kObject);
  sync::Observable& card = doc.Create(codec::Kind::kObject);
  REQUIRE(doc.Set(card, "title", std::string("plan")));
  REQUIRE(doc.Set(doc.root(), "card", sync::Attach(card)));
  auto writer = std::make_unique<Client>(f.io, f.scheduler, node.url());
  f.ShareOrFail(*writer, "doc", &doc);
  // Seen by a second client: forwarded, so durable on the node first.
  Client witness(f.io, f.scheduler, node.url());
  Shared* seen = f.ShareOrFail(witness, "doc", nullptr);
  REQUIRE(doc.Set(card, "done", true));
  REQUIRE(RunUntil(f.io, [&] {
    return seen->ready() && seen->document()->Find(card.id()) &&
           seen->document()->Find(card.id())->Get("done");
  }));
  node.Kill();
  RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(100));
  writer.reset();
  NodeProcess again(f.dir.path() + "/data");
  again.Start(port);
  Client back(f.io, f.scheduler, again.url());
  Shared* resumed = f.ShareOrFail(back, "doc", &doc);
  resumed->Resync();
  RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(resumed->ended());
  CHECK(doc.Find(card.id()) == &card);  // Same C++ object, nothing reminted.
  CHECK(card.Get("done"));
  CHECK(doc.observable_count() == 2);   // Nothing duplicated.
  Client fresh(f.io, f.scheduler, again.url());
  Shared* copy = f.ShareOrFail(fresh, "doc", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return copy->ready(); }));
  CHECK(sync::TakeSnapshot(*copy->document()) == sync::TakeSnapshot(doc));
}

TEST_CASE("tokens: read-only writes are refused at both ends; no right, no open",
          "[node][process][refusal]") {
  Fixture f;
  const std::string config = f.dir.path() + "/node.toml";
  std::ofstream(config) << "[[tokens]]\ntoken = \"writer-secret\"\nwrite = [\"*\"]\n"
                           "[[tokens]]\ntoken = \"reader-secret\"\nread = [\"public/*\"]\n";
  NodeProcess node(f.dir.path() + "/data", {"--config", config});
  node.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url(), "writer-secret");
  f.ShareOrFail(writer, "public/board", &doc);
  RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(200));

  Client reader(f.io, f.scheduler, node.url(), "reader-secret");
  std::vector<sync::Refused> refused;
  Shared* read = f.ShareOrFail(reader, "public/board", nullptr,
                               {.refused = [&](const sync::Refused& r) { refused.push_back(r); }});
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  REQUIRE(read->document()->Set(read->document()->root(), "vandal", true));
  REQUIRE(RunUntil(f.io, [&] { return !refused.empty(); }));
  CHECK(refused[0].mine);
  CHECK(refused[0].reasons[0].code == "forbidden");
  RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(200));
  CHECK_FALSE(doc.root().Get("vandal"));

  std::string heard;
  Shared* secret = f.ShareOrFail(reader, "private/plans", nullptr,
                                 {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
  REQUIRE(RunUntil(f.io, [&] { return secret->ended(); }));
  CHECK(heard == "forbidden");

  Client nobody(f.io, f.scheduler, node.url());
  bool closed = false;
  nobody.channel->Closed([&] { closed = true; });
  Shared* denied = f.ShareOrFail(nobody, "public/board", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return closed; }));
  CHECK(denied->ended());
}

TEST_CASE("SIGTERM shuts down gracefully and keeps what it stored", "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  const uint16_t port = node.Start();
  Document doc(codec::Kind::kObject);
  {
    Client writer(f.io, f.scheduler, node.url());
    f.ShareOrFail(writer, "doc", &doc);
    for (int i = 0; i < 50; ++i) REQUIRE(doc.Set(doc.root(), "k" + std::to_string(i), 1.0 * i));
    RunUntil(f.io, [&] { return false; }, std::chrono::milliseconds(300));
    node.Signal(SIGTERM);
    const int status = node.Wait();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  NodeProcess again(f.dir.path() + "/data");
  again.Start(port);
  Client reader(f.io, f.scheduler, again.url());
  Shared* read = f.ShareOrFail(reader, "doc", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  CHECK(sync::TakeSnapshot(*read->document()) == sync::TakeSnapshot(doc));
}

TEST_CASE("a bad setting exits 2 naming it", "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--set", "storage.durability=fast"});
  CHECK_THROWS(node.Start());
  CHECK(WEXITSTATUS(node.Wait()) == 2);
}

}  // namespace
}  // namespace aweft::node::testing

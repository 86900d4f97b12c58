// aweft-node as a real process on loopback, with clients over WebSocket.

#include "tests/node/node_process.h"

#include <algorithm>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include "admin/http_client.h"
#include "node/client.h"
#include "node/log.h"
#include "sync/snapshot.h"
#include "tests/node/node_fixture.h"
#include "tests/sync/editor.h"

namespace aweft::node::testing {
namespace {

using sync::Document;
using sync::Shared;

struct Fixture : ClientFixture {
  // Waits until a fresh client reading `name` from the node sees a document
  // equal to `expected`: the node holds it (the node stores before it
  // forwards).
  bool NodeHas(const std::string& url, const std::string& name, const Document& expected,
               const std::string& token = "") {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      Client reader(io, scheduler, url, token);
      Shared* read = ShareOrFail(reader, name, nullptr);
      // The name may not be there yet (no-document): ask again.
      if (RunUntil(io,
                   [&] {
                     return read->ended() ||
                            (read->ready() &&
                             sync::TakeSnapshot(*read->document()) == sync::TakeSnapshot(expected));
                   }) &&
          !read->ended()) {
        return true;
      }
    }
    return false;
  }
};

TEST_CASE("two clients converge through a node, and a third joining empty gets the state",
          "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document mine(codec::Kind::kObject);
  Client one(f.io, f.scheduler, node.url()), two(f.io, f.scheduler, node.url());
  f.ShareOrFail(one, "board", &mine);  // Creates it on the node.
  REQUIRE(RunUntil(
              f.io, [&] { return false; }, std::chrono::milliseconds(200)) == false);
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
  // Concurrent writes to one slot (or adds of one key, refused at one end)
  // would leave two bare ends apart; the node orders the document, and
  // corrects both to its state (docs/sync.md "One order"), with no resync.
  REQUIRE(RunUntil(f.io, equal));
  CHECK(f.NodeHas(node.url(), "board", mine));  // A third, joining empty, gets it.
}

TEST_CASE("no-document is answered at once, creates nothing, and the connection goes on",
          "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string heard;
    Shared* missing =
        f.ShareOrFail(client, "nothing-here", nullptr,
                      {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
    REQUIRE(RunUntil(
        f.io, [&] { return missing->ended(); }, std::chrono::milliseconds(1000)));
    CHECK(heard == "no-document");
  }
  Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "x", 1.0));
  f.ShareOrFail(client, "other", &doc);
  CHECK(f.NodeHas(node.url(), "other", doc));
}

TEST_CASE("undecodable bytes close that connection only", "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document doc(codec::Kind::kObject);
  Client healthy(f.io, f.scheduler, node.url());
  f.ShareOrFail(healthy, "doc", &doc);
  for (std::string garbage :
       {std::string("\x64open"), std::string("\x84\x02\x01"), std::string("\x82\x09\x01", 3)}) {
    Client bad(f.io, f.scheduler, node.url());
    bool closed = false;
    bad.channel->Closed([&] { closed = true; });
    REQUIRE(RunUntil(
                f.io, [&] { return false; }, std::chrono::milliseconds(100)) == false);
    bad.channel->SendBinary(garbage);
    CHECK(RunUntil(
        f.io, [&] { return closed; }, std::chrono::milliseconds(1000)));
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
  client.channel->Send(
      codec::OpenFrame{5, "short", codec::RootRef{"abc", codec::Kind::kObject}, false});
  REQUIRE(RunUntil(f.io, [&] { return !heard.empty(); }));
  const auto* fault = std::get_if<codec::FaultFrame>(&heard[0]);
  REQUIRE(fault);
  CHECK(fault->topic == 5);
  CHECK(fault->reason == "root-mismatch");
}

TEST_CASE("open then a repeated open with want gets exactly one state", "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "k", 1.0));
  {
    Client writer(f.io, f.scheduler, node.url());
    f.ShareOrFail(writer, "doc", &doc);
    REQUIRE(f.NodeHas(node.url(), "doc", doc));
  }
  Client client(f.io, f.scheduler, node.url());
  std::vector<codec::Frame> heard;
  client.channel->Receive([&](const codec::Frame& frame) { heard.push_back(frame); });
  const codec::RootRef root{std::string(doc.root().id().view()), codec::Kind::kObject};
  client.channel->Send(codec::OpenFrame{1, "doc", root, false});
  client.channel->Send(codec::OpenFrame{1, "doc", root, true});
  auto states = [&] {
    int n = 0;
    for (const auto& frame : heard) n += std::holds_alternative<codec::StateFrame>(frame);
    return n;
  };
  REQUIRE(RunUntil(f.io, [&] { return states() >= 1; }));
  RunUntil(
      f.io, [&] { return false; }, std::chrono::milliseconds(300));
  CHECK(states() == 1);
}

TEST_CASE("frames of a mebibyte are accepted", "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url());
  // In the open's state: a frame over a mebibyte (a commit that size would
  // pass limits.max_commit_bytes).
  REQUIRE(doc.Set(doc.root(), "blob", codec::Bytes{std::string(1 << 20, 'x')}));
  f.Create(writer, "big", doc);
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
  f.Create(*writer, "doc", doc);
  // Seen by a second client: forwarded, so durable on the node first.
  Client witness(f.io, f.scheduler, node.url());
  Shared* seen = f.ShareOrFail(witness, "doc", nullptr);
  REQUIRE(doc.Set(card, "done", true));
  REQUIRE(RunUntil(f.io, [&] {
    return seen->ready() && seen->document()->Find(card.id()) &&
           seen->document()->Find(card.id())->Get("done");
  }));
  node.Kill();
  RunUntil(
      f.io, [&] { return false; }, std::chrono::milliseconds(100));
  writer.reset();
  NodeProcess again(f.dir.path() + "/data");
  again.Start(port);
  Client back(f.io, f.scheduler, again.url());
  Shared* resumed = f.ShareOrFail(back, "doc", &doc);
  resumed->Resync();
  RunUntil(
      f.io, [&] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(resumed->ended());
  CHECK(doc.Find(card.id()) == &card);  // Same C++ object, nothing reminted.
  CHECK(card.Get("done"));
  CHECK(doc.observable_count() == 2);  // Nothing duplicated.
  Client fresh(f.io, f.scheduler, again.url());
  Shared* copy = f.ShareOrFail(fresh, "doc", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return copy->ready(); }));
  CHECK(sync::TakeSnapshot(*copy->document()) == sync::TakeSnapshot(doc));
}

TEST_CASE("tokens: read-only writes are refused at both ends, and no right means no open",
          "[node][process][refusal]") {
  Fixture f;
  const std::string config = f.dir.path() + "/node.toml";
  std::ofstream(config) << "[[tokens]]\ntoken = \"writer-secret\"\nwrite = [\"*\"]\n"
                           "[[tokens]]\ntoken = \"reader-secret\"\nread = [\"public/*\"]\n";
  NodeProcess node(f.dir.path() + "/data", {"--config", config, "--log-level", "debug"});
  node.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url(), "writer-secret");
  Client by_query(f.io, f.scheduler, node.url() + "?token=writer-secret");
  Document other(codec::Kind::kObject);
  Shared* queried = f.ShareOrFail(by_query, "public/other", &other);
  REQUIRE(RunUntil(f.io, [&] { return queried->ready(); }));
  f.ShareOrFail(writer, "public/board", &doc);
  REQUIRE(f.NodeHas(node.url(), "public/board", doc, "writer-secret"));

  Client reader(f.io, f.scheduler, node.url(), "reader-secret");
  std::vector<sync::Refused> refused;
  Shared* read = f.ShareOrFail(reader, "public/board", nullptr,
                               {.refused = [&](const sync::Refused& r) { refused.push_back(r); }});
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  REQUIRE(read->document()->Set(read->document()->root(), "vandal", true));
  REQUIRE(RunUntil(f.io, [&] { return !refused.empty(); }));
  CHECK(refused[0].mine);
  CHECK(refused[0].reasons[0].code == "forbidden");
  RunUntil(
      f.io, [&] { return false; }, std::chrono::milliseconds(200));
  CHECK_FALSE(doc.root().Get("vandal"));

  std::string heard;
  Shared* secret =
      f.ShareOrFail(reader, "private/plans", nullptr,
                    {.fault = [&](const std::string& r, const std::string&) { heard = r; }});
  REQUIRE(RunUntil(f.io, [&] { return secret->ended(); }));
  CHECK(heard == "forbidden");

  Client nobody(f.io, f.scheduler, node.url());
  bool closed = false;
  nobody.channel->Closed([&] { closed = true; });
  Shared* denied = f.ShareOrFail(nobody, "public/board", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return closed; }));
  CHECK(denied->ended());
  // Tokens, in a header or in the URL, are never in the log.
  const std::string log = node.Drain();
  CHECK_THAT(log, Catch::Contains("event=connect"));
  CHECK_THAT(log, !Catch::Contains("secret"));
}

TEST_CASE("a log value is quoted with its quotes, backslashes and control characters escaped",
          "[node][log]") {
  CHECK(fmt::format("doc={}", Quoted{"plain"}) == "doc=\"plain\"");
  CHECK(fmt::format("doc={}", Quoted{"a\"b\\c"}) == "doc=\"a\\\"b\\\\c\"");
  CHECK(fmt::format("{}", Quoted{std::string_view("x\ny\x01z\x7f", 6)}) == "\"x\\ny\\x01z\\x7f\"");
  CHECK(fmt::format("{}", Quoted{"caf\xc3\xa9"}) == "\"caf\xc3\xa9\"");  // UTF-8 kept.
}

// A name chosen to forge a line (issue 28): it stays one quoted value.
TEST_CASE("a document name cannot forge keys in the node's log", "[node][process][log]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--log-level", "info"});
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  Document doc(codec::Kind::kObject);
  const std::string evil = "evil\" event=failure detail=\"disk gone";
  Shared* shared = f.ShareOrFail(client, evil, &doc);
  REQUIRE(RunUntil(f.io, [&] { return shared->ready(); }));
  std::string log;
  REQUIRE(RunUntil(f.io, [&] {
    log += node.Drain();
    return log.find("event=share") != std::string::npos;
  }));
  INFO(log);
  CHECK_THAT(log,
             Catch::Contains("event=load doc=\"evil\\\" event=failure detail=\\\"disk gone\""));
  CHECK_THAT(log, !Catch::Contains("doc=\"evil\" event=failure"));
}

TEST_CASE("log lines carry an ISO 8601 time with its zone and the level as log_level spells it",
          "[node][process][log]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data",
                   {"--log-level", "info", "--set", "tokens=[{token=\"a-good-token\"}]"});
  node.Start();
  Client stranger(f.io, f.scheduler, node.url());  // No token: refused, at warn.
  std::string log;
  REQUIRE(RunUntil(f.io, [&] {
    log += node.Drain();
    return log.find("event=refused") != std::string::npos;
  }));
  INFO(log);
  // 2026-12-07T05:43:11.688+00:00 info event=start ...
  const std::regex line(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d (info|warn) event=\w+.*)");
  std::istringstream lines(log);
  int seen = 0;
  for (std::string text; std::getline(lines, text);) {
    if (text.find(" event=") == std::string::npos) continue;  // The port lines.
    INFO(text);
    CHECK(std::regex_match(text, line));
    ++seen;
  }
  CHECK(seen >= 2);
  CHECK_THAT(log, Catch::Contains(" warn event=refused"));
}

TEST_CASE("log_format json writes one object per line, and a hostile name stays one string",
          "[node][process][log]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--log-level", "info", "--log-format", "json"});
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  Document doc(codec::Kind::kObject);
  const std::string evil = "evil\" event=failure detail=\"disk \\gone";
  Shared* shared = f.ShareOrFail(client, evil, &doc);
  REQUIRE(RunUntil(f.io, [&] { return shared->ready(); }));
  std::string log;
  REQUIRE(RunUntil(f.io, [&] {
    log += node.Drain();
    return log.find("\"event\":\"share\"") != std::string::npos;
  }));
  INFO(log);
  std::istringstream lines(log);
  bool loaded = false;
  for (std::string text; std::getline(lines, text);) {
    if (text.rfind("aweft-node ", 0) == 0) continue;  // The port lines.
    boost::system::error_code ec;
    const boost::json::value line = boost::json::parse(text, ec);
    INFO(text);
    REQUIRE_FALSE(ec);
    const boost::json::object& object = line.as_object();
    CHECK(object.at("time").is_string());
    CHECK(object.at("level").is_string());
    CHECK(object.at("event") != "failure");
    if (object.at("event") == "load") {
      loaded = true;
      CHECK(object.at("doc") == evil.c_str());
      CHECK(object.at("created") == true);
      CHECK_FALSE(object.contains("detail"));
    }
  }
  CHECK(loaded);
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
    REQUIRE(f.NodeHas(node.url(), "doc", doc));
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

TEST_CASE("a client forgets documents still being attached, and goes on", "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  aweft::Client::Options options;
  options.url = node.url();
  aweft::Client client(f.io.get_executor(), options);
  std::vector<std::unique_ptr<Document>> docs;
  for (int i = 0; i < 40; ++i) {
    docs.push_back(std::make_unique<Document>(codec::Kind::kObject));
    REQUIRE(client.Share("d" + std::to_string(i), *docs.back()));
  }
  // Forgotten while their `has` questions are out (a peer moving documents
  // to another home does this): each attach's closure ends its own entry.
  REQUIRE(RunUntil(f.io, [&] { return client.connected(); }));
  for (int i = 0; i < 40; ++i) client.Forget("d" + std::to_string(i));
  Document last(codec::Kind::kObject);
  REQUIRE(client.Share("last", last));
  REQUIRE(last.Set(last.root(), "k", 1.0));
  CHECK(RunUntil(f.io, [&] { return client.unconfirmed("last") == 0; }));
}

TEST_CASE("clients ride out a node killed and restarted: nothing confirmed or offline is lost",
          "[node][process][client]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  const uint16_t port = node.Start();
  aweft::Client::Options options;
  options.url = node.url();
  aweft::Client alice(f.io.get_executor(), options), bob(f.io.get_executor(), options);
  Document doc(codec::Kind::kObject);
  sync::Observable& list = doc.Create(codec::Kind::kArray);
  REQUIRE(doc.Set(doc.root(), "list", sync::Attach(list)));
  REQUIRE(alice.Share("board", doc));
  // Confirmed once the node has made it from alice's state (bob's open, on
  // another socket, may otherwise reach the node first and find none).
  REQUIRE(doc.Set(doc.root(), "by", std::string("alice")));
  REQUIRE(RunUntil(f.io, [&] { return alice.connected() && alice.unconfirmed("board") == 0; }));
  Document* bobs = nullptr;
  bob.Open("board", [&](Document& d) { bobs = &d; });
  REQUIRE(RunUntil(f.io, [&] { return bobs != nullptr; }));
  for (int i = 0; i < 20; ++i) REQUIRE(doc.Push(list, std::string("before-") + std::to_string(i)));
  REQUIRE(RunUntil(f.io, [&] { return alice.unconfirmed("board") == 0; }));
  REQUIRE(
      RunUntil(f.io, [&] { return bobs->Find(list.id()) && bobs->Find(list.id())->size() == 20; }));
  sync::Observable* bobs_list = bobs->Find(list.id());

  node.Kill();
  // Written while the node is down.
  for (int i = 0; i < 5; ++i) REQUIRE(doc.Push(list, std::string("offline-") + std::to_string(i)));
  REQUIRE(bobs->Set(bobs->root(), "bob", true));
  RunUntil(
      f.io, [&] { return false; }, std::chrono::milliseconds(200));
  CHECK_FALSE(alice.connected());

  NodeProcess again(f.dir.path() + "/data");
  again.Start(port);
  auto converged = [&] {
    return alice.unconfirmed("board") == 0 && bob.unconfirmed("board") == 0 &&
           sync::TakeSnapshot(doc) == sync::TakeSnapshot(*bobs);
  };
  REQUIRE(RunUntil(f.io, converged, std::chrono::milliseconds(10000)));
  CHECK(alice.connections() >= 2);
  CHECK(doc.Find(list.id()) == &list);  // Identity kept at both ends.
  CHECK(bobs->Find(list.id()) == bobs_list);
  CHECK(list.size() == 25);  // Nothing lost, nothing doubled.
  CHECK(doc.root().Get("bob"));
  // And they keep editing.
  REQUIRE(doc.Push(list, std::string("after")));
  REQUIRE(RunUntil(f.io, [&] { return bobs_list->size() == 26; }));
}

// A node upstream of another asks its upstream to confirm through the
// scheduler its links send through. A commit made after the question was
// posted is sent after it: the answer must not confirm it (nor mark the
// store head past it), or a node killed before sending it loses it.
TEST_CASE("a confirmation covers only the commits sent before its question",
          "[node][process][client]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  sync::ManualScheduler gate;  // Run by hand, one posted item at a time.
  uint64_t head = 0;
  std::vector<uint64_t> confirmed;
  aweft::Client::Options options;
  options.url = node.url();
  options.link_scheduler = &gate;
  options.mark = [&](const std::string&) { return head; };
  options.confirmed = [&](const std::string&, uint64_t seq, node::Level) {
    confirmed.push_back(seq);
  };
  aweft::Client client(f.io.get_executor(), options);
  auto flowing = [&] {
    gate.RunUntilIdle();
    return client.connected() && client.unconfirmed("doc") == 0;
  };
  Document doc(codec::Kind::kObject);
  REQUIRE(client.Share("doc", doc));
  REQUIRE(doc.Set(doc.root(), "a", 1.0));
  head = 1;
  REQUIRE(RunUntil(f.io, flowing));
  REQUIRE(confirmed.back() == 1);

  REQUIRE(doc.Set(doc.root(), "b", 2.0));  // Posts its flush...
  head = 2;
  REQUIRE(gate.RunOne());  // ...which sends it.
  // The confirmation timer posts the question; "c" is made after it.
  REQUIRE(RunUntil(f.io, [&] { return gate.pending() == 1; }));
  REQUIRE(doc.Set(doc.root(), "c", 3.0));
  head = 3;
  REQUIRE(gate.pending() == 2);
  REQUIRE(gate.RunOne());  // The question leaves; "c" waits behind it.
  const size_t answers = confirmed.size();
  REQUIRE(RunUntil(f.io, [&] { return confirmed.size() > answers; }));
  CHECK(confirmed.back() == 2);
  CHECK(client.unconfirmed("doc") == 1);
  // Once "c" leaves, the next question confirms it.
  REQUIRE(RunUntil(f.io, flowing));
  CHECK(confirmed.back() == 3);
}

TEST_CASE("a document nobody shares is evicted after its idle time", "[node][process]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data",
                   {"--set", "documents.idle_evict_seconds=1", "--log-level", "info"});
  node.Start();
  Document doc(codec::Kind::kObject);
  {
    Client writer(f.io, f.scheduler, node.url());
    f.ShareOrFail(writer, "doc", &doc);
    REQUIRE(doc.Set(doc.root(), "k", 1.0));
    REQUIRE(f.NodeHas(node.url(), "doc", doc));
  }
  std::string log;
  CHECK(RunUntil(
      f.io,
      [&] {
        log += node.Drain();
        return log.find("event=evict doc=\"doc\"") != std::string::npos;
      },
      std::chrono::milliseconds(6000)));
  CHECK(f.NodeHas(node.url(), "doc", doc));  // Loaded again on the next share.
}

TEST_CASE("without tokens the node will not listen beyond loopback", "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--listen", "0.0.0.0:0"});
  CHECK_THROWS(node.Start());
  CHECK(WEXITSTATUS(node.Wait()) == 2);
}

TEST_CASE("start-up errors exit 2 on stderr naming the key, and leave no data directory behind",
          "[node][process][refusal]") {
  Fixture f;
  const std::string at = f.dir.path();
  NodeProcess running(at + "/held");
  running.Start();
  std::ofstream(at + "/file") << "x";
  std::filesystem::create_directories(at + "/other/store");
  std::ofstream(at + "/other/store/readme.txt") << "not a store";
  const std::string fresh = at + "/fresh";  // Made by the attempt, then removed.
  const std::string loopback = "--listen 127.0.0.1:0 --admin 127.0.0.1:0 --data ";
  struct Case {
    std::string args, starts, says;
  };
  const Case cases[] = {
      {loopback + at + "/file", "'data' is " + at + "/file", "which is not a directory"},
      {loopback + at + "/file/sub", "'data' is " + at + "/file/sub", "cannot be made"},
      {loopback + at + "/other", "'data' is " + at + "/other", "holds no aweft store"},
      {loopback + at + "/held", "'data' is " + at + "/held", "another process holds open"},
      {"--admin 127.0.0.1:0 --data " + fresh +
           " --listen 127.0.0.1:" + std::to_string(running.port()),
       "'listen' is 127.0.0.1:" + std::to_string(running.port()), "Address already in use"},
      {"--listen 127.0.0.1:0 --data " + fresh +
           " --admin 127.0.0.1:" + std::to_string(running.admin_port()),
       "'admin' is 127.0.0.1:" + std::to_string(running.admin_port()), "Address already in use"},
  };
  for (const Case& c : cases) {
    const Ran ran = RunNode(at, c.args);
    INFO(c.args << "\nstdout: " << ran.out << "\nstderr: " << ran.err);
    CHECK(ran.status == 2);
    CHECK(ran.out.empty());
    CHECK_THAT(ran.err, Catch::StartsWith("aweft-node: config: " + c.starts + ", "));
    CHECK_THAT(ran.err, Catch::Contains(c.says));
    CHECK(std::count(ran.err.begin(), ran.err.end(), '\n') == 1);  // One line.
    CHECK_FALSE(std::filesystem::exists(fresh));
  }
  CHECK_FALSE(std::filesystem::exists(at + "/file/sub"));
  CHECK(std::filesystem::exists(at + "/other/store/readme.txt"));  // Left as it was.
}

TEST_CASE("secrets come from the environment, and stay off the command line", "[node][process]") {
  Fixture f;
  setenv("AWEFT_ADMIN_TOKEN", "env-admin-secret", 1);
  setenv("AWEFT_TOKENS", R"([{token="env-link-secret", write=["*"]}])", 1);
  NodeProcess node(f.dir.path() + "/data");
  node.Start();
  unsetenv("AWEFT_ADMIN_TOKEN");
  unsetenv("AWEFT_TOKENS");
  auto ask = [&](const std::string& token) {
    return admin::HttpRequest(node.admin_url(), "GET", "/v1/node", token, "",
                              std::chrono::seconds(5))
        .status;
  };
  CHECK(ask("") == 401);
  CHECK(ask("env-admin-secret") == 200);
  Client stranger(f.io, f.scheduler, node.url());
  Client member(f.io, f.scheduler, node.url(), "env-link-secret");
  Document doc(codec::Kind::kObject);
  Shared* shared = f.ShareOrFail(member, "board", &doc);
  REQUIRE(RunUntil(f.io, [&] { return shared->ready() && stranger.channel->ended(); }));
  std::ifstream in("/proc/" + std::to_string(node.pid()) + "/cmdline");
  const std::string command_line(std::istreambuf_iterator<char>(in), {});
  CHECK(command_line.find("secret") == std::string::npos);

  setenv("AWEFT_TOKENS", "[{token=", 1);  // Not TOML: named, exit 2.
  const Ran ran =
      RunNode(f.dir.path(), "--listen 127.0.0.1:0 --admin off --data " + f.dir.path() + "/other");
  unsetenv("AWEFT_TOKENS");
  CHECK(ran.status == 2);
  CHECK_THAT(ran.err, Catch::Contains("AWEFT_TOKENS"));
}

TEST_CASE("a bad setting exits 2 naming it", "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--set", "storage.durability=fast"});
  CHECK_THROWS(node.Start());
  CHECK(WEXITSTATUS(node.Wait()) == 2);
  for (const char* threads : {"0", "257", "two"}) {
    NodeProcess bad(f.dir.path() + "/data", {"--threads", threads});
    CHECK_THROWS(bad.Start());
    CHECK(WEXITSTATUS(bad.Wait()) == 2);
  }
}

TEST_CASE("a mistyped flag or key is refused with the nearest one", "[node][process][refusal]") {
  Fixture f;
  struct Case {
    std::string args, says;
  };
  const std::string data = " --data " + f.dir.path() + "/data --admin off";
  const Case cases[] = {
      {"--dat x", "'--dat' is not a flag (did you mean --data?). See --help."},
      {"--listne 127.0.0.1:0" + data, "'--listne' is not a flag (did you mean --listen?)"},
      {"--set limits.max_conections=5" + data,
       "'limits.max_conections' is not a setting (did you mean limits.max_connections?)"},
      {"--set storage.durabilty=sync" + data, "(did you mean storage.durability?)"},
      {"--set tokens=[{tokn=\"12345678\"}]" + data,
       "'tokens[0].tokn' is not a setting (did you mean tokens[0].token?)"},
      {"--frobnicate 1" + data, "'--frobnicate' is not a flag. See --help."},  // Nothing near.
      {"--data", "--data"},                                                    // No value.
      {"stray" + data, "'stray' is not a flag: aweft-node takes flags only"},
      // Not mistyped, but two settings that cannot hold together.
      {"--set documents.max_frame_bytes=1048576" + data,
       "'limits.max_document_bytes' is 8388608: a document's state travels in one message, so it "
       "must be at most documents.max_frame_bytes (1048576) less 4096"},
      {"--set cluster.replicas=0" + data, "'cluster.replicas' must be at least 1"},
      {"--set cluster.failover_ms=10" + data, "'cluster.failover_ms' must be at least 100"},
      {"--set 'peers=[{url=\"ws://a:1/\",names=[\"x\"]}]'" + data,
       "'peers[0].names' is not a setting"},
      {"--peer ws://127.0.0.1:9/ --upstream ws://127.0.0.1:8/" + data,
       "[[peers]] and [[upstreams]] go apart"},
      {"--peer http://127.0.0.1:9/" + data, "'peers[0].url' must be a ws:// or wss:// URL"},
  };
  for (const Case& c : cases) {
    const Ran ran = RunNode(f.dir.path(), c.args);
    INFO(c.args << "\nstderr: " << ran.err);
    CHECK(ran.status == 2);
    CHECK_THAT(ran.err, Catch::StartsWith("aweft-node: config: ") && Catch::Contains(c.says));
  }
  // --name=value is --name value.
  const Ran joined = RunNode(f.dir.path(), "--threads=two" + data);
  CHECK(joined.status == 2);
  CHECK_THAT(joined.err, Catch::Contains("'threads'"));
}

}  // namespace
}  // namespace aweft::node::testing

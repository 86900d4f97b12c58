// Documents as large as limits.max_document_bytes, and past it, with real node
// processes on loopback (docs/reliability.md "Limits").

#include <catch2/catch.hpp>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "node/client.h"
#include "tests/node/node_fixture.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

using sync::Document;
using sync::Shared;

// The value under `key` in `doc`'s root, when it is text of `size` bytes.
bool Holds(const Document& doc, const std::string& key, size_t size) {
  const codec::Value* value = doc.root().Get(key);
  const auto* text = value ? std::get_if<std::string>(value) : nullptr;
  return text && text->size() == size;
}

// The last 3,000 bytes of a log.
std::string Tail(const std::string& log) {
  return log.substr(log.size() > 3000 ? log.size() - 3000 : 0);
}

// Stops `node` with SIGTERM and starts it again on its port and data.
void Restart(NodeProcess& node) {
  const uint16_t port = node.port();
  node.Signal(SIGTERM);
  node.Wait();
  node.Start(port);
}

TEST_CASE("a commit or a new document's state past max_document_bytes is refused limit",
          "[node][process][limits]") {
  ClientFixture f;
  // Eviction rounds every second: a declined document goes at the next.
  NodeProcess node(f.dir.path() + "/data", {"--set", "limits.max_document_bytes=65536", "--set",
                                            "documents.idle_evict_seconds=4"});
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  Document doc(codec::Kind::kObject);
  std::vector<sync::Refused> refused;
  sync::ShareHandlers handlers;
  handlers.refused = [&](const sync::Refused& r) { refused.push_back(r); };
  REQUIRE(client.link->Share("grow", &doc, std::move(handlers)));
  // Answered first: the writes go as commits, not in the state.
  REQUIRE(RunUntil(f.io, [&] { return client.link->stats().frames_in > 0; }));
  const std::string third(30 << 10, 'x');
  REQUIRE(doc.Set(doc.root(), "k0", third));
  REQUIRE(doc.Set(doc.root(), "k1", third));
  REQUIRE(doc.Set(doc.root(), "k2", third));  // 92 KiB: over.
  REQUIRE(RunUntil(f.io, [&] { return !refused.empty(); }));
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].reasons.at(0).code == "limit");
  CHECK_THAT(refused[0].reasons.at(0).message,
             Catch::Contains("over 65536 (limits.max_document_bytes)"));
  // Undone here, as the node orders the document.
  REQUIRE(RunUntil(f.io, [&] { return doc.root().Get("k2") == nullptr; }));
  // What shrinks it is taken; then there is room again.
  REQUIRE(doc.Set(doc.root(), "k0", "small"));
  REQUIRE(doc.Set(doc.root(), "k2", third));
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(500));
  CHECK(refused.size() == 1);
  Client reader(f.io, f.scheduler, node.url());
  Shared* read = f.ShareOrFail(reader, "grow", nullptr);
  REQUIRE(
      RunUntil(f.io, [&] { return read->ready() && Holds(*read->document(), "k2", 30 << 10); }));
  CHECK(Holds(*read->document(), "k1", 30 << 10));
  CHECK(read->document()->bytes() <= 65536);

  // A client that makes a document with a state over the limit: declined.
  Document large(codec::Kind::kObject);
  REQUIRE(large.Set(large.root(), "all", std::string(70 << 10, 'y')));
  Shared* made = f.ShareOrFail(client, "large", &large);
  REQUIRE(RunUntil(f.io, [&] { return made->ended(); }));
  CHECK(made->end_reason() == "limit");
  // What the node made for it goes with it: opened again with a state
  // within the limit, the name is made from that state, not served empty.
  Document smaller(codec::Kind::kObject);
  REQUIRE(smaller.Set(smaller.root(), "all", std::string(10 << 10, 'z')));
  Client again(f.io, f.scheduler, node.url());
  Shared* remade = f.ShareOrFail(again, "large", &smaller);
  REQUIRE(RunUntil(f.io, [&] { return remade->ended() || remade->ready(); }));
  REQUIRE_FALSE(remade->ended());
  CHECK(Holds(smaller, "all", 10 << 10));
  // Ready here at once (it holds the document): the node has it once its
  // admin endpoint shows it.
  auto stored = [&] {
    const admin::HttpReply reply =
        admin::HttpRequest(node.admin_url(), "GET", "/v1/documents/large");
    return reply.status == 200 && reply.body.find(std::string(100, 'z')) != std::string::npos;
  };
  REQUIRE(RunUntil(
      f.io, [&] { return remade->ended() || stored(); }, std::chrono::seconds(10)));
  Client later(f.io, f.scheduler, node.url());
  Shared* reread = f.ShareOrFail(later, "large", nullptr);
  // At --threads 3 a replica may be served before the state reaches it.
  REQUIRE(RunUntil(f.io, [&] {
    return reread->ended() || (reread->ready() && Holds(*reread->document(), "all", 10 << 10));
  }));
  INFO("ended: " << reread->end_reason());
  CHECK_FALSE(reread->ended());
  // One nobody opens again is gone from the store at the next round.
  Document lost(codec::Kind::kObject);
  REQUIRE(lost.Set(lost.root(), "all", std::string(70 << 10, 'y')));
  Shared* declined = f.ShareOrFail(client, "declined", &lost);
  REQUIRE(RunUntil(f.io, [&] { return declined->ended(); }));
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    RunUntil(
        f.io, [] { return false; }, std::chrono::milliseconds(100));
    gone = admin::HttpRequest(node.admin_url(), "GET", "/v1/documents/declined").status == 404;
  }
  CHECK(gone);

  // An import over it: 413, reason limit. The export comes from a node with
  // the default limit.
  NodeProcess wide(f.dir.path() + "/wide");
  wide.Start();
  Client at_wide(f.io, f.scheduler, wide.url());
  Shared* copy = f.Create(at_wide, "large", large);
  REQUIRE(RunUntil(f.io, [&] { return copy->ready(); }));
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(300));  // Stored.
  const admin::HttpReply exported =
      admin::HttpRequest(wide.admin_url(), "GET", "/v1/documents/large/export");
  REQUIRE(exported.status == 200);
  const admin::HttpReply imported =
      admin::HttpRequest(node.admin_url(), "PUT", "/v1/documents/imported", "", exported.body);
  CHECK(imported.status == 413);
  CHECK_THAT(imported.body, Catch::Contains("\"reason\":\"limit\"") &&
                                Catch::Contains("limits.max_document_bytes"));
}

TEST_CASE(
    "a document of max_document_bytes is opened whole by a new client, across a chain, "
    "after a restart",
    "[node][process][limits][cluster]") {
  ClientFixture f;
  NodeProcess a(f.dir.path() + "/a");
  a.Start();
  NodeProcess b(f.dir.path() + "/b", {"--upstream", a.url()});
  b.Start();
  aweft::Client::Options at_b;
  at_b.url = b.url();
  Document doc(codec::Kind::kObject);
  {
    aweft::Client writer(f.io.get_executor(), at_b);
    REQUIRE(writer.Share("full", doc));
    // Eight commits of a million bytes (max_commit_bytes is 1 MiB), then
    // what fills the default limit of 8 MiB to within 100 bytes.
    for (int i = 0; i < 8; ++i) {
      REQUIRE(doc.Set(doc.root(), "k" + std::to_string(i), std::string(1000000, 'a' + i)));
    }
    const size_t rest = (8 << 20) - doc.bytes() - 100;
    REQUIRE(doc.Set(doc.root(), "rest", std::string(rest - sync::SlotBytes("rest", ""), 'r')));
    INFO("the document: " << doc.bytes() << " bytes");
    REQUIRE(doc.bytes() > (8 << 20) - 200);
    REQUIRE(doc.bytes() <= 8 << 20);
    // Confirmed at b, and by a above it.
    REQUIRE(RunUntil(
        f.io, [&] { return writer.connected() && writer.unconfirmed("full") == 0; },
        std::chrono::seconds(120)));  // Under TSan in CI 30 s was not enough.
    // One byte more is refused, at b.
    REQUIRE(doc.Set(doc.root(), "over", std::string(300, 'o')));
    REQUIRE(RunUntil(
        f.io, [&] { return doc.root().Get("over") == nullptr; }, std::chrono::seconds(10)));
    writer.Forget("full");
  }
  Restart(a);
  Restart(b);
  // A new client at b, which loads it and asks a first; and one at a.
  for (NodeProcess* node : {&b, &a}) {
    INFO("at " << (node == &a ? "a" : "b"));
    Client reader(f.io, f.scheduler, node->url());
    Shared* read = f.ShareOrFail(reader, "full", nullptr);
    REQUIRE(RunUntil(
        f.io,
        [&] {
          return read->ended() || (read->ready() && read->document()->bytes() == doc.bytes());
        },
        std::chrono::seconds(30)));
    INFO("ended: " << read->end_reason());
    REQUIRE_FALSE(read->ended());
    CHECK(Holds(*read->document(), "k7", 1000000));
    CHECK(read->document()->root().Get("over") == nullptr);
    CHECK_FALSE(reader.channel->ended());
  }
}

TEST_CASE(
    "twenty documents of 512 KiB re-shared at once by a node below are taken, the link "
    "kept",
    "[node][process][limits][cluster]") {
  ClientFixture f;
  NodeProcess a(f.dir.path() + "/a", {"--log-level", "info"});
  a.Start();
  NodeProcess b(f.dir.path() + "/b", {"--upstream", a.url(), "--log-level", "info"});
  b.Start();
  aweft::Client::Options at_a, at_b;
  at_a.url = a.url();
  at_b.url = b.url();
  aweft::Client writer(f.io.get_executor(), at_b);
  std::vector<std::unique_ptr<Document>> docs;
  for (int i = 0; i < 20; ++i) {
    docs.push_back(std::make_unique<Document>(codec::Kind::kObject));
    REQUIRE(writer.Share("doc" + std::to_string(i), *docs.back()));
  }
  REQUIRE(RunUntil(f.io, [&] { return writer.connected(); }));
  // Commits, so that the writer counts them until a has them too.
  for (int i = 0; i < 20; ++i) {  // One at a time: the writer's own send queue is bounded too.
    REQUIRE(docs[i]->Set(docs[i]->root(), "v", std::string(512 << 10, 'a')));
    REQUIRE(RunUntil(
        f.io, [&] { return writer.unconfirmed("doc" + std::to_string(i)) == 0; },
        std::chrono::seconds(10)));
  }
  auto all_confirmed = [&] {
    for (int i = 0; i < 20; ++i) {
      if (writer.unconfirmed("doc" + std::to_string(i)) > 0) return false;
    }
    return writer.connected();
  };
  REQUIRE(RunUntil(f.io, all_confirmed, std::chrono::seconds(30)));
  // a restarts: b's link to it comes back and b shares all twenty again,
  // each asking for a's state.
  Restart(a);
  aweft::Client top(f.io.get_executor(), at_a);
  std::optional<Document*> at_top;
  std::string failed;
  top.Open(
      "doc19", [&](Document& d) { at_top = &d; }, [&](const std::string& why) { failed = why; });
  RunUntil(
      f.io, [&] { return at_top || !failed.empty(); }, std::chrono::seconds(10));
  INFO("a's log (tail): " << Tail(a.Drain()));
  INFO("b's log (tail): " << Tail(b.Drain()));
  INFO("the open at a: " << failed);
  REQUIRE(at_top);
  REQUIRE((*at_top)->Set((*at_top)->root(), "after", true));
  // It reaches the writer at b through b.
  CHECK(RunUntil(
      f.io, [&] { return docs[19]->root().Get("after") != nullptr; }, std::chrono::seconds(20)));
  const std::string log = a.Drain();
  INFO("a's log since (tail): " << Tail(log));
  CHECK(log.find("wait to be sent") == std::string::npos);
  CHECK(RunUntil(f.io, all_confirmed, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace aweft::node::testing

// The hub in-process, over a real store, with no socket and no process:
// the open, create and decline policy, shares, max_documents, eviction.

#include "node/hub.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "tests/node/hub_fixture.h"

namespace aweft::node {
namespace {

using testing::HubFixture;
using testing::Opened;

TEST_CASE(
    "the hub creates a new name only for an opener that holds it, may write it, and "
    "wants nothing",
    "[node][hub]") {
  HubFixture f;
  CHECK(f.Open("wants", /*holds=*/true, /*want=*/true).document.error().reason ==
        codec::Reason::kNoDocument);
  CHECK(f.Open("reads", true, false, /*may_write=*/false).document.error().reason ==
        codec::Reason::kNoDocument);
  CHECK(f.Open("empty", /*holds=*/false, false).document.error().reason ==
        codec::Reason::kNoDocument);
  CHECK_FALSE(f.store().Info("wants"));
  Opened made = f.Open("board", true, false);
  REQUIRE(made.document);
  CHECK(made.created);
  CHECK(f.store().Info("board"));
  // Held now: anyone who may read it opens it, wanting ours or not.
  Opened again = f.Open("board", false, true, /*may_write=*/false);
  REQUIRE(again.document);
  CHECK_FALSE(again.created);
  CHECK(*again.document == *made.document);
  CHECK(f.hub().Find("board")->shares == 2);
  f.hub().Release("board");
  f.hub().Release("board");
  CHECK(f.hub().Find("board")->shares == 0);
}

TEST_CASE("documents.create limits the names the hub creates", "[node][hub]") {
  Config config;
  config.create = {"team/*"};
  HubFixture f(config);
  CHECK(f.Open("team/a", true, false).document);
  CHECK(f.Open("other", true, false).document.error().reason == codec::Reason::kNoDocument);
}

TEST_CASE("limits.max_documents refuses a new document with limit, and opens held ones",
          "[node][hub]") {
  Config config;
  config.limits.max_documents = 2;
  HubFixture f(config);
  REQUIRE(f.Open("a", true, false).document);
  REQUIRE(f.Open("b", true, false).document);
  Opened third = f.Open("c", true, false);
  REQUIRE_FALSE(third.document);
  CHECK(third.document.error().reason == codec::Reason::kLimit);
  CHECK(third.document.error().message.find("limits.max_documents") != std::string::npos);
  CHECK(f.Open("a", false, true).document);
}

TEST_CASE("the hub evicts a document nobody shares once it is idle, and reloads it with its ids",
          "[node][hub]") {
  Config config;
  config.idle_evict = std::chrono::seconds(1);
  HubFixture f(config);
  Opened made = f.Open("notes", true, false);
  REQUIRE(made.document);
  sync::Document& document = **made.document;
  REQUIRE(document.Set(document.root(), "k", 1.0));
  const codec::Id root = document.root().id();
  // Shared: kept however long it is idle.
  f.io().run_for(std::chrono::milliseconds(1300));
  REQUIRE(f.hub().Find("notes"));
  f.hub().Release("notes");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (f.hub().Find("notes") && std::chrono::steady_clock::now() < deadline) {
    f.io().run_for(std::chrono::milliseconds(100));
  }
  CHECK_FALSE(f.hub().Find("notes"));
  Opened back = f.Open("notes", false, true);
  REQUIRE(back.document);
  CHECK((*back.document)->root().id() == root);
  CHECK((*back.document)->root().Get("k") != nullptr);
}

}  // namespace
}  // namespace aweft::node

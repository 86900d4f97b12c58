// The hub in-process, over a real store, with no socket and no process:
// the open, create and decline policy, shares, max_documents, eviction.

#include "node/hub.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "admin/metrics.h"
#include "node/admin_source.h"
#include "node/durable.h"
#include "node/upstreams.h"
#include "storage/store.h"
#include "sync/random.h"
#include "tests/storage/temp_dir.h"

namespace aweft::node {
namespace {

namespace asio = boost::asio;

struct Opened {
  codec::Result<sync::Document*> document = codec::Refusal{codec::Reason::kFailed, "not yet"};
  bool created = false;
  bool told = false;
};

class HubFixture {
 public:
  explicit HubFixture(Config config = {}) : config_(std::move(config)) {
    config_.data = dir_.path();
    auto store = storage::Store::Open(dir_.Sub("store"), config_.storage);
    REQUIRE(store);
    store_ = std::make_unique<storage::Store>(std::move(*store));
    durable_ = std::make_unique<DurableScheduler>(io_.get_executor(), *store_);
    upstreams_ = std::make_unique<Upstreams>(config_, io_, *store_, *durable_, nullptr, meters_);
    hub_ = std::make_unique<Hub>(config_, io_, *store_, *durable_, *upstreams_);
  }
  ~HubFixture() {
    hub_.reset();
    upstreams_.reset();
    durable_.reset();
  }

  // Opens `name` as a link's open frame would: `holds` a root of its own
  // (a new document's), `want` ours, with write rights or not.
  Opened Open(const std::string& name, bool holds, bool want, bool may_write = true) {
    codec::OpenFrame open{1, name, std::nullopt, want};
    if (holds) open.root = codec::RootRef{std::string(sync::MintId().view()), codec::Kind::kObject};
    Opened out;
    hub_->Open(open, may_write, [&out](codec::Result<sync::Document*> document, bool created) {
      out.document = document;
      out.created = created;
      out.told = true;
    });
    io_.poll();
    REQUIRE(out.told);  // No upstream: the hub answers at once.
    return out;
  }

  Hub& hub() { return *hub_; }
  storage::Store& store() { return *store_; }
  asio::io_context& io() { return io_; }

 private:
  storage::testing::TempDir dir_;
  Config config_;
  asio::io_context io_;
  admin::Metrics metrics_;
  NodeMetrics meters_{metrics_};
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<DurableScheduler> durable_;
  std::unique_ptr<Upstreams> upstreams_;
  std::unique_ptr<Hub> hub_;
};

TEST_CASE("the hub creates a new name only for an opener that holds it, may write it, and "
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

#pragma once

// A node's home thread reduced to its hub, over a real store in a temporary
// directory: what the in-process hub and loop tests are built on.

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>

#include "admin/metrics.h"
#include "node/admin_source.h"
#include "node/durable.h"
#include "node/hub.h"
#include "node/upstreams.h"
#include "storage/store.h"
#include "sync/random.h"
#include "tests/storage/temp_dir.h"

namespace aweft::node::testing {

struct Opened {
  codec::Result<sync::Document*> document = codec::Refusal{codec::Reason::kFailed, "not yet"};
  bool created = false;
  bool told = false;
};

class HubFixture {
 public:
  explicit HubFixture(Config config = {}) : config_(std::move(config)) {
    config_.data = dir_.path();
    config_.node_id = "node-home";
    config_.storage.sync_every_commit = false;  // As a node runs it.
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
  boost::asio::io_context& io() { return io_; }

 protected:
  storage::testing::TempDir dir_;
  Config config_;
  boost::asio::io_context io_;
  admin::Metrics metrics_;
  NodeMetrics meters_{metrics_};
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<DurableScheduler> durable_;
  std::unique_ptr<Upstreams> upstreams_;
  std::unique_ptr<Hub> hub_;
};

}  // namespace aweft::node::testing

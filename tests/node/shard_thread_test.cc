// The pieces a node's shards are made of, on real threads: a link across a
// CrossThreadPair, and a ForwardScheduler over a real store.

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "node/durable.h"
#include "storage/store.h"
#include "sync/asio_scheduler.h"
#include "sync/channel.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/snapshot.h"
#include "tests/storage/temp_dir.h"

namespace aweft::node {
namespace {

namespace asio = boost::asio;

// An io_context run by a thread of its own until destroyed.
class Loop {
 public:
  Loop() : thread_([this] { io.run(); }) {}
  ~Loop() {
    work_.reset();
    thread_.join();
  }
  // Runs `fn` on the loop's thread and returns its result.
  template <class Fn>
  auto Call(Fn fn) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    asio::post(io, [&task] { task(); });
    return result.get();
  }

  asio::io_context io;
  sync::AsioScheduler scheduler{io.get_executor()};

 private:
  asio::executor_work_guard<asio::io_context::executor_type> work_{io.get_executor()};
  std::thread thread_;
};

// Waits (up to 10 s) until `fn`, run on `loop`, says true.
template <class Fn>
bool Eventually(Loop& loop, Fn fn) {
  for (int i = 0; i < 1000; ++i) {
    if (loop.Call(fn)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_CASE("thread: a link across a CrossThreadPair carries state and commits both ways",
          "[node][shard]") {
  Loop home, shard;
  auto ends = sync::CrossThreadPair(home.scheduler, shard.scheduler);
  auto& home_end = ends.first;
  auto& shard_end = ends.second;
  std::unique_ptr<sync::Document> source;
  std::unique_ptr<sync::Link> home_link, shard_link;
  sync::Shared* replica = nullptr;
  home.Call([&] {
    source = std::make_unique<sync::Document>(codec::Kind::kObject);
    for (int i = 0; i < 10; ++i)
      REQUIRE(source->Set(source->root(), "before" + std::to_string(i), 1.0 * i));
    home_link = std::make_unique<sync::Link>(*home_end, home.scheduler);
    return home_link->Share("doc", source.get()).has_value();
  });
  shard.Call([&] {
    shard_link = std::make_unique<sync::Link>(*shard_end, shard.scheduler);
    auto shared = shard_link->Share("doc", nullptr);
    replica = shared ? *shared : nullptr;
    return replica != nullptr;
  });
  REQUIRE(replica);
  REQUIRE(Eventually(shard, [&] { return replica->ready(); }));
  // The replica starts from the source's state, ids and all.
  const sync::Snapshot first = home.Call([&] { return sync::TakeSnapshot(*source); });
  CHECK(shard.Call([&] { return sync::TakeSnapshot(*replica->document()); }) == first);
  // Writes at both ends, interleaved, to different keys: both see all.
  for (int i = 0; i < 50; ++i) {
    home.Call([&] {
      return source->Set(source->root(), "home" + std::to_string(i), 1.0 * i).has_value();
    });
    shard.Call([&] {
      sync::Document& doc = *replica->document();
      return doc.Set(doc.root(), "shard" + std::to_string(i), 1.0 * i).has_value();
    });
  }
  auto same = [&] {
    const sync::Snapshot there =
        shard.Call([&] { return sync::TakeSnapshot(*replica->document()); });
    return home.Call([&] { return sync::TakeSnapshot(*source) == there; });
  };
  for (int i = 0; i < 500 && !same(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(same());
  CHECK(home.Call([&] { return source->root().size(); }) == 110u);
  // Destroying one end ends the other's topic, on its own thread.
  home.Call([&] {
    home_link.reset();
    home_end.reset();
    return true;
  });
  CHECK(Eventually(shard, [&] { return replica->ended(); }));
  shard.Call([&] {
    shard_link.reset();
    shard_end.reset();
    return true;
  });
  home.Call([&] {
    source.reset();
    return true;
  });
}

TEST_CASE(
    "thread: work posted to a ForwardScheduler runs only once home has stored what the "
    "shard marked and sent before it",
    "[node][shard]") {
  storage::testing::TempDir dir;
  Loop home, shard;
  storage::Options options;
  options.sync_every_commit = false;  // As the node runs it: group commit.
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<DurableScheduler> durable;
  sync::Document* source = nullptr;
  std::unique_ptr<sync::Link> home_link;
  auto ends = sync::CrossThreadPair(home.scheduler, shard.scheduler);
  auto& home_end = ends.first;
  auto& shard_end = ends.second;
  home.Call([&] {
    auto opened = storage::Store::Open(dir.path() + "/store", options);
    REQUIRE(opened);
    store = std::make_unique<storage::Store>(std::move(*opened));
    durable = std::make_unique<DurableScheduler>(home.io.get_executor(), *store);
    auto document = store->OpenDocument("doc");
    REQUIRE(document);
    source = *document;
    home_link = std::make_unique<sync::Link>(*home_end, *durable);
    return home_link->Share("doc", source).has_value();
  });
  std::unique_ptr<ForwardScheduler> forward;
  std::unique_ptr<sync::Link> shard_link;
  sync::Shared* replica = nullptr;
  shard.Call([&] {
    forward = std::make_unique<ForwardScheduler>(shard.io.get_executor(), home.io.get_executor(),
                                                 *durable);
    shard_link = std::make_unique<sync::Link>(*shard_end, shard.scheduler);
    replica = *shard_link->Share("doc", nullptr);
    return true;
  });
  REQUIRE(Eventually(shard, [&] { return replica->ready(); }));

  // Each write on the shard posts work; when it runs, home is asked how
  // many commits the store has written: never fewer than were made.
  constexpr int kWrites = 300;
  std::atomic<int> checked{0}, short_of{0};
  for (int i = 0; i < kWrites; ++i) {
    shard.Call([&, i] {
      sync::Document& doc = *replica->document();
      forward->Dirty();  // As a client's commit landing would.
      REQUIRE(doc.Set(doc.root(), "k" + std::to_string(i % 7), 1.0 * i));
      forward->Post([&, made = i + 1] {
        asio::post(home.io, [&, made] {
          if (store->Stats().commits_written < static_cast<uint64_t>(made)) ++short_of;
          ++checked;
        });
      });
      return true;
    });
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int i = 0; i < 1000 && checked < kWrites; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(checked == kWrites);
  CHECK(short_of == 0);
  CHECK(home.Call([&] { return store->Head("doc"); }) == static_cast<uint64_t>(kWrites));

  // With everything marked stored and nothing waiting, work does not wait
  // for the store: it runs on the shard's next turn, in order.
  std::promise<std::vector<int>> ran;
  shard.Call([&] {
    auto order = std::make_shared<std::vector<int>>();
    for (int i = 0; i < 3; ++i) forward->Post([order, i] { order->push_back(i); });
    forward->Post([&ran, order] { ran.set_value(*order); });
    return true;
  });
  CHECK(ran.get_future().get() == std::vector<int>{0, 1, 2});

  shard.Call([&] {
    shard_link.reset();
    shard_end.reset();
    forward.reset();
    return true;
  });
  home.Call([&] {
    home_link.reset();
    home_end.reset();
    durable.reset();
    store.reset();
    return true;
  });
}

}  // namespace
}  // namespace aweft::node

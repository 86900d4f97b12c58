// aweft-node on a disk that fills up, and on one that is read-only: it
// refuses what it cannot store, says why, acknowledges nothing unstored, and
// takes writes again once the disk does. The disks are small tmpfs mounts,
// so these tests need to be root (CAP_SYS_ADMIN); elsewhere they warn and
// pass without checking.

#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "admin/http_client.h"
#include "codec/frame.h"
#include "node/client.h"
#include "sync/asio_scheduler.h"
#include "sync/snapshot.h"
#include "tests/node/node_process.h"
#include "tests/tmpfs.h"

namespace aweft::node::testing {
namespace {

using aweft::testing::Tmpfs;

int Status(const NodeProcess& node, const std::string& route, std::string* body = nullptr) {
  const admin::HttpReply reply = admin::HttpRequest(node.admin_url(), "GET", route);
  if (body) *body = reply.body;
  return reply.status;
}

TEST_CASE(
    "a node on a full disk refuses writes with unavailable, acknowledges nothing "
    "unstored, and recovers when space returns",
    "[node][disk]") {
  TempDir dir;
  // RocksDB resumes only with room for its memtables again (64 MiB): fill
  // all but 6 MiB of 100, then free 90.
  Tmpfs disk(dir.path() + "/disk", "100m");
  if (!disk.mounted) return;
  const std::string filler = disk.path + "/filler";
  std::ofstream(filler) << std::string(90 << 20, 'f');
  NodeProcess node(disk.path + "/data");
  const uint16_t port = node.Start();

  boost::asio::io_context io;
  aweft::Client::Options options;
  options.url = node.url();
  aweft::Client writer(io.get_executor(), options);
  sync::Document board(codec::Kind::kObject);
  std::string refusal;
  int refused = 0;
  sync::ShareHandlers handlers;
  handlers.refused = [&](const sync::Refused& r) {
    ++refused;
    if (refusal.empty() && !r.reasons.empty())
      refusal = r.reasons[0].code + ": " + r.reasons[0].message;
  };
  REQUIRE(writer.Share("board", board, handlers));
  REQUIRE(RunUntil(io, [&] { return writer.connected(); }));

  // Writes of 16 KiB until the node says it cannot store them.
  const std::string big(16 << 10, 'x');
  int written = 0;
  while (writer.confirm_error().empty() && written < 3000) {
    REQUIRE(board.Set(board.root(), "k" + std::to_string(written++), big));
    RunUntil(
        io, [] { return false; }, std::chrono::milliseconds(2));
  }
  CHECK_THAT(writer.confirm_error(),
             Catch::StartsWith("unavailable: the node cannot store writes now") &&
                 Catch::Contains("No space left on device"));
  // What it took is not confirmed while it waits; more writes are refused
  // (their refusals arrive once the disk is back: they queue behind).
  for (int i = 0; i < 10; ++i)
    REQUIRE(board.Set(board.root(), "k" + std::to_string(written++), big));
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(1500));
  CHECK(writer.unconfirmed("board") > 0);
  std::string ready;
  CHECK(Status(node, "/ready", &ready) == 503);
  CHECK_THAT(ready, Catch::Contains("No space left on device"));
  std::string metrics;
  Status(node, "/metrics", &metrics);
  CHECK_THAT(metrics, Catch::Contains("aweft_storage_stalled 1"));
  const std::string log = node.Drain();
  CHECK_THAT(log, Catch::Contains("event=storage state=stalled"));
  CHECK_THAT(log, Catch::Contains("No space left on device"));
  // A new document cannot be made either.
  aweft::Client other(io.get_executor(), options);
  sync::Document fresh(codec::Kind::kObject);
  std::string declined;
  sync::ShareHandlers fresh_handlers;
  fresh_handlers.fault = [&](const std::string& reason, const std::string&) { declined = reason; };
  REQUIRE(other.Share("fresh", fresh, fresh_handlers));
  // A peer that floods the node with frames for a topic never opened: each
  // is answered, and on the home thread the answers wait for the store like
  // every frame sent. Past a bound the node reads no more from it, instead
  // of keeping them (1.5 M such frames grew RSS by 314 MB). (On a shard,
  // frames that carry no commit do not wait.)
  sync::AsioScheduler scheduler(io.get_executor());
#ifdef AWEFT_SANITIZED
  constexpr uint64_t kFlood = 20000;  // Answered within the wait below under ASan too.
#else
  constexpr uint64_t kFlood = 200000;
#endif
  Client flood(io, scheduler, node.url());
  const uint64_t rss = RssKiB(node.pid());
  codec::Commit remove{
      {{codec::DeltaType::kRemove, board.root().id(), {codec::Kind::kObject, "k"}, std::nullopt}},
      std::nullopt};
  const std::string frame = *codec::EncodeFrame(codec::CommitsFrame{999, 1, {remove}});
  for (uint64_t i = 0; i < kFlood; ++i) flood.channel->SendBinary(frame);  // Within its send queue.
  RunUntil(
      io, [] { return false; }, std::chrono::seconds(3));
  const uint64_t flooded = RssKiB(node.pid());
  INFO("RSS before the flood " << rss / 1024 << " MiB, after " << flooded / 1024 << " MiB");
#ifndef AWEFT_SANITIZED  // ASan's shadow memory and quarantine are not the node's.
  CHECK(flooded < rss + 16 * 1024);
#endif
  INFO("the flood's end: " << (flood.channel->ended() ? flood.channel->end_reason()->ToString()
                                                      : "none"));
  CHECK_FALSE(flood.channel->ended());

  // Space returns: the node stores what it held, confirms it, and takes
  // writes again.
  std::filesystem::remove(filler);
  REQUIRE(RunUntil(
      io, [&] { return writer.unconfirmed("board") == 0; }, std::chrono::milliseconds(20000)));
  CHECK(Status(node, "/ready") == 200);
  RunUntil(
      io, [] { return false; }, std::chrono::milliseconds(300));  // Late refusals.
  const int refused_before = refused;
  for (int i = 0; i < 20; ++i) REQUIRE(board.Set(board.root(), "after" + std::to_string(i), true));
  REQUIRE(RunUntil(
      io, [&] { return writer.unconfirmed("board") == 0; }, std::chrono::milliseconds(10000)));
  CHECK(refused == refused_before);
  CHECK(refused >= 10);  // At least the writes made once it was known.
  CHECK_THAT(refusal, Catch::StartsWith("unavailable: the node cannot store writes now"));
  CHECK(writer.confirm_error().empty());
  // The share of a new document was declined (that, too, queued behind).
  CHECK(RunUntil(io, [&] { return !declined.empty(); }));
  CHECK(declined == "unavailable");
  CHECK_THAT(node.Drain(), Catch::Contains("event=storage state=recovered"));
  // Then the flood is read and answered, all of it.
  CHECK(RunUntil(
      io, [&] { return flood.link->stats().frames_in == kFlood; }, std::chrono::seconds(60)));

  // Nothing confirmed is lost, and nothing refused was kept, here or at the
  // writer: the node orders the document, and its corrections undid the
  // refused writes there (docs/sync.md "One order"). After a kill and a
  // restart the node holds every write but the refused ones.
  writer.Close();
  node.Kill();
  node.Start(port);
  aweft::Client reader(io.get_executor(), options);
  sync::Document* copy = nullptr;
  reader.Open("board", [&](sync::Document& d) { copy = &d; });
  REQUIRE(RunUntil(
      io, [&] { return copy != nullptr; }, std::chrono::milliseconds(10000)));
  int missing = 0, apart = 0;
  for (int i = 0; i < written; ++i) {
    const std::string key = "k" + std::to_string(i);
    const bool here = board.root().Get(key) != nullptr, there = copy->root().Get(key) != nullptr;
    missing += !there;
    apart += here != there;
  }
  INFO("written " << written << ", refused " << refused);
  CHECK(apart == 0);
  CHECK(missing == refused);
  for (int i = 0; i < 20; ++i) CHECK(copy->root().Get("after" + std::to_string(i)));
  CHECK(refused < written);
}

TEST_CASE(
    "a node on a read-only data directory refuses to start, saying why, and starts "
    "with its data once the directory is writable",
    "[node][disk]") {
  TempDir dir;
  Tmpfs disk(dir.path() + "/disk", "100m");
  if (!disk.mounted) return;
  const std::string data = disk.path + "/data";
  boost::asio::io_context io;
  sync::Document board(codec::Kind::kObject);
  REQUIRE(board.Set(board.root(), "kept", true));
  {
    NodeProcess node(data);
    node.Start();
    aweft::Client::Options options;
    options.url = node.url();
    aweft::Client writer(io.get_executor(), options);
    REQUIRE(writer.Share("board", board));
    REQUIRE(RunUntil(io, [&] { return writer.connected() && writer.unconfirmed("board") == 0; }));
    // The node holds the document once another client reads it from there
    // (a connected writer alone does not say its open was taken); then it
    // stops cleanly, syncing its store.
    aweft::Client reader(io.get_executor(), options);
    sync::Document* copy = nullptr;
    reader.Open("board", [&](sync::Document& d) { copy = &d; });
    REQUIRE(RunUntil(
        io, [&] { return copy && copy->root().Get("kept") != nullptr; },
        std::chrono::milliseconds(10000)));
    node.Signal(SIGTERM);
    REQUIRE(WEXITSTATUS(node.Wait()) == 0);
  }
  REQUIRE(mount(nullptr, disk.path.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0);
  {
    const Ran ran = RunNode(dir.path(), "--listen 127.0.0.1:0 --admin off --data " + data);
    INFO(ran.err);
    CHECK(ran.status == 2);
    CHECK_THAT(ran.err, Catch::StartsWith("aweft-node: config: 'data' is " + data) &&
                            Catch::Contains("Read-only file system"));
  }
  REQUIRE(mount(nullptr, disk.path.c_str(), nullptr, MS_REMOUNT, nullptr) == 0);
  NodeProcess node(data);
  node.Start();
  aweft::Client::Options options;
  options.url = node.url();
  aweft::Client reader(io.get_executor(), options);
  sync::Document* copy = nullptr;
  reader.Open("board", [&](sync::Document& d) { copy = &d; });
  REQUIRE(RunUntil(
      io, [&] { return copy != nullptr; }, std::chrono::milliseconds(10000)));
  CHECK(sync::TakeSnapshot(*copy) == sync::TakeSnapshot(board));
}

}  // namespace
}  // namespace aweft::node::testing

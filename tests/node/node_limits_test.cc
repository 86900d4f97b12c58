// aweft-node's limits, backpressure and idle detection, as a real process on
// loopback (docs/reliability.md).

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "admin/http_client.h"
#include "codec/frame.h"
#include "tests/node/node_fixture.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

namespace asio = boost::asio;
namespace websocket = boost::beast::websocket;
namespace http = boost::beast::http;
using sync::Document;
using sync::Shared;
using tcp = asio::ip::tcp;

using Fixture = ClientFixture;

// A WebSocket peer driven by hand: it reads only when told to, so it can
// stall, and it answers no ping unless it reads.
struct RawPeer {
  asio::io_context io;
  websocket::stream<tcp::socket> ws{io};

  explicit RawPeer(uint16_t port, int receive_buffer = 0, std::string origin = "") {
    ws.next_layer().open(tcp::v4());
    if (receive_buffer > 0) {
      ws.next_layer().set_option(asio::socket_base::receive_buffer_size(receive_buffer));
    }
    ws.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
    if (!origin.empty()) {  // As a page in a browser opens it.
      ws.set_option(websocket::stream_base::decorator([origin](websocket::request_type& request) {
        request.set(http::field::origin, origin);
      }));
    }
    ws.handshake("127.0.0.1", "/");
    ws.binary(true);
  }
  void Send(const codec::Frame& frame) { ws.write(asio::buffer(*codec::EncodeFrame(frame))); }
  // Reads messages until the connection ends; returns the frames read.
  std::vector<codec::Frame> ReadToEnd() {
    std::vector<codec::Frame> frames;
    boost::beast::flat_buffer buffer;
    for (;;) {
      boost::beast::error_code ec;
      ws.read(buffer, ec);
      if (ec) return frames;
      const std::string bytes = boost::beast::buffers_to_string(buffer.data());
      buffer.consume(buffer.size());
      if (auto frame = codec::DecodeFrame(bytes)) frames.push_back(std::move(*frame));
    }
  }
  // The same, but the socket is shut down after `within` if the node has
  // not ended the connection by then.
  std::vector<codec::Frame> ReadToEnd(std::chrono::seconds within) {
    std::mutex mutex;
    std::condition_variable read;
    bool done = false;
    std::thread watchdog([&] {
      std::unique_lock lock(mutex);
      if (!read.wait_for(lock, within, [&] { return done; })) {
        ::shutdown(ws.next_layer().native_handle(), SHUT_RDWR);
      }
    });
    std::vector<codec::Frame> frames = ReadToEnd();
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    read.notify_one();
    watchdog.join();
    return frames;
  }
};

const codec::FaultFrame* LastFault(const std::vector<codec::Frame>& frames) {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (const auto* fault = std::get_if<codec::FaultFrame>(&*it)) return fault;
  }
  return nullptr;
}

TEST_CASE("a reader that stops reading is cut off at its send-queue bound, and writers keep going",
          "[node][process][limits]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data",
                   {"--log-level", "info", "--set", "limits.send_queue_bytes=262144"});
  node.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url());
  f.Create(writer, "doc", doc);
  Client fast(f.io, f.scheduler, node.url());
  Shared* read = f.ShareOrFail(fast, "doc", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));

  RawPeer stalled(node.port(), 4096);
  stalled.Send(codec::OpenFrame{1, "doc", std::nullopt, true});
  // 4,000 commits of 1 KiB: 16 times the bound, more than the socket holds.
  const std::string value(1024, 'x');
  int written = 0;
  uint64_t peak_rss = 0;
  const std::string kCutOff = "reason=\"limit: more than 262144 bytes wait to be sent";
  std::string log;
  std::vector<codec::Frame> frames;
  std::jthread reader;  // Joined on every way out: a failed REQUIRE too.
  const bool done = RunUntil(
      f.io,
      [&] {
        // The writer waits for the fast reader to hold its last commit, so
        // no more than 20 KiB ever wait for it, however slow this machine
        // (TSan) makes the reader: only the stalled one reaches the bound.
        const codec::Value* seen =
            read->document()->root().Get("k" + std::to_string((written + 99) % 100));
        const bool caught_up =
            written == 0 || (seen && *seen == codec::Value(value + std::to_string(written - 1)));
        for (int i = 0; caught_up && i < 20 && written < 4000; ++i, ++written) {
          REQUIRE(doc.Set(doc.root(), "k" + std::to_string(written % 100),
                          value + std::to_string(written)));
        }
        peak_rss = std::max(peak_rss, RssKiB(node.pid()));
        // Once let go, the stalled peer reads again, within the 5 s the node
        // gives its fault to get through.
        log += node.Drain();
        if (!reader.joinable() && log.find(kCutOff) != std::string::npos) {
          reader = std::jthread([&] { frames = stalled.ReadToEnd(std::chrono::seconds(20)); });
        }
        const codec::Value* last = read->document()->root().Get("k99");
        return written == 4000 && last && *last == codec::Value(value + "3999");
      },
      std::chrono::seconds(60));
  INFO("written " << written << ", cut off " << reader.joinable() << ", fast reader has k99 "
                  << (read->document()->root().Get("k99") != nullptr) << ", ended "
                  << read->ended());
  REQUIRE(done);
  // The fast reader got everything; the stalled one was let go, and
  // reading again it finds the fault that says why.
  REQUIRE(reader.joinable());
  reader.join();
#ifndef AWEFT_SANITIZED  // ASan's shadow memory and quarantine are not the node's.
  CHECK(peak_rss < 200 * 1024);
#endif
  const codec::FaultFrame* fault = LastFault(frames);
  REQUIRE(fault);
  CHECK(fault->topic == 0);
  CHECK(fault->reason == "limit");
  CHECK(!read->ended());
  const admin::HttpReply metrics =
      admin::HttpRequest(node.admin_url(), "GET", "/metrics", "", "", std::chrono::seconds(5));
  CHECK_THAT(metrics.body,
             Catch::Contains("aweft_faults_total{reason=\"limit\",origin=\"local\"} 1"));
}

// issue 30: 50 stalled readers held 469 MB, each within its own send-queue
// bound. Together they are held to limits.memory_bytes.
TEST_CASE("stalled readers together are held to limits.memory_bytes", "[node][process][limits]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data",
                   {"--log-level", "info", "--set", "limits.memory_bytes=33554432"});
  node.Start();
  const uint64_t before = RssKiB(node.pid());
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url());
  f.Create(writer, "doc", doc);
  Client fast(f.io, f.scheduler, node.url());
  Shared* read = f.ShareOrFail(fast, "doc", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  // 20 readers that stop reading, each allowed 8 MiB unsent on its own
  // (limits.send_queue_bytes): 160 MiB together without the budget.
  std::vector<std::unique_ptr<RawPeer>> stalled;
  for (int i = 0; i < 20; ++i) {
    stalled.push_back(std::make_unique<RawPeer>(node.port(), 4096));
    stalled.back()->Send(codec::OpenFrame{1, "doc", std::nullopt, true});
  }
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(300));
  // 200 commits of 64 KiB, each once the fast reader holds the one before.
  const std::string value(64 << 10, 'v');
  int written = 0;
  uint64_t peak_rss = 0;
  double peak_held = 0;
  const bool done = RunUntil(
      f.io,
      [&] {
        const codec::Value* seen = read->document()->root().Get("k");
        if (written == 0 || (seen && *seen == codec::Value(value + std::to_string(written - 1)))) {
          if (written < 200) REQUIRE(doc.Set(doc.root(), "k", value + std::to_string(written++)));
        }
        peak_rss = std::max(peak_rss, RssKiB(node.pid()));
        const std::string metrics = admin::HttpRequest(node.admin_url(), "GET", "/metrics").body;
        const size_t at = metrics.find("\naweft_connections_held_bytes ");
        if (at != std::string::npos)
          peak_held = std::max(peak_held, std::stod(metrics.substr(at + 30)));
        return written == 200 && seen && *seen == codec::Value(value + "199");
      },
      std::chrono::seconds(120));
  INFO("written " << written << ", peak held " << peak_held << ", RSS " << before / 1024 << " to "
                  << peak_rss / 1024 << " MiB");
  REQUIRE(done);
  // A cut takes effect on the cut connection's next turn: until then what
  // took the total over is held too (a commit for each reader, 1.3 MiB).
  CHECK(peak_held <= (32 + 2) << 20);
#ifndef AWEFT_SANITIZED  // ASan's shadow memory and quarantine are not the node's.
  // The budget and a stated overhead: RSS rose 70 MiB at one thread, 94 to
  // 117 at three; what the shards hold beyond one thread is not explained
  // yet (docs/reliability.md "Memory").
  const bool shards = std::getenv("AWEFT_TEST_NODE_THREADS") != nullptr;
  CHECK(peak_rss - before < (32 + (shards ? 112 : 80)) * 1024);
#endif
  const std::string log = node.Drain();
  CHECK_THAT(log, Catch::Contains("(limits.memory_bytes)"));
  CHECK_FALSE(read->ended());
}

TEST_CASE("a document larger than the send-queue bound is opened whole, here and from below",
          "[node][process][limits]") {
  Fixture f;
  const std::vector<std::string> bound{"--set", "limits.send_queue_bytes=65536", "--log-level",
                                       "info"};
  NodeProcess above(f.dir.path() + "/above", bound);
  above.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, above.url());
  f.Create(writer, "big", doc);
  // 600 KiB in six commits of 100 KiB: each within max_commit_bytes, the
  // document's state nine times the bound.
  const std::string chunk(100 << 10, 'x');
  for (int i = 0; i < 6; ++i) {
    REQUIRE(doc.Set(doc.root(), "k" + std::to_string(i), chunk + std::to_string(i)));
  }
  REQUIRE(RunUntil(f.io, [&] { return writer.link->stats().commits_out >= 6; }));
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(300));  // Stored.
  auto whole = [&](Shared* shared) {
    const codec::Value* last = shared->ready() ? shared->document()->root().Get("k5") : nullptr;
    return last && *last == codec::Value(chunk + "5");
  };
  Client reader(f.io, f.scheduler, above.url());
  Shared* read = f.ShareOrFail(reader, "big", nullptr);
  CHECK(RunUntil(
      f.io, [&] { return whole(read); }, std::chrono::seconds(10)));
  INFO("the node's log: " << above.Drain());
  INFO("the reader's end: " << (reader.channel->ended() ? reader.channel->end_reason()->message
                                                        : std::string("none")));
  CHECK(!reader.channel->ended());

  std::vector<std::string> below_args = bound;
  below_args.insert(below_args.end(), {"--upstream", above.url()});
  NodeProcess below(f.dir.path() + "/below", below_args);
  below.Start();
  Client far(f.io, f.scheduler, below.url());
  Shared* far_read = f.ShareOrFail(far, "big", nullptr);
  CHECK(RunUntil(
      f.io, [&] { return whole(far_read); }, std::chrono::seconds(20)));
  CHECK(!far.channel->ended());
}

// issue 30: 60 connections each holding half of a 15 MiB message took the
// node's RSS from 15 to 939 MB, and a byte every 25 s kept them past the idle
// timeout. Now what all connections hold is bounded together, the largest
// cut first, and a message must arrive within limits.message_timeout_seconds.
TEST_CASE("half-sent messages are bounded by limits.memory_bytes and message_timeout_seconds",
          "[node][process][limits]") {
  Fixture f;
#ifdef AWEFT_SANITIZED
  constexpr int kTimeout = 30;  // The node reads 180 MiB much more slowly.
#else
  constexpr int kTimeout = 10;  // Time to read 90 MiB on a loaded machine.
#endif
  NodeProcess node(f.dir.path() + "/data",
                   {"--log-level", "info", "--set", "limits.memory_bytes=33554432", "--set",
                    "limits.message_timeout_seconds=" + std::to_string(kTimeout)});
  node.Start();
  const uint64_t before = RssKiB(node.pid());
  // 30 connections each send 3 MiB of a 15 MiB message: 90 MiB in all.
  constexpr int kPeers = 30;
  std::vector<std::unique_ptr<RawPeer>> peers;
  for (int i = 0; i < kPeers; ++i) peers.push_back(std::make_unique<RawPeer>(node.port()));
  std::vector<std::thread> senders;
  const auto start = std::chrono::steady_clock::now();
  for (auto& peer : peers) {
    senders.emplace_back([&peer, start] {
      // The first frame of a message that does not end there (Beast sends
      // a message in frames when told so); once it is in, after the
      // message timeout, one byte more.
      boost::beast::error_code ec;
      peer->ws.write_some(false, asio::buffer(std::string(3 << 20, 'p')), ec);
      if (ec) return;  // Blocked until the test shut it down: the node stopped reading.
      std::this_thread::sleep_until(start + std::chrono::milliseconds(kTimeout * 1000 + 1500));
      peer->ws.write_some(false, asio::buffer(std::string("x")), ec);
    });
  }
  // The node reads what it can hold, and cuts the largest holders past it:
  // 32 MiB holds ten parts of 3 MiB at most.
  std::string log;
  auto budget_cuts = [&] {
    log += node.Drain();
    size_t n = 0;
    for (size_t p = 0; (p = log.find("(limits.memory_bytes)", p)) != std::string::npos; ++p) ++n;
    return n;
  };
  RunUntil(
      f.io, [&] { return budget_cuts() >= kPeers - 10; },
      std::chrono::milliseconds(kTimeout * 1000 - 500));
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(300));
  const uint64_t during = RssKiB(node.pid());
  INFO("RSS before " << before / 1024 << " MiB, while held " << during / 1024 << " MiB");
  const std::string metrics = admin::HttpRequest(node.admin_url(), "GET", "/metrics").body;
  const size_t at = metrics.find("\naweft_connections_held_bytes ");
  REQUIRE(at != std::string::npos);
  const double held = std::stod(metrics.substr(at + 30));
  INFO("held " << held);
  CHECK(held <= 32 << 20);
#ifndef AWEFT_SANITIZED  // ASan's shadow memory and quarantine are not the node's.
  // The budget, and a stated overhead: each cut message until its reader
  // ends (a 64 KiB part), allocator slack.
  CHECK(during - before < (32 + 48) * 1024);
#endif
  // Each one cut was told why; then the rest are cut for taking too long,
  // on their next byte past the message timeout.
  const size_t cut = budget_cuts();
  INFO("cut for the budget: " << cut);
  CHECK(cut >= kPeers - 10);
  CHECK(cut < kPeers);
  RunUntil(
      f.io, [] { return false; },
      std::chrono::milliseconds(kTimeout * 1000 + 4000) -
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                start));
  const std::string later = node.Drain();
  CHECK_THAT(later, Catch::Contains("(limits.message_timeout_seconds)"));
  for (auto& peer : peers) ::shutdown(peer->ws.next_layer().native_handle(), SHUT_RDWR);
  for (auto& sender : senders) sender.join();
  // A client is served all along. A commit of 12 MiB it sends is refused
  // (limits.max_commit_bytes), and its bytes go back.
  Document doc(codec::Kind::kObject);
  Client client(f.io, f.scheduler, node.url());
  Shared* shared = f.Create(client, "after", doc);
  REQUIRE(RunUntil(f.io, [&] { return shared->ready(); }));
  RunUntil(
      f.io, [] { return false; }, std::chrono::seconds(1));
  const uint64_t rest = RssKiB(node.pid());
  REQUIRE(doc.Set(doc.root(), "large", std::string(12 << 20, 'l')));
  REQUIRE(RunUntil(f.io, [&] { return client.link->stats().refused_in > 0; }));
  const uint64_t after = RssKiB(node.pid());
  INFO("RSS before the refused commit " << rest / 1024 << " MiB, after " << after / 1024);
#ifndef AWEFT_SANITIZED
  CHECK(after < rest + 4 * 1024);
#endif
}

TEST_CASE("a peer that answers no ping is closed after the idle timeout, and a live one stays",
          "[node][process][limits]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data",
                   {"--log-level", "info", "--set", "limits.idle_timeout_seconds=2"});
  node.Start();
  Client live(f.io, f.scheduler, node.url());  // Beast answers pings itself.
  bool live_closed = false;
  live.channel->Closed([&] { live_closed = true; });
  RawPeer silent(node.port());
  // Neither sends anything for 5 s; only the live one reads (and pongs).
  RunUntil(
      f.io, [] { return false; }, std::chrono::seconds(5));
  CHECK_FALSE(live_closed);
  CHECK_THAT(node.Drain(), Catch::Contains("reason=\"closed: idle: nothing arrived for 2 s"));
  silent.ReadToEnd();  // Ends: the node closed it.
}

// max_topics_per_link holds for a burst of opens on one link, on every
// thread: on a shard each open is answered by home on a later turn, and the
// opens still on their way count too.
TEST_CASE("a burst of opens on one link is held to max_topics_per_link on every thread",
          "[node][process][limits]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--set", "limits.max_topics_per_link=2"});
  node.Start();
  // Two connections first: with --threads 3 the third lands on a shard.
  Client first(f.io, f.scheduler, node.url()), second(f.io, f.scheduler, node.url());
  std::vector<std::unique_ptr<Document>> docs;
  std::vector<Shared*> burst;
  Client client(f.io, f.scheduler, node.url());
  for (int i = 0; i < 12; ++i) {  // All in one turn: one burst of frames.
    docs.push_back(std::make_unique<Document>(codec::Kind::kObject));
    burst.push_back(f.ShareOrFail(client, "burst" + std::to_string(i), docs.back().get()));
  }
  REQUIRE(RunUntil(f.io, [&] {
    return std::all_of(burst.begin(), burst.end(),
                       [](Shared* s) { return s->ended() || s->ready(); });
  }));
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(300));
  const auto served =
      std::count_if(burst.begin(), burst.end(), [](Shared* s) { return !s->ended(); });
  const auto limited = std::count_if(burst.begin(), burst.end(), [](Shared* s) {
    return s->ended() && s->end_reason() == "limit";
  });
  CHECK(served == 2);
  CHECK(limited == 10);
}

TEST_CASE("limits refuse topics, commits, documents, connections and text with reason limit",
          "[node][process][limits]") {
  Fixture f;
  NodeProcess node(
      f.dir.path() + "/data",
      {"--set", "limits.max_topics_per_link=2", "--set", "limits.max_deltas_per_commit=3", "--set",
       "limits.max_commit_bytes=256", "--set", "limits.max_documents=3", "--set",
       "limits.max_connections_per_address=4", "--set", "limits.max_text_bytes=256", "--set",
       "limits.max_http_body_bytes=1024"});
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  Document a(codec::Kind::kObject), b(codec::Kind::kObject), c(codec::Kind::kObject);
  std::vector<std::string> refused;
  sync::ShareHandlers handlers;
  handlers.refused = [&](const sync::Refused& r) { refused.push_back(r.reasons.at(0).code); };
  f.ShareOrFail(client, "a", &a, handlers);
  f.ShareOrFail(client, "b", &b);
  Shared* third = f.ShareOrFail(client, "c", &c);
  REQUIRE(RunUntil(f.io, [&] { return third->ended(); }));
  CHECK(third->end_reason() == "limit");

  SECTION("a commit over the delta or byte bound is refused, the link goes on") {
    REQUIRE(a.Atomic([&]() -> codec::Result<void> {
      for (int i = 0; i < 4; ++i) REQUIRE(a.Set(a.root(), "d" + std::to_string(i), double(i)));
      return {};
    }));
    REQUIRE(a.Set(a.root(), "big", std::string(1000, 'y')));
    REQUIRE(a.Set(a.root(), "small", 1.0));
    REQUIRE(RunUntil(f.io, [&] { return refused.size() == 2; }));
    CHECK(refused == std::vector<std::string>{"limit", "limit"});
  }

  SECTION("a document past max_documents is not created") {
    Client other(f.io, f.scheduler, node.url());
    Document d(codec::Kind::kObject), e(codec::Kind::kObject);
    Shared* fourth = f.ShareOrFail(other, "d", &d);  // a, b and d: three stored.
    REQUIRE(RunUntil(f.io, [&] { return fourth->ready(); }));
    RunUntil(
        f.io, [] { return false; }, std::chrono::milliseconds(300));
    Shared* fifth = f.ShareOrFail(other, "e", &e);
    REQUIRE(RunUntil(f.io, [&] { return fifth->ended(); }));
    CHECK(fifth->end_reason() == "limit");
    CHECK_FALSE(fourth->ended());
  }

  SECTION("a fifth connection from one address gets a link fault") {
    // Each taken before the next opens: on several threads (--threads) two
    // connections may be counted in either order.
    auto accepted = [&] {
      const std::string links =
          admin::HttpRequest(node.admin_url(), "GET", "/v1/links", "", "").body;
      size_t count = 0;
      for (size_t at = 0; (at = links.find("\"direction\":\"accepted\"", at)) != std::string::npos;
           ++at) {
        ++count;
      }
      return count;
    };
    std::vector<std::unique_ptr<RawPeer>> peers;
    for (size_t i = 0; i < 3; ++i) {
      peers.push_back(std::make_unique<RawPeer>(node.port()));
      REQUIRE(RunUntil(f.io, [&] { return accepted() == i + 2; }));
    }
    RawPeer fifth(node.port());
    const auto frames = fifth.ReadToEnd();
    const codec::FaultFrame* fault = LastFault(frames);
    REQUIRE(fault);
    CHECK(fault->topic == 0);
    CHECK(fault->reason == "limit");
    CHECK(fault->message.find("limits.max_connections_per_address") != std::string::npos);
  }

  SECTION("a text message over max_text_bytes ends the connection with a fault") {
    RawPeer peer(node.port());
    peer.ws.text(true);
    peer.ws.write(asio::buffer(std::string(1000, ' ')));
    const auto frames = peer.ReadToEnd();  // The fault points into it.
    const codec::FaultFrame* fault = LastFault(frames);
    REQUIRE(fault);
    CHECK(fault->reason == "limit");
    CHECK(fault->message.find("limits.max_text_bytes") != std::string::npos);
  }

  SECTION("an admin body over max_http_body_bytes is answered 413") {
    auto reply = admin::HttpRequest(node.admin_url(), "PUT", "/v1/documents/x", "",
                                    "{\"pad\":\"" + std::string(2000, 'z') + "\"}");
    CHECK(reply.status == 413);
  }
}

TEST_CASE("a bad document name is declined invalid-name before it reaches the store or the log",
          "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data", {"--log-level", "info"});
  node.Start();
  Client client(f.io, f.scheduler, node.url());
  // (A name that is not UTF-8 never gets here: its frame does not decode.)
  const std::string names[] = {"line\nbreak", std::string(257, 'n'), "tab\there", ""};
  std::vector<std::unique_ptr<Document>> docs;
  std::vector<Shared*> shared;
  for (const std::string& name : names) {
    docs.push_back(std::make_unique<Document>(codec::Kind::kObject));
    shared.push_back(f.ShareOrFail(client, name, docs.back().get()));
  }
  Document good(codec::Kind::kObject);
  Shared* fine = f.ShareOrFail(client, "fine", &good);
  REQUIRE(RunUntil(f.io, [&] {
    for (Shared* s : shared) {
      if (!s->ended()) return false;
    }
    return fine->ready();
  }));
  INFO("channel: " << (client.channel->end_reason() ? client.channel->end_reason()->ToString()
                                                    : "open"));
  for (Shared* s : shared) CHECK(s->end_reason() == "invalid-name");
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(200));
  const std::string log = node.Drain();
  CHECK_THAT(log, Catch::Contains("reason=invalid-name"));
  CHECK_THAT(log, !Catch::Contains("line\nbreak") && !Catch::Contains("tab\there") &&
                      !Catch::Contains(std::string(257, 'n')));
  CHECK_THAT(log, Catch::Contains("doc=\"fine\""));
}

// One HTTP request with the headers a page in a browser would send.
http::response<http::string_body> HttpAs(uint16_t port, http::verb method,
                                         const std::string& target, const std::string& host,
                                         const std::string& content_type = "") {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> request{method, target, 11};
  request.set(http::field::host, host);
  request.set(http::field::origin, "http://evil.example");
  if (!content_type.empty()) request.set(http::field::content_type, content_type);
  request.prepare_payload();
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  return response;
}

TEST_CASE("a page in a browser: links refuse its Origin, the admin its Host and simple POST",
          "[node][process][refusal]") {
  Fixture f;
  NodeProcess node(f.dir.path() + "/data",
                   {"--log-level", "info", "--set", "allowed_origins=[\"https://app.example\"]"});
  node.Start();
  Document doc(codec::Kind::kObject);
  Client writer(f.io, f.scheduler, node.url());
  f.Create(writer, "doc", doc);

  // A page from elsewhere is refused before it can open anything.
  RawPeer page(node.port(), 0, "http://evil.example");
  page.Send(codec::OpenFrame{1, "doc", std::nullopt, true});
  std::vector<codec::Frame> frames = page.ReadToEnd(std::chrono::seconds(5));
  const codec::FaultFrame* fault = LastFault(frames);
  REQUIRE(fault);
  CHECK(fault->reason == "forbidden");
  CHECK_THAT(fault->message, Catch::Contains("allowed_origins"));
  for (const auto& frame : frames) CHECK_FALSE(std::holds_alternative<codec::StateFrame>(frame));
  // The page it names is served.
  RawPeer app(node.port(), 0, "https://app.example");
  app.Send(codec::OpenFrame{1, "doc", std::nullopt, true});
  bool served = false;
  for (int i = 0; i < 10 && !served; ++i) {  // Past whatever comes before the state.
    boost::beast::flat_buffer buffer;
    app.ws.read(buffer);
    auto frame = codec::DecodeFrame(boost::beast::buffers_to_string(buffer.data()));
    REQUIRE(frame);
    REQUIRE_FALSE(std::holds_alternative<codec::FaultFrame>(*frame));
    served = std::holds_alternative<codec::StateFrame>(*frame);
  }
  CHECK(served);

  // DNS rebinding: the admin answers no name but its own.
  auto rebound = HttpAs(node.admin_port(), http::verb::get, "/v1/documents/doc", "evil.example");
  CHECK(rebound.result_int() == 421);
  CHECK_THAT(rebound.body(), Catch::Contains("unknown-host"));
  auto removed = HttpAs(node.admin_port(), http::verb::delete_, "/v1/documents/doc?confirm=doc",
                        "evil.example:" + std::to_string(node.admin_port()));
  CHECK(removed.result_int() == 421);
  // A cross-site form POST (text/plain) is refused; JSON is taken.
  const std::string local = "127.0.0.1:" + std::to_string(node.admin_port());
  auto simple = HttpAs(node.admin_port(), http::verb::post, "/v1/documents/doc/snapshot", local,
                       "text/plain");
  CHECK(simple.result_int() == 415);
  CHECK_THAT(simple.body(), Catch::Contains("unsupported-media-type"));
  auto json = HttpAs(node.admin_port(), http::verb::post, "/v1/documents/doc/snapshot", local,
                     "application/json");
  CHECK(json.result_int() == 200);
  CHECK(HttpAs(node.admin_port(), http::verb::get, "/v1/documents/doc", local).result_int() == 200);
}

}  // namespace
}  // namespace aweft::node::testing

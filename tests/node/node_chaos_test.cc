// A seeded chaos run of a three-node chain (issue 9): clients write steadily
// at every node while nodes are killed with SIGKILL and restarted, and the
// links between nodes are cut and restored. Then everything must converge to
// one state, and every write a client saw confirmed durable must be on every
// node, exactly once.
//
// AWEFT_CHAOS_SEED picks the plan (default 9) and AWEFT_CHAOS_SECONDS its
// length (default 10); scripts/chaos.sh runs longer ones. The plan (what is
// killed or cut at which step, how many writes) follows from the seed alone;
// the timing of the processes does not, so a replay is the same plan, not the
// same interleaving.

#include <sys/types.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include "node/client.h"
#include "sync/snapshot.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using sync::Document;
using sync::Observable;
using Clock = std::chrono::steady_clock;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr auto kStep = std::chrono::milliseconds(50);
constexpr auto kSettleLimit = std::chrono::seconds(60);
const char* const kName = "chaos";

// A TCP proxy in front of one node, on a thread of its own (so it keeps
// relaying while the test blocks starting a node). Cut() closes every
// connection through it and refuses new ones, accepting and closing them,
// until Restore(). Both return at once; the proxy acts a moment later.
class LinkProxy {
 public:
  explicit LinkProxy(uint16_t target)
      : target_(asio::ip::make_address_v4("127.0.0.1"), target),
        acceptor_(io_, tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)),
        port_(acceptor_.local_endpoint().port()) {
    asio::co_spawn(io_, Accept(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LinkProxy() {
    asio::post(io_, [this] {
      acceptor_.close();
      CloseAll();
      io_.stop();
    });
    thread_.join();
  }
  LinkProxy(const LinkProxy&) = delete;
  LinkProxy& operator=(const LinkProxy&) = delete;

  std::string url() const { return "ws://127.0.0.1:" + std::to_string(port_) + "/"; }
  void Cut() {
    asio::post(io_, [this] {
      cut_ = true;
      CloseAll();
    });
  }
  void Restore() {
    asio::post(io_, [this] { cut_ = false; });
  }

 private:
  struct Pair {
    explicit Pair(tcp::socket from) : down(std::move(from)), up(down.get_executor()) {}
    tcp::socket down;  // From the node that dials.
    tcp::socket up;    // To the node above.
  };

  asio::awaitable<void> Accept() {
    while (acceptor_.is_open()) {
      auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
      if (ec || cut_) continue;  // A refused one closes as `socket` goes.
      asio::co_spawn(io_, Serve(std::make_shared<Pair>(std::move(socket))), asio::detached);
    }
  }

  asio::awaitable<void> Serve(std::shared_ptr<Pair> pair) {
    pairs_.insert(pair);
    // A cut while connecting closes `up`, which ends the connect.
    auto [ec] = co_await pair->up.async_connect(target_, kNoThrow);
    if (ec || !pairs_.count(pair)) {
      Close(pair);
      co_return;
    }
    asio::co_spawn(io_, Pump(pair, pair->down, pair->up), asio::detached);
    co_await Pump(pair, pair->up, pair->down);
  }

  // Relays `from` to `to` until either ends, then ends both.
  asio::awaitable<void> Pump(std::shared_ptr<Pair> pair, tcp::socket& from, tcp::socket& to) {
    std::array<char, 16384> buffer;
    for (;;) {
      auto [read, n] = co_await from.async_read_some(asio::buffer(buffer), kNoThrow);
      if (read) break;
      if (std::get<0>(co_await asio::async_write(to, asio::buffer(buffer.data(), n), kNoThrow))) {
        break;
      }
    }
    Close(pair);
  }

  void Close(const std::shared_ptr<Pair>& pair) {
    boost::system::error_code ignored;
    pair->down.close(ignored);
    pair->up.close(ignored);
    pairs_.erase(pair);
  }
  void CloseAll() {
    auto all = std::move(pairs_);
    pairs_.clear();
    for (const auto& pair : all) Close(pair);
  }

  asio::io_context io_;
  const tcp::endpoint target_;
  tcp::acceptor acceptor_;
  const uint16_t port_;
  std::set<std::shared_ptr<Pair>> pairs_;  // Proxy thread only, as is cut_.
  bool cut_ = false;
  std::thread thread_;
};

// One node of the chain: killed and restarted on the same port and data.
struct ChaosNode {
  explicit ChaosNode(std::string name) : name(std::move(name)) {}
  std::string name;
  std::unique_ptr<NodeProcess> process;
  uint16_t port = 0;
  bool up = false;
  int next = 0;  // The step of its next kill, or of its restart while down.
  int kills = 0;
  std::string log;  // Its last output (warnings and worse), for a failure.
  std::string died;  // Set when it ended without being killed.
};

// A link between two nodes, through a proxy.
struct ChaosLink {
  explicit ChaosLink(std::string name) : name(std::move(name)) {}
  std::string name;  // "b->a": b dials a.
  std::unique_ptr<LinkProxy> proxy;
  bool cut = false;
  int next = 0;  // The step of its next cut, or of its restore while cut.
  int cuts = 0;
};

// A client at one node that writes, and what it has seen confirmed.
struct Writer {
  explicit Writer(std::string name) : name(std::move(name)) {}
  std::string name;  // The node's.
  std::unique_ptr<aweft::Client> client;
  Document* doc = nullptr;
  std::vector<std::string> written;  // Every write, oldest first.
  size_t confirmed = 0;              // written[0, confirmed) are durable.

  // The client's unconfirmed commits are the newest it watched (it retires
  // them oldest first), and each write was one commit it watched: so with k
  // unconfirmed, every write but the last k is confirmed. A commit it
  // watched that is not a write (a resync's) only makes k larger, never
  // confirms a write early.
  void Update() {
    const size_t k = client->unconfirmed(kName);
    if (written.size() > k) confirmed = std::max(confirmed, written.size() - k);
  }
};

uint64_t FromEnv(const char* name, uint64_t fallback, uint64_t most) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  const uint64_t value = std::strtoull(text, nullptr, 10);
  return std::min(value, most);
}

void RunFor(boost::asio::io_context& io, std::chrono::milliseconds time) {
  RunUntil(io, [] { return false; }, time);
}

std::unique_ptr<aweft::Client> ClientAt(boost::asio::io_context& io, uint16_t port) {
  aweft::Client::Options options;
  options.url = "ws://127.0.0.1:" + std::to_string(port) + "/";
  // Restarts are short here: come back sooner than the default 5 s.
  options.backoff_max = std::chrono::milliseconds(1000);
  return std::make_unique<aweft::Client>(io.get_executor(), options);
}

// Opens the document at `client`'s node once that node holds it (it may
// first have to find it upstream); returns the client-owned document.
Document* OpenWhenHeld(boost::asio::io_context& io, aweft::Client& client) {
  // Shared with the callbacks, which may outlive a wait that timed out.
  struct Wait {
    bool held = false, asking = false;
    Document* doc = nullptr;
  };
  auto wait = std::make_shared<Wait>();
  RunUntil(io, [&] {
    if (!wait->asking) {
      wait->asking = true;
      client.Probe(kName, [wait](auto answer) {
        wait->held = answer.has_value();
        wait->asking = false;
      });
    }
    return wait->held;
  }, std::chrono::milliseconds(20000));
  if (!wait->held) return nullptr;
  client.Open(kName, [wait](Document& doc) { wait->doc = &doc; });
  RunUntil(io, [&] { return wait->doc != nullptr; }, std::chrono::milliseconds(20000));
  return wait->doc;
}

// How many values the document's list holds.
size_t Values(const Document& doc, const codec::Id& list_id) {
  const Observable* list = doc.Find(list_id);
  return list ? list->size() : 0;
}

// How often each string is in the document's list.
std::map<std::string, int> Count(const Document& doc, const codec::Id& list_id) {
  std::map<std::string, int> counts;
  const Observable* list = doc.Find(list_id);
  if (!list) return counts;
  for (const auto& [position, value] : list->slots()) {
    if (const auto* text = std::get_if<std::string>(&value)) ++counts[*text];
  }
  return counts;
}

void Keep(std::string& log, const std::string& more) {
  constexpr size_t kKept = 4096;
  log += more;
  if (log.size() > kKept) log.erase(0, log.size() - kKept);
}

void Restart(ChaosNode& node) {
  // The port was ours a moment ago; retry in case it is slow to free.
  for (int attempt = 0;; ++attempt) {
    try {
      node.process->Start(node.port);
      node.up = true;
      return;
    } catch (const std::runtime_error&) {
      node.process->Kill();
      if (attempt == 20) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void Kill(ChaosNode& node) {
  Keep(node.log, node.process->Drain());
  node.process->Signal(SIGKILL);
  const int status = node.process->Wait();
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    node.died += "ended on its own before a kill (status " + std::to_string(status) + "); ";
  }
  node.up = false;
  ++node.kills;
}

// Drains the node's output (a full pipe would stall it) and notes whether
// it ended by itself.
void Watch(ChaosNode& node) {
  if (!node.up) return;
  Keep(node.log, node.process->Drain());
  int status = 0;
  if (waitpid(node.process->pid(), &status, WNOHANG) == node.process->pid()) {
    node.died += "ended on its own (status " + std::to_string(status) + "); ";
    node.process->Wait();
    Restart(node);
  }
}

TEST_CASE("a chain of three nodes under writes, kills and cut links converges and keeps "
          "every write confirmed durable",
          "[node][chaos]") {
  const uint64_t seed = FromEnv("AWEFT_CHAOS_SEED", 9, UINT32_MAX);
  const uint64_t seconds = FromEnv("AWEFT_CHAOS_SECONDS", 10, 3600);
  const int steps = static_cast<int>(seconds * 1000 / kStep.count());
  INFO("replay with AWEFT_CHAOS_SEED=" << seed << " AWEFT_CHAOS_SECONDS=" << seconds);
  std::printf("chaos: seed %llu, %llu s (%d steps of %lld ms)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seconds),
              steps, static_cast<long long>(kStep.count()));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  auto draw = [&](int least, int most) {
    return std::uniform_int_distribution<int>(least, most)(rng);
  };

  // The chain a <- b <- c, each upstream through a proxy.
  TempDir dir;
  boost::asio::io_context io;
  std::array<ChaosNode, 3> nodes{ChaosNode{"a"}, ChaosNode{"b"}, ChaosNode{"c"}};
  std::array<ChaosLink, 2> links{ChaosLink{"b->a"}, ChaosLink{"c->b"}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<std::string> extra;
    if (i > 0) extra = {"--upstream", links[i - 1].proxy->url()};
    nodes[i].process = std::make_unique<NodeProcess>(dir.path() + "/" + nodes[i].name, extra);
    nodes[i].port = nodes[i].process->Start();
    nodes[i].up = true;
    if (i < links.size()) links[i].proxy = std::make_unique<LinkProxy>(nodes[i].port);
  }

  // A client at each node writes to one list; the first brings the document.
  Document board(codec::Kind::kObject);
  Observable& list = board.Create(codec::Kind::kArray);
  REQUIRE(board.Set(board.root(), "list", sync::Attach(list)));
  const codec::Id list_id = list.id();
  std::array<Writer, 3> writers{Writer{"a"}, Writer{"b"}, Writer{"c"}};
  writers[0].client = ClientAt(io, nodes[0].port);
  writers[0].doc = &board;
  REQUIRE(writers[0].client->Share(kName, board));
  REQUIRE(RunUntil(io, [&] { return writers[0].client->unconfirmed(kName) == 0; }));
  for (size_t i = 1; i < writers.size(); ++i) {
    writers[i].client = ClientAt(io, nodes[i].port);
    writers[i].doc = OpenWhenHeld(io, *writers[i].client);
    REQUIRE(writers[i].doc);
  }
  // A node may hold the name before the list reaches it from above.
  REQUIRE(RunUntil(io, [&] {
    for (const Writer& writer : writers) {
      if (!writer.doc->Find(list_id)) return false;
    }
    return true;
  }, std::chrono::milliseconds(20000)));

  // The plan: each node is killed every 1-5 s and down for 0.1-1.5 s; each
  // link is cut every 0.5-4 s for 0.2-3 s; each writer writes 0-3 times a
  // step. Every draw happens at a fixed point of a step, so the seed alone
  // fixes the plan.
  for (ChaosNode& node : nodes) node.next = draw(10, 100);
  for (ChaosLink& link : links) link.next = draw(10, 80);
  std::string events;
  const auto began = Clock::now();
  for (int step = 0; step < steps; ++step) {
    for (ChaosNode& node : nodes) {
      if (step < node.next) continue;
      if (node.up) {
        Kill(node);
        node.next = step + draw(2, 30);
        events += std::to_string(step) + " kill " + node.name + "; ";
      } else {
        Restart(node);
        node.next = step + draw(20, 100);
        events += std::to_string(step) + " start " + node.name + "; ";
      }
    }
    for (ChaosLink& link : links) {
      if (step < link.next) continue;
      if (link.cut) {
        link.proxy->Restore();
        link.next = step + draw(10, 80);
        events += std::to_string(step) + " restore " + link.name + "; ";
      } else {
        link.proxy->Cut();
        ++link.cuts;
        link.next = step + draw(4, 60);
        events += std::to_string(step) + " cut " + link.name + "; ";
      }
      link.cut = !link.cut;
    }
    for (Writer& writer : writers) {
      for (int n = draw(0, 3); n > 0; --n) {
        Observable* mine = writer.doc->Find(list_id);
        REQUIRE(mine);
        std::string key = writer.name + "-" + std::to_string(writer.written.size());
        REQUIRE(writer.doc->Push(*mine, key));
        writer.written.push_back(std::move(key));
      }
    }
    RunFor(io, kStep);
    for (ChaosNode& node : nodes) Watch(node);
    for (Writer& writer : writers) writer.Update();
  }
  const double chaos_seconds = std::chrono::duration<double>(Clock::now() - began).count();
  std::vector<std::string> confirmed;  // The ledger.
  for (Writer& writer : writers) {
    confirmed.insert(confirmed.end(), writer.written.begin(),
                     writer.written.begin() + static_cast<ptrdiff_t>(writer.confirmed));
  }
  const size_t ledger = confirmed.size();
  INFO("plan: " << events);

  // Everything back; then every client confirmed and every node and client
  // in one state, read at each node by a client of its own.
  for (ChaosNode& node : nodes) {
    if (!node.up) Restart(node);
  }
  for (ChaosLink& link : links) {
    if (link.cut) link.proxy->Restore();
    link.cut = false;
  }
  const auto settling = Clock::now();
  std::array<std::unique_ptr<aweft::Client>, 3> reader_clients;
  std::array<Document*, 3> readers{};
  for (size_t i = 0; i < nodes.size(); ++i) {
    reader_clients[i] = ClientAt(io, nodes[i].port);
    readers[i] = OpenWhenHeld(io, *reader_clients[i]);
    INFO("reading node " << nodes[i].name);
    REQUIRE(readers[i]);
  }
  std::vector<Document*> all{writers[0].doc, writers[1].doc, writers[2].doc,
                             readers[0],     readers[1],     readers[2]};
  auto settled = [&] {
    for (ChaosNode& node : nodes) Watch(node);
    for (Writer& writer : writers) {
      if (!writer.client->connected() || writer.client->unconfirmed(kName) != 0) return false;
    }
    const sync::Snapshot first = sync::TakeSnapshot(*all[0]);
    for (size_t i = 1; i < all.size(); ++i) {
      if (!(sync::TakeSnapshot(*all[i]) == first)) return false;
    }
    return true;
  };
  bool converged = false;
  while (!(converged = settled()) && Clock::now() - settling < kSettleLimit) {
    RunFor(io, std::chrono::milliseconds(200));
  }
  const double settle_seconds = std::chrono::duration<double>(Clock::now() - settling).count();
  for (Writer& writer : writers) writer.Update();

  std::string state;
  for (size_t i = 0; i < writers.size(); ++i) {
    state += "client at " + writers[i].name + ": " +
             std::to_string(Values(*writers[i].doc, list_id)) + " values, " +
             std::to_string(writers[i].client->unconfirmed(kName)) + " unconfirmed; node " +
             nodes[i].name + ": " + std::to_string(Values(*readers[i], list_id)) +
             " values; log: " + nodes[i].log + "\n";
  }
  INFO(state);
  CHECK(converged);
  for (const ChaosNode& node : nodes) {
    INFO("node " << node.name);
    CHECK(node.died.empty());
  }

  // Every write (each client kept what was unconfirmed and re-sent it), so
  // the ledger's above all, is on every node exactly once, and nothing else.
  std::map<std::string, int> expected;
  for (const Writer& writer : writers) {
    CHECK(writer.confirmed == writer.written.size());
    for (const std::string& key : writer.written) ++expected[key];
  }
  bool all_present = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::map<std::string, int> counts = Count(*readers[i], list_id);
    std::vector<std::string> lost, doubled, extra;
    for (const std::string& key : confirmed) {
      auto it = counts.find(key);
      if (it == counts.end()) lost.push_back(key);
    }
    for (const auto& [key, count] : counts) {
      if (!expected.count(key)) extra.push_back(key);
      if (count > 1) doubled.push_back(key + " x" + std::to_string(count));
    }
    size_t unconfirmed_missing = 0;
    for (const auto& [key, n] : expected) unconfirmed_missing += counts.count(key) ? 0 : 1;
    INFO("node " << nodes[i].name << ": " << lost.size() << " confirmed writes lost, e.g. "
                 << (lost.empty() ? "" : lost.front()) << "; " << doubled.size()
                 << " doubled, e.g. " << (doubled.empty() ? "" : doubled.front()) << "; "
                 << extra.size() << " unknown; " << unconfirmed_missing
                 << " writes missing in all");
    CHECK(lost.empty());
    CHECK(doubled.empty());
    CHECK(extra.empty());
    CHECK(unconfirmed_missing == 0);
    all_present = all_present && lost.empty() && doubled.empty() && extra.empty() &&
                  unconfirmed_missing == 0;
  }

  size_t attempted = 0;
  for (const Writer& writer : writers) attempted += writer.written.size();
  std::printf("chaos: ran %.1f s, settled in %.1f s%s\n", chaos_seconds, settle_seconds,
              converged ? "" : " (DID NOT CONVERGE)");
  std::printf("chaos: kills a %d, b %d, c %d; link cuts b->a %d, c->b %d\n", nodes[0].kills,
              nodes[1].kills, nodes[2].kills, links[0].cuts, links[1].cuts);
  std::printf("chaos: writes %zu attempted, %zu confirmed durable during the run (ledger); "
              "every write on every node once: %s\n",
              attempted, ledger, all_present ? "yes" : "NO");
  std::printf("chaos: plan: %s\n", events.c_str());
}

}  // namespace
}  // namespace aweft::node::testing

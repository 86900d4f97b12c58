// A seeded chaos run of a three-node chain (issue 9): clients write steadily
// at every node while nodes are killed with SIGKILL and restarted, and the
// links between nodes are cut and restored. Then everything must converge to
// one state, and every write a client saw confirmed durable must be on every
// node, exactly once. The writes are of two sorts (docs/reliability.md
// "Chaos"): list inserts, which never race, so each must survive; and
// replaces of four contended keys, which race across all three nodes, where
// the loser of a race is overwritten, not lost: each key must end with one
// value everywhere, a value some writer wrote to it.
//
// AWEFT_CHAOS_SEED picks the plan (default 9) and AWEFT_CHAOS_SECONDS its
// length (default 10); scripts/chaos.sh runs longer ones. The plan (what is
// killed or cut at which step, how many writes) follows from the seed alone;
// the timing of the processes does not, so a replay is the same plan, not the
// same interleaving. AWEFT_CHAOS_LOG_DIR=DIR keeps each node's whole log, at
// info, in DIR/NAME.log.

#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "node/client.h"
#include "sync/snapshot.h"
#include "tests/node/link_proxy.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

namespace asio = boost::asio;
using sync::Document;
using sync::Observable;
using Clock = std::chrono::steady_clock;

constexpr auto kStep = std::chrono::milliseconds(50);
// Under the nodes' 60 s idle timeout, so that a link left dead but open shows
// as a failure instead of healing when that timeout closes it.
constexpr auto kSettleLimit = std::chrono::seconds(30);
const char* const kName = "chaos";
const char* const kHot[] = {"hot0", "hot1", "hot2", "hot3"};  // Contended keys.

bool IsHot(const std::string& write) { return write.rfind("hot:", 0) == 0; }

// One node of the chain: killed and restarted on the same port and data.
struct ChaosNode {
  explicit ChaosNode(std::string name) : name(std::move(name)) {}
  std::string name;
  std::unique_ptr<NodeProcess> process;
  uint16_t port = 0;
  bool up = false;
  int next = 0;  // The step of its next kill, or of its restart while down.
  int kills = 0;
  std::string log;   // Its last output (warnings and worse), for a failure.
  int warnings = 0;  // Lines it logged at warn and above.
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
  // Every write, oldest first: a list insert's key, or "hot:" and the
  // contended key and value it replaced.
  std::vector<std::string> written;
  size_t confirmed = 0;  // written[0, confirmed) are durable, or refused.
  // Writes the node refused (its `refused` handler), with the reason: a
  // contended write that lost an add/add race or crossed another with tags
  // on; never a list insert.
  std::map<std::string, std::string> refused;

  // The client's unconfirmed commits are the newest it watched (it retires
  // them oldest first), and each write was one commit it watched, and left
  // `unconfirmed` once confirmed or refused: so with k unconfirmed, every
  // write but the last k not refused is confirmed. A commit it watched that
  // is not a write (a resync's) only makes k larger, never confirms a write
  // early.
  void Update() {
    size_t pending = client->unconfirmed(kName), i = written.size();
    for (; i > 0 && pending > 0; --i) {
      if (!refused.count(written[i - 1])) --pending;
    }
    confirmed = std::max(confirmed, i);
  }
  // The write a refused commit of this writer made.
  void Refused(const sync::Refused& why, const Document& doc) {
    // Only its own: a commit of the node's it refused is no write of its.
    if (!why.mine || !why.commit || why.commit->deltas.empty()) return;
    const codec::Delta& delta = why.commit->deltas.front();
    const auto* text = delta.value ? std::get_if<std::string>(&*delta.value) : nullptr;
    if (!text) return;
    const std::string write =
        delta.id == doc.root().id() ? "hot:" + delta.ref.key + "=" + *text : *text;
    refused[write] = why.reasons.empty() ? "" : why.reasons.front().code;
  }
};

uint64_t FromEnv(const char* name, uint64_t fallback, uint64_t most) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  const uint64_t value = std::strtoull(text, nullptr, 10);
  return std::min(value, most);
}

void RunFor(boost::asio::io_context& io, std::chrono::milliseconds time) {
  RunUntil(
      io, [] { return false; }, time);
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
Document* OpenWhenHeld(boost::asio::io_context& io, aweft::Client& client,
                       std::function<void(const sync::Refused&)> refused = {}) {
  // Shared with the callbacks, which may outlive a wait that timed out.
  struct Wait {
    bool held = false, asking = false;
    Document* doc = nullptr;
  };
  auto wait = std::make_shared<Wait>();
  RunUntil(
      io,
      [&] {
        if (!wait->asking) {
          wait->asking = true;
          client.Probe(kName, [wait](auto answer) {
            wait->held = answer.has_value();
            wait->asking = false;
          });
        }
        return wait->held;
      },
      std::chrono::milliseconds(20000));
  if (!wait->held) return nullptr;
  client.Open(
      kName, [wait](Document& doc) { wait->doc = &doc; }, {}, std::move(refused));
  RunUntil(
      io, [&] { return wait->doc != nullptr; }, std::chrono::milliseconds(20000));
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

// Drains the node's output (a full pipe would stall it), keeping the end,
// and all of it in AWEFT_CHAOS_LOG_DIR/NAME.log when that is set.
void DrainLog(ChaosNode& node) {
  constexpr size_t kKept = 4096;
  const std::string more = node.process->Drain();
  if (const char* dir = std::getenv("AWEFT_CHAOS_LOG_DIR")) {
    std::ofstream(std::string(dir) + "/" + node.name + ".log", std::ios::app) << more;
  }
  for (size_t at = 0; at < more.size();) {  // "TIME LEVEL event=..."
    const size_t end = std::min(more.find('\n', at), more.size());
    const std::string line = more.substr(at, end - at);
    const size_t level = line.find(' ') + 1;
    for (const char* bad : {"warn ", "error "}) {
      if (level > 0 && line.compare(level, std::strlen(bad), bad) == 0) ++node.warnings;
    }
    at = end + 1;
  }
  node.log += more;
  if (node.log.size() > kKept) node.log.erase(0, node.log.size() - kKept);
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
  DrainLog(node);
  node.process->Signal(SIGKILL);
  const int status = node.process->Wait();
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    node.died += "ended on its own before a kill (status " + std::to_string(status) + "); ";
  }
  node.up = false;
  ++node.kills;
}

// Drains the node's output and notes whether it ended by itself.
void Watch(ChaosNode& node) {
  if (!node.up) return;
  DrainLog(node);
  int status = 0;
  if (waitpid(node.process->pid(), &status, WNOHANG) == node.process->pid()) {
    node.died += "ended on its own (status " + std::to_string(status) + "); ";
    node.process->Wait();
    Restart(node);
  }
}

// One run: the chain a <- b <- c (each upstream through a proxy), a writer
// at each node, the plan drawn from the seed, and what happened.
class ChaosRun {
 public:
  explicit ChaosRun(uint32_t seed) : rng_(seed) {}

  // Starts the nodes, then the writers; the writer at a brings the document
  // (a list in an object), the others find it upstream.
  void Start() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      std::vector<std::string> extra;
      if (i > 0) extra = {"--upstream", links_[i - 1].proxy->url()};
      if (std::getenv("AWEFT_CHAOS_LOG_DIR")) extra.insert(extra.end(), {"--log-level", "info"});
      nodes_[i].process = std::make_unique<NodeProcess>(dir_.path() + "/" + nodes_[i].name, extra);
      nodes_[i].port = nodes_[i].process->Start();
      nodes_[i].up = true;
      if (i < links_.size()) links_[i].proxy = std::make_unique<LinkProxy>(io_, nodes_[i].port);
    }
    Observable& list = board_.Create(codec::Kind::kArray);
    REQUIRE(board_.Set(board_.root(), "list", sync::Attach(list)));
    for (const char* key : kHot) REQUIRE(board_.Set(board_.root(), key, "start"));
    list_id_ = list.id();
    writers_[0].client = ClientAt(io_, nodes_[0].port);
    writers_[0].doc = &board_;
    sync::ShareHandlers handlers;
    handlers.refused = [this](const sync::Refused& why) { writers_[0].Refused(why, board_); };
    REQUIRE(writers_[0].client->Share(kName, board_, std::move(handlers)));
    REQUIRE(RunUntil(
        io_, [&] { return writers_[0].client->unconfirmed(kName) == 0; },
        std::chrono::milliseconds(20000)));
    for (size_t i = 1; i < writers_.size(); ++i) {
      writers_[i].client = ClientAt(io_, nodes_[i].port);
      writers_[i].doc = OpenWhenHeld(io_, *writers_[i].client, [this, i](const sync::Refused& why) {
        if (writers_[i].doc) writers_[i].Refused(why, *writers_[i].doc);
      });
      REQUIRE(writers_[i].doc);
    }
    // A node may hold the name before the list reaches it from above.
    REQUIRE(RunUntil(
        io_,
        [&] {
          for (const Writer& writer : writers_) {
            if (!writer.doc->Find(list_id_)) return false;
          }
          return true;
        },
        std::chrono::milliseconds(20000)));
    // The plan: each node is killed every 1-5 s and down for 0.1-1.5 s;
    // each link is cut every 0.5-4 s for 0.2-3 s; each writer writes 0-3
    // times a step. Every draw happens at a fixed point of a step, so the
    // seed alone fixes the plan.
    for (ChaosNode& node : nodes_) node.next = Draw(10, 100);
    for (ChaosLink& link : links_) link.next = Draw(10, 80);
  }

  // One step of the plan, then kStep of traffic.
  void Step(int step) {
    for (ChaosNode& node : nodes_) {
      if (step < node.next) continue;
      if (node.up) {
        Kill(node);
        node.next = step + Draw(2, 30);
      } else {
        Restart(node);
        node.next = step + Draw(20, 100);
      }
      Note(step, node.up ? "start " : "kill ", node.name);
    }
    for (ChaosLink& link : links_) {
      if (step < link.next) continue;
      link.cut = !link.cut;
      if (link.cut) {
        link.proxy->Cut();
        ++link.cuts;
        link.next = step + Draw(4, 60);
      } else {
        link.proxy->Restore();
        link.next = step + Draw(10, 80);
      }
      Note(step, link.cut ? "cut " : "restore ", link.name);
    }
    for (Writer& writer : writers_) {
      for (int n = Draw(0, 3); n > 0; --n) {
        Observable* list = writer.doc->Find(list_id_);
        REQUIRE(list);
        std::string key = writer.name + "-" + std::to_string(writer.written.size());
        REQUIRE(writer.doc->Push(*list, key));
        writer.written.push_back(std::move(key));
      }
      if (Draw(0, 1) == 0) {  // The same four keys at every node.
        const char* key = kHot[Draw(0, 3)];
        const std::string value = writer.name + "-" + std::to_string(writer.written.size());
        REQUIRE(writer.doc->Set(writer.doc->root(), key, value));
        writer.written.push_back(std::string("hot:") + key + "=" + value);
      }
    }
    RunFor(io_, kStep);
    for (ChaosNode& node : nodes_) Watch(node);
    for (Writer& writer : writers_) writer.Update();
  }

  // The writes confirmed durable so far.
  std::vector<std::string> Ledger() const {
    std::vector<std::string> ledger;
    for (const Writer& writer : writers_) {
      std::copy_if(writer.written.begin(),
                   writer.written.begin() + static_cast<ptrdiff_t>(writer.confirmed),
                   std::back_inserter(ledger),
                   [&](const std::string& w) { return !IsHot(w) && !writer.refused.count(w); });
    }
    return ledger;
  }

  // Brings every node and link back, opens the document at each node with a
  // client of its own, and waits until every writer has all confirmed and
  // every writer and node is in one state. Returns whether that came.
  bool Settle() {
    for (ChaosNode& node : nodes_) {
      if (!node.up) Restart(node);
    }
    for (ChaosLink& link : links_) {
      if (link.cut) link.proxy->Restore();
      link.cut = false;
    }
    const auto opening = Clock::now();
    std::vector<const Document*> all;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      all.push_back(writers_[i].doc);
      readers_[i] = ClientAt(io_, nodes_[i].port);
      read_[i] = OpenWhenHeld(io_, *readers_[i]);
      INFO("reading node " << nodes_[i].name);
      REQUIRE(read_[i]);
    }
    all.insert(all.end(), read_.begin(), read_.end());
    std::printf("chaos: opened at every node in %.1f s\n",
                std::chrono::duration<double>(Clock::now() - opening).count());
    auto settled = [&] {
      for (ChaosNode& node : nodes_) Watch(node);
      for (Writer& writer : writers_) {
        if (!writer.client->connected() || writer.client->unconfirmed(kName) != 0) return false;
      }
      const sync::Snapshot first = sync::TakeSnapshot(*all[0]);
      for (size_t i = 1; i < all.size(); ++i) {
        if (!(sync::TakeSnapshot(*all[i]) == first)) return false;
      }
      return true;
    };
    const auto began = Clock::now();
    auto report = began + std::chrono::seconds(10);
    bool converged = false;
    while (!(converged = settled()) && Clock::now() - began < kSettleLimit) {
      RunFor(io_, std::chrono::milliseconds(200));
      if (Clock::now() > report) {  // Where a slow settling stands.
        report += std::chrono::seconds(10);
        std::printf("chaos: still settling:\n%s", State().c_str());
        std::fflush(stdout);
      }
    }
    for (Writer& writer : writers_) writer.Update();
    return converged;
  }

  // Checks that every node holds each write in `ledger`, each write any
  // writer made (each kept what was unconfirmed and sent it again), once,
  // and nothing else. Returns whether all that holds.
  bool Verify(const std::vector<std::string>& ledger) {
    std::map<std::string, int> written;
    std::set<std::string> hot{"start"};  // Every value written to a contended key.
    bool all = true;
    for (const Writer& writer : writers_) {
      CHECK(writer.confirmed == writer.written.size());
      for (const auto& [write, reason] : writer.refused) {
        INFO("a list insert refused: " << write << " (" << reason << ")");
        CHECK(IsHot(write));
        all = all && IsHot(write);
      }
      for (const std::string& key : writer.written) {
        if (writer.refused.count(key)) continue;  // Refused: in no state.
        if (IsHot(key)) hot.insert(key.substr(key.find('=') + 1));
        if (!IsHot(key)) ++written[key];
      }
    }
    // The contended keys: one state everywhere is checked by Settle; here,
    // that each holds a value written to it (a race's winner, not a mix).
    for (const char* key : kHot) {
      const codec::Value* value = read_[0]->root().Get(key);
      const auto* text = value ? std::get_if<std::string>(value) : nullptr;
      INFO("contended key " << key);
      const bool written_there = text && hot.count(*text);
      CHECK(written_there);
      all = all && written_there;
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const std::map<std::string, int> counts = Count(*read_[i], list_id_);
      std::vector<std::string> lost, missing, doubled, unknown;
      for (const std::string& key : ledger) {
        if (!counts.count(key)) lost.push_back(key);
      }
      for (const auto& [key, n] : written) {
        if (!counts.count(key)) missing.push_back(key);
      }
      for (const auto& [key, n] : counts) {
        if (!written.count(key)) unknown.push_back(key);
        if (n > 1) doubled.push_back(key + " x" + std::to_string(n));
      }
      INFO("node " << nodes_[i].name << ": " << Some(lost) << " confirmed writes lost; "
                   << Some(missing) << " writes missing; " << Some(doubled) << " doubled; "
                   << Some(unknown) << " unknown");
      CHECK(lost.empty());
      CHECK(missing.empty());
      CHECK(doubled.empty());
      CHECK(unknown.empty());
      all = all && lost.empty() && missing.empty() && doubled.empty() && unknown.empty();
    }
    for (const ChaosNode& node : nodes_) {
      INFO("node " << node.name << " " << node.died << "its log ends: " << node.log);
      CHECK(node.died.empty());
    }
    return all;
  }

  // Where each writer and node stands, for a failure's report.
  std::string State() const {
    std::string state;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      state += "client at " + writers_[i].name + ": " +
               std::to_string(Values(*writers_[i].doc, list_id_)) + " values, " +
               std::to_string(writers_[i].client->unconfirmed(kName)) + " unconfirmed" +
               (writers_[i].client->connected() ? "" : ", not connected") + "; node " +
               nodes_[i].name + ": " +
               (read_[i] ? std::to_string(Values(*read_[i], list_id_)) : "?") + " values\n";
    }
    return state;
  }

  size_t attempted() const {
    size_t n = 0;
    for (const Writer& writer : writers_) n += writer.written.size();
    return n;
  }
  size_t contended() const {
    size_t n = 0;
    for (const Writer& writer : writers_)
      n += std::count_if(writer.written.begin(), writer.written.end(), IsHot);
    return n;
  }
  const std::array<ChaosNode, 3>& nodes() const { return nodes_; }
  const std::array<ChaosLink, 2>& links() const { return links_; }
  const std::string& events() const { return events_; }

 private:
  int Draw(int least, int most) { return std::uniform_int_distribution<int>(least, most)(rng_); }
  void Note(int step, const char* what, const std::string& name) {
    events_ += std::to_string(step) + " " + what + name + "; ";
  }
  // How many, and the first.
  static std::string Some(const std::vector<std::string>& keys) {
    return std::to_string(keys.size()) + (keys.empty() ? "" : " (" + keys.front() + ", ...)");
  }

  std::mt19937 rng_;
  TempDir dir_;
  boost::asio::io_context io_;
  std::array<ChaosNode, 3> nodes_{ChaosNode{"a"}, ChaosNode{"b"}, ChaosNode{"c"}};
  std::array<ChaosLink, 2> links_{ChaosLink{"b->a"}, ChaosLink{"c->b"}};
  Document board_{codec::Kind::kObject};
  codec::Id list_id_;
  std::array<Writer, 3> writers_{Writer{"a"}, Writer{"b"}, Writer{"c"}};
  std::array<std::unique_ptr<aweft::Client>, 3> readers_;
  std::array<Document*, 3> read_{};  // Owned by readers_.
  std::string events_;               // The plan as it ran: "STEP kill b; ...".
};

TEST_CASE(
    "a chain of three nodes under writes, kills and cut links converges and keeps "
    "every write confirmed durable",
    "[node][chaos]") {
  const uint64_t seed = FromEnv("AWEFT_CHAOS_SEED", 9, UINT32_MAX);
  const uint64_t seconds = FromEnv("AWEFT_CHAOS_SECONDS", 10, 3600);
  const int steps = static_cast<int>(seconds * 1000 / kStep.count());
  INFO("replay with AWEFT_CHAOS_SEED=" << seed << " AWEFT_CHAOS_SECONDS=" << seconds);
  std::printf("chaos: seed %llu, %llu s (%d steps of %lld ms)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seconds),
              steps, static_cast<long long>(kStep.count()));
  std::fflush(stdout);

  ChaosRun run(static_cast<uint32_t>(seed));
  run.Start();
  const auto began = Clock::now();
  for (int step = 0; step < steps; ++step) run.Step(step);
  const double ran = std::chrono::duration<double>(Clock::now() - began).count();
  const std::vector<std::string> ledger = run.Ledger();
  INFO("plan: " << run.events());

  const auto settling = Clock::now();
  const bool converged = run.Settle();
  const double settled = std::chrono::duration<double>(Clock::now() - settling).count();
  INFO(run.State());
  CHECK(converged);
  const bool all = run.Verify(ledger);

  const auto& nodes = run.nodes();
  const auto& links = run.links();
  std::printf("chaos: ran %.1f s, settled in %.1f s%s\n", ran, settled,
              converged ? "" : " (DID NOT CONVERGE)");
  std::printf("chaos: kills a %d, b %d, c %d; link cuts b->a %d, c->b %d\n", nodes[0].kills,
              nodes[1].kills, nodes[2].kills, links[0].cuts, links[1].cuts);
  std::printf(
      "chaos: writes %zu attempted (%zu of them to contended keys), %zu list inserts confirmed "
      "durable during the run (ledger); every insert on every node once, and each contended key "
      "one written value everywhere: %s\n",
      run.attempted(), run.contended(), ledger.size(), all ? "yes" : "NO");
  std::printf("chaos: lines logged at warn and above: a %d, b %d, c %d\n", nodes[0].warnings,
              nodes[1].warnings, nodes[2].warnings);
  std::printf("chaos: plan: %s\n", run.events().c_str());
}

}  // namespace
}  // namespace aweft::node::testing

#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "node/client.h"
#include "sync/asio_scheduler.h"
#include "sync/snapshot.h"
#include "tests/node/node_process.h"

// Writers racing on one document through real node processes on loopback:
// the convergence tests' harness (tests/node/node_converge_test.cc) and
// benchmarks/converge_bench.cc's. A setup step that fails throws.
namespace aweft::node::testing {

inline void Require(bool ok) {
  if (!ok) throw std::runtime_error("a race's setup step failed");
}
template <class T>
void Require(const T& result) {
  Require(static_cast<bool>(result));
}

const char* const kKeys[] = {"k0", "k1", "k2", "k3"};

struct Race {
  using Document = sync::Document;
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler{io.get_executor()};
  std::vector<std::unique_ptr<NodeProcess>> nodes;  // nodes[0] is the root.
  std::vector<std::unique_ptr<aweft::Client>> clients;
  std::vector<std::unique_ptr<testing::Client>> bare;
  std::vector<Document*> docs;  // Every writer's document.
  Document first{codec::Kind::kObject};

  // A chain of `count` nodes: node i dials node i-1.
  void Chain(int count) {
    for (int i = 0; i < count; ++i) {
      std::vector<std::string> extra;
      if (i > 0) extra = {"--upstream", nodes.back()->url()};
      nodes.push_back(std::make_unique<NodeProcess>(dir.path() + "/n" + std::to_string(i), extra));
      nodes.back()->Start();
    }
  }

  // The document, made by an aweft::Client on the root node.
  void Create() {
    for (const char* key : kKeys) Require(first.Set(first.root(), key, 0.0));
    aweft::Client::Options options;
    options.url = nodes[0]->url();
    clients.push_back(std::make_unique<aweft::Client>(io.get_executor(), options));
    Require(clients.back()->Share("race", first));
    // The node has answered the open: it holds the document.
    Require(RunUntil(io, [&] { return clients.back()->stats().link.frames_in > 0; }));
    docs.push_back(&first);
  }

  // One more aweft::Client, on `node`, opening the document there.
  void Open(size_t node) {
    aweft::Client::Options options;
    options.url = nodes[node]->url();
    clients.push_back(std::make_unique<aweft::Client>(io.get_executor(), options));
    Document* opened = nullptr;
    clients.back()->Open("race", [&](Document& d) { opened = &d; });
    Require(RunUntil(
        io, [&] { return opened != nullptr; }, std::chrono::seconds(10)));
    docs.push_back(opened);
  }

  // A bare link end on `node`: shares none and takes the node's state.
  void OpenBare(size_t node) {
    bare.push_back(std::make_unique<testing::Client>(io, scheduler, nodes[node]->url()));
    auto shared = bare.back()->link->Share("race", nullptr);
    Require(shared);
    Require(RunUntil(
        io, [&] { return (*shared)->ready(); }, std::chrono::seconds(10)));
    docs.push_back((*shared)->document());
  }

  // Every writer writes `rounds` times, with pauses of 0 to 2 ms: the four
  // shared keys in random order, or with `contended` false a key of its own
  // ("own" and its number), which races with nothing. Returns when the last
  // write is made.
  void Hammer(int rounds, uint64_t seed, bool contended = true) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < rounds; ++i) {
      for (size_t w = 0; w < docs.size(); ++w) {
        Document& doc = *docs[w];
        const std::string key = contended ? kKeys[rng() % 4] : "own" + std::to_string(w);
        Require(doc.Set(doc.root(), key, "w" + std::to_string(w) + "-" + std::to_string(i)));
      }
      io.restart();
      io.run_for(std::chrono::microseconds(rng() % 2000));
    }
  }

  // Each writer's four keys, for a failure.
  std::string Describe() {
    std::string out;
    for (size_t w = 0; w < docs.size(); ++w) {
      out += "writer " + std::to_string(w) + ":";
      for (const char* key : kKeys) {
        const codec::Value* value = docs[w]->root().Get(key);
        const auto* text = value ? std::get_if<std::string>(value) : nullptr;
        out += std::string(" ") + key + "=" + (text ? *text : value ? "?" : "-");
      }
      out += "\n";
    }
    return out;
  }

  bool AllEqual() {
    const sync::Snapshot root = sync::TakeSnapshot(*docs[0]);
    for (Document* doc : docs) {
      if (!(sync::TakeSnapshot(*doc) == root)) return false;
    }
    return true;
  }

  // What a client joining `node` fresh is given.
  sync::Snapshot Fresh(size_t node) {
    testing::Client reader(io, scheduler, nodes[node]->url());
    auto shared = reader.link->Share("race", nullptr);
    Require(shared);
    Require(RunUntil(io, [&] { return (*shared)->ready(); }));
    return sync::TakeSnapshot(*(*shared)->document());
  }
};

}  // namespace aweft::node::testing

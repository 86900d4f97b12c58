// What one order costs (docs/sync.md "One order"), against real aweft-node
// processes on loopback: one node, and a chain of three. Four writers (on the
// root a bare protocol-v1 end; on the last node an aweft::Client and a bare
// end; and the aweft::Client that made the document, on the root) write in
// trials of R rounds, one write each per round with pauses of 0 to 2 ms,
// either to keys of their own (racing with nothing) or to four shared keys
// (racing all the time). After each trial: the time from the last write until
// every writer holds one state. Over all trials: the nodes' CPU per commit
// written, frames each writer received per commit, and the checks and
// corrections the nodes made. Then, writing alone: the time from one write
// of the aweft::Client on the last node until it is confirmed durable, which
// on a chain waits for the root (docs/node.md "Durable means kept by the
// document's order").
//
// Run: build/benchmarks/converge_bench [--trials N] [--rounds R]

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "benchmarks/cpu_ticks.h"
#include "tests/node/race.h"

namespace {

using aweft::bench::CpuTicks;
using aweft::node::testing::Race;
using aweft::node::testing::Require;
using Clock = std::chrono::steady_clock;

// The value of one series in a node's /metrics (0 when absent).
double Metric(const std::string& admin_url, const std::string& series) {
  const std::string body = aweft::admin::HttpRequest(admin_url, "GET", "/metrics").body;
  const size_t at = body.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::strtod(body.c_str() + at + series.size() + 2, nullptr);
}

struct Totals {
  uint64_t ticks = 0, frames = 0;
  double checks = 0, corrections = 0;
};

Totals Measure(Race& race) {
  Totals t;
  for (const auto& node : race.nodes) {
    t.ticks += CpuTicks(node->pid());
    t.checks += Metric(node->admin_url(), "aweft_divergence_checks_total");
    t.corrections += Metric(node->admin_url(), "aweft_divergence_healed_total{by=\"correction\"}") +
                     Metric(node->admin_url(), "aweft_divergence_healed_total{by=\"replica\"}");
  }
  for (const auto& client : race.clients) t.frames += client->stats().link.frames_in;
  for (const auto& end : race.bare) t.frames += end->link->stats().frames_in;
  return t;
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

// Times `writes` writes of the last aweft::Client, one at a time, each until
// it is confirmed durable; milliseconds.
std::vector<double> Confirmations(Race& race, int writes) {
  aweft::Client& client = *race.clients.back();
  // main() opens the last node's aweft::Client, then its bare end.
  aweft::sync::Document& doc = *race.docs[race.docs.size() - 2];
  std::vector<double> ms;
  for (int i = 0; i < writes; ++i) {
    Require(doc.Set(doc.root(), "alone", static_cast<double>(i)));
    const auto start = Clock::now();
    while (client.unconfirmed("race") != 0 && Clock::now() - start < std::chrono::seconds(10)) {
      race.io.restart();
      race.io.run_one_for(std::chrono::milliseconds(1));
    }
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 200, rounds = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--trials") trials = std::atoi(argv[i + 1]);
    if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  const double tick_us = 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::printf("%d trials of %d rounds; 4 writers, one of them bare on each end of the chain\n\n",
              trials, rounds);
  std::printf(
      "| nodes | writes | commits | node CPU per commit | frames the writers received per commit | "
      "checks | corrections | one state after the last write, p50 / p99 / max |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  std::vector<std::vector<double>> confirmed;  // Per chain length.
  for (int nodes : {1, 3}) {
    Race race;
    race.Chain(nodes);
    race.Create();
    race.OpenBare(0);
    race.Open(nodes - 1);
    race.OpenBare(nodes - 1);
    for (const bool contended : {false, true}) {
      const Totals before = Measure(race);
      std::vector<double> ms;
      for (int t = 0; t < trials; ++t) {
        race.Hammer(rounds, 1000 * nodes + t, contended);
        const auto last = Clock::now();
        while (!race.AllEqual() && Clock::now() - last < std::chrono::seconds(10)) {
          race.io.restart();
          race.io.run_one_for(std::chrono::milliseconds(1));
        }
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - last).count());
        if (!race.AllEqual()) std::printf("trial %d: NOT one state after 10 s\n", t);
      }
      const Totals after = Measure(race);
      const double commits = static_cast<double>(trials) * rounds * race.docs.size();
      std::printf("| %d | %s | %.0f | %.1f us | %.2f | %.0f | %.0f | %.1f / %.1f / %.1f ms |\n",
                  nodes, contended ? "4 shared keys" : "own keys", commits,
                  static_cast<double>(after.ticks - before.ticks) * tick_us / commits,
                  static_cast<double>(after.frames - before.frames) / commits,
                  after.checks - before.checks, after.corrections - before.corrections,
                  Percentile(ms, 0.5), Percentile(ms, 0.99), Percentile(ms, 1.0));
      std::fflush(stdout);
    }
    confirmed.push_back(Confirmations(race, trials));
  }
  std::printf(
      "\n| nodes | writes, one at a time, by the aweft::Client on the last node | confirmed "
      "durable after, p50 / p99 / max |\n|---|---|---|\n");
  for (size_t i = 0; i < confirmed.size(); ++i) {
    std::printf("| %d | %d | %.1f / %.1f / %.1f ms |\n", i == 0 ? 1 : 3, trials,
                Percentile(confirmed[i], 0.5), Percentile(confirmed[i], 0.99),
                Percentile(confirmed[i], 1.0));
  }
}

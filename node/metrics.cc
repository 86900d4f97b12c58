// The node's metrics (docs/admin.md "Metrics"): each family, named and
// described once.

#include <rocksdb/version.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/version.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "node/admin_source.h"
#include "node/node.h"

namespace aweft::node {
namespace {

// Store write latency buckets: 100 µs .. 2.5 s.
const std::vector<double> kSyncSeconds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                       0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
// Commits per sync: 1 .. 4096.
const std::vector<double> kSyncCommits{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};

}  // namespace

NodeMetrics::NodeMetrics(admin::Metrics& m)
    : commits(m.Counter("aweft_commits_total", "Commits received (in) and sent (out) over links.",
                        {"direction"})),
      frames(m.Counter("aweft_frames_total", "Link frames received (in) and sent (out).",
                       {"direction"})),
      bytes(m.Counter("aweft_bytes_total",
                      "WebSocket message bytes received (in) and written (out) on links.",
                      {"direction"})),
      refusals(m.Counter("aweft_refusals_total",
                         "Reasons commits were refused: by this node (origin=local) or by the "
                         "other end of a link (origin=remote).",
                         {"reason", "origin"})),
      checks(m.Counter("aweft_divergence_checks_total",
                       "Times this node asked a link's other end for its state, after a commit "
                       "that may have crossed one of this node's on the same slot, or a refusal.")),
      healed(m.Counter("aweft_divergence_healed_total",
                       "Divergences found and healed: a check found the other end's state "
                       "differed and sent the commit that moves it here (by=\"correction\": "
                       "a client or a node below; by=\"replica\": a shard's replica).",
                       {"by"})),
      faults(m.Counter("aweft_faults_total",
                       "Topics or connections ended with a reason: by this node (origin=local) "
                       "or told by the other end or the channel (origin=remote).",
                       {"reason", "origin"})),
      ended(m.Counter("aweft_topics_ended_total",
                      "Topics ended in the ordinary way: their connection closed (closed) or "
                      "the other end left them (left). Not faults.",
                      {"reason"})),
      connections(m.Counter("aweft_connections_total", "WebSocket connections accepted.")),
      shed(m.Counter("aweft_connections_shed_total",
                     "Connections closed unserved as they were accepted: with "
                     "limits.max_connections open (cause=max_connections), or the process out "
                     "of file descriptors (cause=descriptors).",
                     {"cause"})),
      links(
          m.Gauge("aweft_links_open", "Links open now, by kind (client or peer node).", {"kind"})),
      peers(m.Gauge("aweft_peers",
                    "The other peers of this node's cluster by state: linked (taking their "
                    "place as home), catching-up (linked, not yet home), down.",
                    {"state"})),
      behind(m.Gauge("aweft_documents_behind",
                     "Documents this node keeps as a replica that it is still bringing up to "
                     "its home's state (waiting and under way).")),
      caught_up(m.Counter("aweft_catch_up_documents_total",
                          "Documents this node brought up to their home's state as a replica "
                          "since it started, with no client asking.")),
      loaded(m.Gauge("aweft_documents_loaded", "Documents loaded in memory now.")),
      stored(m.Gauge("aweft_documents_stored", "Documents in the store.")),
      stalled(m.Gauge("aweft_storage_stalled",
                      "1 while the disk fails writes and they are retried, else 0.")),
      held(m.Gauge("aweft_connections_held_bytes",
                   "Bytes all connections hold now: messages partly read, and messages waiting "
                   "to be sent (limits.memory_bytes bounds it).")),
      sync_seconds(m.Histogram("aweft_store_sync_duration_seconds",
                               "Time to write and sync one batch of commits (group commit), "
                               "snapshots it triggers included.",
                               kSyncSeconds)),
      sync_commits(m.Histogram("aweft_store_sync_batch_commits",
                               "Commits written by one sync (the group-commit batch size).",
                               kSyncCommits)),
      forward(m.Histogram("aweft_forward_delay_seconds",
                          "Commit-to-forward latency: from a link queuing frames that carry "
                          "commits not yet stored to their being sent on, once stored.",
                          kSyncSeconds)),
      store_commits(m.Counter("aweft_store_commits_written_total",
                              "Commits written to the store since the node started.")),
      store_syncs(m.Counter("aweft_store_batches_written_total",
                            "Batches of commits written (one fsync each in sync mode).")),
      snapshots(m.Counter("aweft_store_snapshots_total",
                          "Snapshots written since the node started (by count, size or asked).")),
      replicas(m.Gauge("aweft_replicas",
                       "Documents replicated on shard threads now (--threads above 1), "
                       "one per document per shard.")),
      rocksdb(m.Gauge("aweft_rocksdb_live_sst_bytes", "RocksDB: size of the live SST files.")),
      rocksdb_memtable(m.Gauge("aweft_rocksdb_memtable_bytes", "RocksDB: size of all memtables.")),
      rocksdb_keys(m.Gauge("aweft_rocksdb_estimated_keys", "RocksDB: estimated number of keys.")),
      rocksdb_pending_compaction(m.Gauge("aweft_rocksdb_pending_compaction_bytes",
                                         "RocksDB: estimated bytes compaction must rewrite.")),
      rocksdb_compactions(
          m.Gauge("aweft_rocksdb_running_compactions", "RocksDB: compactions running now.")),
      rocksdb_flushes(m.Gauge("aweft_rocksdb_running_flushes", "RocksDB: flushes running now.")),
      rocksdb_level0(m.Gauge("aweft_rocksdb_level0_files",
                             "RocksDB: SST files at level 0 (many stall writes).")),
      rocksdb_errors(m.Gauge("aweft_rocksdb_background_errors",
                             "RocksDB: background errors since it opened.")),
      rocksdb_readers(m.Gauge("aweft_rocksdb_table_readers_bytes",
                              "RocksDB: memory held by table readers (indexes, filters).")),
      info(m.Gauge("aweft_node_info", "Always 1; the labels name the node and its version.",
                   {"node", "version"})),
      build(m.Gauge("aweft_build_info",
                    "Always 1; the labels name the build: aweft's version, the compiler, "
                    "RocksDB's and Boost's versions.",
                    {"version", "compiler", "rocksdb", "boost"})),
      uptime(m.Gauge("aweft_uptime_seconds", "Seconds since the node started.")),
      cpu(m.Counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.")),
      resident(m.Gauge("process_resident_memory_bytes", "Resident memory size in bytes.")),
      open_fds(m.Gauge("process_open_fds", "Number of open file descriptors.")),
      max_fds(m.Gauge("process_max_fds", "Maximum number of open file descriptors.")),
      start_time(m.Gauge("process_start_time_seconds",
                         "Start time of the process since the Unix epoch, in seconds.")),
      started_unix(
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count()) {
  build.Set(1, {AWEFT_VERSION, __VERSION__,
                std::to_string(ROCKSDB_MAJOR) + "." + std::to_string(ROCKSDB_MINOR) + "." +
                    std::to_string(ROCKSDB_PATCH),
                std::to_string(BOOST_VERSION / 100000) + "." +
                    std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                    std::to_string(BOOST_VERSION % 100)});
}

void NodeAdmin::CollectMetrics() {
  NodeMetrics& m = node_.meters();
  m.CollectProcess();
  sync::Link::Stats link = m.retired_link;
  sync::TextChannel::Traffic traffic = m.retired_traffic;
  uint64_t clients = 0, peers = 0;
  node_.ForEachConnection([&](const Loop::Connection& c) {
    if (!c.link) return;
    link += c.link->stats();
    AddTraffic(traffic, c.channel->traffic());
    ++(c.peer ? peers : clients);
  });
  for (const auto& upstream : node_.upstreams().links()) {
    const Client::Stats stats = upstream->client->stats();
    link += stats.link;
    AddTraffic(traffic, stats.traffic);
    if (upstream->client->connected()) ++peers;
  }
  m.commits.Set(static_cast<double>(link.commits_in), {"in"});
  m.commits.Set(static_cast<double>(link.commits_out), {"out"});
  const sync::Link::Stats replicas = node_.replica_links();
  m.checks.Set(static_cast<double>(link.checks + replicas.checks));
  m.healed.Set(static_cast<double>(link.corrections), {"correction"});
  m.healed.Set(static_cast<double>(replicas.corrections), {"replica"});
  m.frames.Set(static_cast<double>(link.frames_in), {"in"});
  m.frames.Set(static_cast<double>(link.frames_out), {"out"});
  m.bytes.Set(static_cast<double>(traffic.bytes_in), {"in"});
  m.bytes.Set(static_cast<double>(traffic.bytes_out), {"out"});
  m.links.Set(static_cast<double>(clients), {"client"});
  m.links.Set(static_cast<double>(peers), {"peer"});
  double linked = 0, catching_up = 0, down = 0;
  for (const auto& peer : node_.upstreams().links()) {
    if (!peer->peer || peer->self) continue;
    ++(!peer->client->connected() ? down : peer->home ? linked : catching_up);
  }
  if (!node_.config().peers.empty()) {
    m.peers.Set(linked, {"linked"});
    m.peers.Set(catching_up, {"catching-up"});
    m.peers.Set(down, {"down"});
  }
  m.behind.Set(static_cast<double>(node_.catch_up().behind()));
  m.caught_up.Set(static_cast<double>(node_.catch_up().caught_up()));
  m.loaded.Set(static_cast<double>(node_.hub().loaded().size()));
  m.replicas.Set(static_cast<double>(node_.replicas()));
  m.stored.Set(static_cast<double>(node_.store().List().size()));
  m.stalled.Set(node_.hub().Unavailable() ? 1 : 0);
  m.held.Set(static_cast<double>(node_.budget().used()));

  const storage::StoreStats store = node_.store().Stats(/*with_rocksdb=*/true);
  m.store_commits.Set(static_cast<double>(store.commits_written));
  m.store_syncs.Set(static_cast<double>(store.batches_written));
  m.snapshots.Set(static_cast<double>(store.snapshots_written));
  m.rocksdb.Set(static_cast<double>(store.live_sst_bytes));
  m.rocksdb_memtable.Set(static_cast<double>(store.memtable_bytes));
  m.rocksdb_keys.Set(static_cast<double>(store.estimated_keys));
  m.rocksdb_pending_compaction.Set(static_cast<double>(store.pending_compaction_bytes));
  m.rocksdb_compactions.Set(static_cast<double>(store.running_compactions));
  m.rocksdb_flushes.Set(static_cast<double>(store.running_flushes));
  m.rocksdb_level0.Set(static_cast<double>(store.level0_files));
  m.rocksdb_errors.Set(static_cast<double>(store.background_errors));
  m.rocksdb_readers.Set(static_cast<double>(store.table_readers_bytes));
  m.info.Set(1, {node_.config().node_id, AWEFT_VERSION});
  m.uptime.Set(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - node_.started()).count());
}

void NodeMetrics::TopicEnded(const std::string& reason, const std::string& origin) {
  if (reason == codec::Spelled(codec::Reason::kClosed) ||
      reason == codec::Spelled(codec::Reason::kLeft)) {
    ended.Add(1, {reason});
  } else {
    faults.Add(1, {reason, origin});
  }
}

void NodeMetrics::CollectProcess() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    cpu.Set(seconds(usage.ru_utime) + seconds(usage.ru_stime));
  }
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, pages = 0;
  if (statm >> size >> pages) {
    resident.Set(static_cast<double>(pages) * static_cast<double>(sysconf(_SC_PAGESIZE)));
  }
  std::error_code ec;
  uint64_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++fds;
  }
  if (fds > 0) open_fds.Set(static_cast<double>(fds - 1));  // Less the one listing them.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) max_fds.Set(static_cast<double>(limit.rlim_cur));
  start_time.Set(started_unix);
}

}  // namespace aweft::node

#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "admin/metrics.h"
#include "admin/source.h"
#include "codec/result.h"
#include "sync/channel.h"
#include "sync/link.h"
#include "sync/snapshot.h"

namespace aweft::node {

class Node;

// The node's metric families (docs/admin.md lists each). Counters of events
// are added to where they happen; the rest is brought up to date by
// NodeAdmin::CollectMetrics() at each scrape.
struct NodeMetrics {
  explicit NodeMetrics(admin::Metrics& registry);

  admin::Family& commits;        // aweft_commits_total{direction}
  admin::Family& frames;         // aweft_frames_total{direction}
  admin::Family& bytes;          // aweft_bytes_total{direction}
  admin::Family& refusals;       // aweft_refusals_total{reason,origin}
  admin::Family& checks;         // aweft_divergence_checks_total
  admin::Family& healed;         // aweft_divergence_healed_total{by}
  admin::Family& faults;         // aweft_faults_total{reason,origin}
  admin::Family& ended;          // aweft_topics_ended_total{reason}: closed, left
  admin::Family& connections;    // aweft_connections_total
  admin::Family& shed;           // aweft_connections_shed_total{cause}
  admin::Family& links;          // aweft_links_open{kind}
  admin::Family& peers;          // aweft_peers{state}
  admin::Family& behind;         // aweft_documents_behind
  admin::Family& caught_up;      // aweft_catch_up_documents_total
  admin::Family& loaded;         // aweft_documents_loaded
  admin::Family& stored;         // aweft_documents_stored
  admin::Family& stalled;        // aweft_storage_stalled
  admin::Family& held;           // aweft_connections_held_bytes
  admin::Family& sync_seconds;   // aweft_store_sync_duration_seconds
  admin::Family& sync_commits;   // aweft_store_sync_batch_commits
  admin::Family& forward;        // aweft_forward_delay_seconds
  admin::Family& store_commits;  // aweft_store_commits_written_total
  admin::Family& store_syncs;    // aweft_store_batches_written_total
  admin::Family& snapshots;      // aweft_store_snapshots_total
  admin::Family& replicas;       // aweft_replicas
  admin::Family& rocksdb;        // aweft_rocksdb_*: one family per figure, below
  admin::Family& rocksdb_memtable;
  admin::Family& rocksdb_keys;
  admin::Family& rocksdb_pending_compaction;
  admin::Family& rocksdb_compactions;
  admin::Family& rocksdb_flushes;
  admin::Family& rocksdb_level0;
  admin::Family& rocksdb_errors;
  admin::Family& rocksdb_readers;
  admin::Family& info;    // aweft_node_info{node,version}
  admin::Family& build;   // aweft_build_info{version,compiler,rocksdb,boost}
  admin::Family& uptime;  // aweft_uptime_seconds
  // The process's, under Prometheus' standard names: process_cpu_seconds_total,
  // process_resident_memory_bytes, process_open_fds, process_max_fds,
  // process_start_time_seconds. Set by CollectProcess().
  admin::Family& cpu;
  admin::Family& resident;
  admin::Family& open_fds;
  admin::Family& max_fds;
  admin::Family& start_time;
  const double started_unix;  // When the metrics were made: the process's start, near enough.

  // A topic the other end or the channel ended for `reason`: closed (its
  // connection ended) and left are churn, counted in `ended`; any other
  // reason is a fault, from `origin`.
  void TopicEnded(const std::string& reason, const std::string& origin);
  // Brings the process_* figures up to date (Linux: getrusage, /proc/self).
  void CollectProcess();

  // Link counters of connections that have ended, so the totals only grow.
  sync::Link::Stats retired_link;
  sync::TextChannel::Traffic retired_traffic;
};

// The admin endpoint's view of a Node (admin::Source): every answer is
// built on the node's loop, from its store, connections and upstreams.
class NodeAdmin : public admin::Source {
 public:
  // `node` must outlive it.
  explicit NodeAdmin(Node& node) : node_(node) {}

  std::vector<admin::Check> Readiness() override;
  boost::json::object NodeInfo() override;
  boost::json::object Documents(const admin::DocumentQuery& query) override;
  admin::Later State(std::string_view name, std::optional<uint64_t> at) override;
  admin::Later Commits(std::string_view name, uint64_t since, size_t limit) override;
  admin::Later Export(std::string_view name) override;
  admin::Answer Import(std::string_view name, const boost::json::value& exported) override;
  admin::Answer Snapshot(std::string_view name) override;
  admin::Answer Remove(std::string_view name) override;
  std::optional<codec::Refusal> CheckName(std::string_view name) override;
  boost::json::object Links() override;
  boost::json::object Cluster() override;
  void CollectMetrics() override;

 private:
  boost::json::array LinksOf(std::string_view name);
  codec::Result<sync::Snapshot> StateOf(std::string_view name, uint64_t seq, bool now);
  boost::json::object Config() const;

  Node& node_;
};

// Adds `more` to `total`, field by field.
void AddTraffic(sync::TextChannel::Traffic& total, const sync::TextChannel::Traffic& more);

// Counts each reason of `refused` in aweft_refusals_total: origin `local`
// when this end refused, `remote` when the other end refused its commit;
// and says each in a debug line, with the document and the other end.
void CountRefused(NodeMetrics& meters, std::string_view name, std::string_view peer,
                  const sync::Refused& refused);

}  // namespace aweft::node

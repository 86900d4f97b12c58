#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// A small metrics registry rendered in the Prometheus text exposition format
// (version 0.0.4). The node updates it; GET /metrics renders it.
namespace aweft::admin {

// Label values, in the order of the family's label names.
using Labels = std::vector<std::string>;

// One metric family: a name, a type, label names, and one series per set of
// label values. Updates and reads are thread-safe (the node's shard threads
// count too); declaring families is not (at start-up only).
class Family {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  // Counters: adds `by` (never negative). Gauges: adds any amount.
  void Add(double by, const Labels& labels = {});
  // Gauges, and counters mirrored from a source that only grows.
  void Set(double value, const Labels& labels = {});
  // Histograms: counts `value` in every bucket whose bound it does not pass.
  void Observe(double value, const Labels& labels = {});
  // Forgets every series (for gauges recomputed at each scrape).
  void Clear() {
    std::lock_guard lock(mutex_);
    series_.clear();
  }

  // Counters and gauges: the value (0 for a series never touched).
  // Histograms: how many values were observed.
  double Value(const Labels& labels = {}) const;

  const std::string& name() const { return name_; }
  Type type() const { return type_; }

  // Use Metrics::Counter, Gauge or Histogram rather than this.
  Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
         std::vector<double> bounds);

 private:
  friend class Metrics;
  struct Series {
    double value = 0;               // Counters and gauges.
    std::vector<uint64_t> buckets;  // Histograms: per bound, not cumulative.
    double sum = 0;
    uint64_t count = 0;
  };
  Series& At(const Labels& labels);
  void Render(std::string& out) const;

  std::string name_, help_;
  Type type_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;  // Histograms: upper bounds, ascending.
  mutable std::mutex mutex_;    // Guards series_.
  std::map<Labels, Series> series_;
};

// The registry. Families render in name order; a family without labels
// renders its one series even before it is touched (as 0).
class Metrics {
 public:
  // Declares a family, or returns the one declared under `name` already. A
  // counter's name ends in _total (Prometheus convention).
  // REQUIRES: the same type, labels and bounds as any earlier declaration.
  Family& Counter(const std::string& name, const std::string& help,
                  std::vector<std::string> label_names = {});
  Family& Gauge(const std::string& name, const std::string& help,
                std::vector<std::string> label_names = {});
  // `bounds`: the buckets' upper bounds, ascending; +Inf is added.
  Family& Histogram(const std::string& name, const std::string& help, std::vector<double> bounds,
                    std::vector<std::string> label_names = {});

  // The text exposition format, one family after another.
  std::string Render() const;

 private:
  Family& Declare(const std::string& name, const std::string& help, Family::Type type,
                  std::vector<std::string> label_names, std::vector<double> bounds);

  std::map<std::string, std::unique_ptr<Family>> families_;
};

// A number as the exposition format writes it: shortest round-trip form,
// "+Inf", "-Inf" or "NaN".
std::string FormatNumber(double value);

}  // namespace aweft::admin

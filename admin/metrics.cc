#include "admin/metrics.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace aweft::admin {
namespace {

// Label values escape backslash, double quote and newline; HELP text escapes
// backslash and newline (exposition format 0.0.4).
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out.push_back(c);
  }
  return out;
}

std::string LabelText(const std::vector<std::string>& names, const Labels& values,
                      const std::string& extra = {}) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (out.empty() ? "" : ",") + names[i] + "=\"" + Escape(values[i], true) + "\"";
  }
  if (!extra.empty()) out += (out.empty() ? "" : ",") + extra;
  return out.empty() ? "" : "{" + out + "}";
}

std::string_view TypeName(Family::Type type) {
  switch (type) {
    case Family::Type::kCounter:
      return "counter";
    case Family::Type::kGauge:
      return "gauge";
    case Family::Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string FormatNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

Family::Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
               std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      bounds_(std::move(bounds)) {}

Family::Series& Family::At(const Labels& labels) {
  assert(labels.size() == label_names_.size());
  Series& series = series_[labels];
  if (type_ == Type::kHistogram && series.buckets.empty()) series.buckets.resize(bounds_.size());
  return series;
}

void Family::Add(double by, const Labels& labels) {
  assert(type_ != Type::kHistogram && (type_ == Type::kGauge || by >= 0));
  std::lock_guard lock(mutex_);
  At(labels).value += by;
}

void Family::Set(double value, const Labels& labels) {
  assert(type_ != Type::kHistogram);
  std::lock_guard lock(mutex_);
  At(labels).value = value;
}

void Family::Observe(double value, const Labels& labels) {
  assert(type_ == Type::kHistogram);
  std::lock_guard lock(mutex_);
  Series& series = At(labels);
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      ++series.buckets[i];
      break;
    }
  }
  series.sum += value;
  ++series.count;
}

double Family::Value(const Labels& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  if (it == series_.end()) return 0;
  return type_ == Type::kHistogram ? static_cast<double>(it->second.count) : it->second.value;
}

void Family::Render(std::string& out) const {
  out += "# HELP " + name_ + " " + Escape(help_, false) + "\n";
  out += "# TYPE " + name_ + " " + std::string(TypeName(type_)) + "\n";
  std::map<Labels, Series> series;
  {
    std::lock_guard lock(mutex_);
    series = series_;
  }
  if (label_names_.empty() && series.empty()) {
    series[{}].buckets.resize(type_ == Type::kHistogram ? bounds_.size() : 0);
  }
  for (const auto& [labels, one] : series) {
    if (type_ != Type::kHistogram) {
      out += name_ + LabelText(label_names_, labels) + " " + FormatNumber(one.value) + "\n";
      continue;
    }
    // Buckets are cumulative on the wire: each counts every value at or
    // below its bound.
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += one.buckets[i];
      out += name_ + "_bucket" +
             LabelText(label_names_, labels, "le=\"" + FormatNumber(bounds_[i]) + "\"") + " " +
             std::to_string(cumulative) + "\n";
    }
    out += name_ + "_bucket" + LabelText(label_names_, labels, "le=\"+Inf\"") + " " +
           std::to_string(one.count) + "\n";
    out += name_ + "_sum" + LabelText(label_names_, labels) + " " + FormatNumber(one.sum) + "\n";
    out +=
        name_ + "_count" + LabelText(label_names_, labels) + " " + std::to_string(one.count) + "\n";
  }
}

Family& Metrics::Declare(const std::string& name, const std::string& help, Family::Type type,
                         std::vector<std::string> label_names, std::vector<double> bounds) {
  auto it = families_.find(name);
  if (it != families_.end()) {
    assert(it->second->type_ == type && it->second->label_names_ == label_names);
    return *it->second;
  }
  auto family =
      std::make_unique<Family>(name, help, type, std::move(label_names), std::move(bounds));
  return *families_.emplace(name, std::move(family)).first->second;
}

Family& Metrics::Counter(const std::string& name, const std::string& help,
                         std::vector<std::string> label_names) {
  assert(name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0);
  return Declare(name, help, Family::Type::kCounter, std::move(label_names), {});
}

Family& Metrics::Gauge(const std::string& name, const std::string& help,
                       std::vector<std::string> label_names) {
  return Declare(name, help, Family::Type::kGauge, std::move(label_names), {});
}

Family& Metrics::Histogram(const std::string& name, const std::string& help,
                           std::vector<double> bounds, std::vector<std::string> label_names) {
  return Declare(name, help, Family::Type::kHistogram, std::move(label_names), std::move(bounds));
}

std::string Metrics::Render() const {
  std::string out;
  for (const auto& [name, family] : families_) family->Render(out);
  return out;
}

}  // namespace aweft::admin

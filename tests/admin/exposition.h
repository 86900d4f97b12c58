#pragma once

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

// A small checker for the Prometheus text exposition format (0.0.4): every
// line is a HELP, a TYPE or a sample of a family typed before it; counters
// end in _total; histogram buckets are cumulative and end at +Inf == count.
namespace aweft::admin::testing {

struct Sample {
  std::string name;    // With its _bucket/_sum/_count suffix, if any.
  std::string labels;  // The text between the braces, or empty.
  double value = 0;
};

// Every problem found, one line each; empty when the text is valid.
inline std::vector<std::string> ExpositionProblems(const std::string& text,
                                                   std::vector<Sample>* samples = nullptr) {
  static const std::regex kHelp(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex kType(
      R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex kSample(
      R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (NaN|[+-]Inf|[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(?: -?[0-9]+)?)re");
  std::vector<std::string> problems;
  if (!text.empty() && text.back() != '\n')
    problems.push_back("the text does not end in a newline");
  std::map<std::string, std::string> types;
  std::map<std::string, double> last_bucket;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::smatch match;
    const std::string at = "line " + std::to_string(number) + ": ";
    if (std::regex_match(line, match, kType)) {
      if (types.count(match[1]))
        problems.push_back(at + "a second TYPE for " + std::string(match[1]));
      types[match[1]] = match[2];
      if (match[2] == "counter" && !std::string(match[1]).ends_with("_total")) {
        problems.push_back(at + "counter " + std::string(match[1]) + " does not end in _total");
      }
      continue;
    }
    if (std::regex_match(line, kHelp)) continue;
    if (!std::regex_match(line, match, kSample)) {
      problems.push_back(at + "not valid exposition format: " + line);
      continue;
    }
    std::string name = match[1], family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (name.ends_with(s) && types.count(name.substr(0, name.size() - s.size())) &&
          types[name.substr(0, name.size() - s.size())] == "histogram") {
        family = name.substr(0, name.size() - s.size());
      }
    }
    if (!types.count(family)) problems.push_back(at + name + " has no TYPE line before it");
    const double value = std::stod(match[4] == "+Inf" ? "inf" : std::string(match[4]));
    if (samples) samples->push_back({name, match[3], value});
    if (name == family + "_bucket") {
      std::string labels = match[3];
      const std::string series =
          family + std::regex_replace(labels, std::regex(R"(,?le="[^"]*")"), "");
      if (last_bucket.count(series) && value < last_bucket[series]) {
        problems.push_back(at + "bucket counts of " + series + " are not cumulative");
      }
      last_bucket[series] = value;
    }
  }
  return problems;
}

// The value of the sample `name{labels}` (labels as rendered), or -1.
inline double SampleValue(const std::vector<Sample>& samples, const std::string& name,
                          const std::string& labels = "") {
  for (const auto& sample : samples) {
    if (sample.name == name && sample.labels == labels) return sample.value;
  }
  return -1;
}

}  // namespace aweft::admin::testing

#include "admin/metrics.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/admin/exposition.h"

namespace aweft::admin {
namespace {

TEST_CASE("counters and gauges render with their HELP, TYPE and labels", "[admin][metrics]") {
  Metrics metrics;
  Family& commits = metrics.Counter("aweft_commits_total", "Commits.", {"direction"});
  Family& loaded = metrics.Gauge("aweft_documents_loaded", "Loaded now.");
  commits.Add(3, {"in"});
  commits.Add(2, {"in"});
  commits.Add(1, {"out"});
  loaded.Set(7);
  loaded.Add(-2);
  CHECK(commits.Value({"in"}) == 5);
  CHECK(metrics.Render() ==
        "# HELP aweft_commits_total Commits.\n"
        "# TYPE aweft_commits_total counter\n"
        "aweft_commits_total{direction=\"in\"} 5\n"
        "aweft_commits_total{direction=\"out\"} 1\n"
        "# HELP aweft_documents_loaded Loaded now.\n"
        "# TYPE aweft_documents_loaded gauge\n"
        "aweft_documents_loaded 5\n");
}

TEST_CASE("a family without labels shows 0 before it is touched, and a labelled one shows nothing",
          "[admin][metrics]") {
  Metrics metrics;
  metrics.Counter("aweft_x_total", "X.");
  metrics.Counter("aweft_y_total", "Y.", {"reason"});
  const std::string text = metrics.Render();
  CHECK(text.find("aweft_x_total 0\n") != std::string::npos);
  CHECK(text.find("aweft_y_total{") == std::string::npos);
  CHECK(testing::ExpositionProblems(text).empty());
}

TEST_CASE("histograms render cumulative buckets, +Inf, sum and count", "[admin][metrics]") {
  Metrics metrics;
  Family& latency = metrics.Histogram("aweft_sync_seconds", "Latency.", {0.001, 0.01, 0.1});
  latency.Observe(0.0005);
  latency.Observe(0.005);
  latency.Observe(0.005);
  latency.Observe(5);
  CHECK(latency.Value() == 4);
  const std::string text = metrics.Render();
  CHECK(text.find("aweft_sync_seconds_bucket{le=\"0.001\"} 1\n"
                  "aweft_sync_seconds_bucket{le=\"0.01\"} 3\n"
                  "aweft_sync_seconds_bucket{le=\"0.1\"} 3\n"
                  "aweft_sync_seconds_bucket{le=\"+Inf\"} 4\n"
                  "aweft_sync_seconds_sum 5.0105\n"
                  "aweft_sync_seconds_count 4\n") != std::string::npos);
  CHECK(testing::ExpositionProblems(text).empty());
}

TEST_CASE("label values and help text are escaped", "[admin][metrics]") {
  Metrics metrics;
  metrics.Counter("aweft_faults_total", "Back\\slash\nnewline.", {"reason"})
      .Add(1, {"a \"quoted\"\\ reason\n"});
  const std::string text = metrics.Render();
  CHECK(text.find("# HELP aweft_faults_total Back\\\\slash\\nnewline.\n") != std::string::npos);
  CHECK(text.find("aweft_faults_total{reason=\"a \\\"quoted\\\"\\\\ reason\\n\"} 1\n") !=
        std::string::npos);
  CHECK(testing::ExpositionProblems(text).empty());
}

TEST_CASE("the format checker catches what is not exposition format", "[admin][metrics]") {
  CHECK_FALSE(testing::ExpositionProblems("aweft_x 1\n").empty());  // No TYPE.
  CHECK_FALSE(testing::ExpositionProblems("# TYPE aweft_x gauge\naweft_x one\n").empty());
  CHECK_FALSE(testing::ExpositionProblems("# TYPE aweft_x counter\naweft_x 1\n").empty());
  CHECK_FALSE(testing::ExpositionProblems("# TYPE aweft_x gauge\naweft_x{a=b} 1\n").empty());
  CHECK(testing::ExpositionProblems("# TYPE aweft_x gauge\naweft_x{a=\"b\"} 1.5e3\n").empty());
}

TEST_CASE("numbers are written in their shortest form", "[admin][metrics]") {
  CHECK(FormatNumber(0) == "0");
  CHECK(FormatNumber(12345678) == "12345678");
  CHECK(FormatNumber(0.25) == "0.25");
  CHECK(FormatNumber(1.0 / 0.0) == "+Inf");
}

}  // namespace
}  // namespace aweft::admin

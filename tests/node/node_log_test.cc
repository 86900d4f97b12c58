// What aweft-node says in its log at each level, as a real process on
// loopback (docs/node.md "Logs"): refusals at debug, frames at trace, and
// an upstream's state as it changes.

#include <catch2/catch.hpp>
#include <string>

#include "tests/node/node_fixture.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

using Fixture = ClientFixture;
using sync::Document;
using sync::Shared;

// Reads the node's log until it holds `text`; the whole log read.
std::string LogUntil(Fixture& f, NodeProcess& node, const std::string& text,
                     std::chrono::milliseconds wait = std::chrono::milliseconds(5000)) {
  std::string log;
  RunUntil(
      f.io,
      [&] {
        log += node.Drain();
        return log.find(text) != std::string::npos;
      },
      wait);
  return log;
}

// A commit over limits.max_commit_bytes, from a client of `node`; the log
// read until the client heard the refusal, and a little after.
std::string RefuseOne(Fixture& f, NodeProcess& node) {
  Client client(f.io, f.scheduler, node.url());
  Document doc(codec::Kind::kObject);
  Shared* shared = f.Create(client, "doc", doc);
  REQUIRE(RunUntil(f.io, [&] { return shared->ready(); }));
  REQUIRE(doc.Set(doc.root(), "big", std::string(2000, 'x')));
  REQUIRE(RunUntil(f.io, [&] { return client.link->stats().refused_in > 0; }));
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(200));
  return node.Drain();
}

TEST_CASE("a refused commit is logged at debug with its key, and each frame at trace",
          "[node][process][log]") {
  Fixture f;
  NodeProcess traced(f.dir.path() + "/traced",
                     {"--log-level", "trace", "--set", "limits.max_commit_bytes=1024"});
  traced.Start();
  std::string log = RefuseOne(f, traced);
  INFO(log);
  CHECK_THAT(log, Catch::Contains("event=commit-refused doc=\"doc\" peer=127.0.0.1:") &&
                      Catch::Contains("origin=local reason=\"limit\" detail=\"") &&
                      Catch::Contains("(limits.max_commit_bytes)"));
  CHECK_THAT(log, Catch::Contains("event=frame peer=127.0.0.1:") &&
                      Catch::Contains("direction=in kind=commits topic=1 commits=1") &&
                      Catch::Contains("direction=out kind=refused"));
  // At info, neither.
  NodeProcess quiet(f.dir.path() + "/quiet",
                    {"--log-level", "info", "--set", "limits.max_commit_bytes=1024"});
  quiet.Start();
  log = RefuseOne(f, quiet);
  CHECK_THAT(log, Catch::Contains("event=share"));
  CHECK_THAT(log, !Catch::Contains("event=commit-refused") && !Catch::Contains("event=frame"));
}

TEST_CASE("an upstream's state is logged as it changes: lost, failed dials, connected",
          "[node][process][log]") {
  Fixture f;
  NodeProcess above(f.dir.path() + "/above");
  const uint16_t port = above.Start();
  const std::string url = above.url();
  above.Kill();
  NodeProcess below(f.dir.path() + "/below", {"--log-level", "debug", "--upstream", url});
  below.Start();
  // Not there: said once at warn, each dial after at debug.
  std::string log = LogUntil(f, below, "debug event=upstream-lost");
  INFO(log);
  CHECK_THAT(log, Catch::Contains("warn event=upstream-lost url=" + url + " detail=\""));
  CHECK_THAT(log, Catch::Contains("; dialing again in "));
  above.Start(port);
  log = LogUntil(f, below, "event=upstream-connected");
  CHECK_THAT(log, Catch::Contains("info event=upstream-connected url=" + url));
  above.Kill();
  log = LogUntil(f, below, "event=upstream-lost");
  CHECK_THAT(log, Catch::Contains("warn event=upstream-lost url=" + url));
}

}  // namespace
}  // namespace aweft::node::testing

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <sstream>

#include "storage/store.h"
#include "sync/snapshot.h"
#include "tests/storage/crash_options.h"
#include "tests/storage/digest.h"
#include "tests/storage/temp_dir.h"

namespace aweft::storage {
namespace {

using Clock = std::chrono::steady_clock;

struct Reported {
  uint64_t seq = 0;
  std::string digest;
};

// Runs the crash writer on `path`, SIGKILLs it `run` after it starts or,
// with `writing`, `run` after its first report (opening a long log takes it
// 150 to 300 ms under ASan, more on a loaded machine: kills counted from the
// start alone could all land before it writes), and returns every line it
// printed (each one a promise that the commit is durable).
std::vector<Reported> RunAndKill(const std::string& path, uint64_t seed,
                                 std::chrono::milliseconds run, bool writing) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    const std::string seed_text = std::to_string(seed);
    execl(AWEFT_CRASH_WRITER, AWEFT_CRASH_WRITER, path.c_str(), seed_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buffer[4096];
  // Waiting for the first report: up to 30 s, then the kill.
  auto deadline = Clock::now() + (writing ? std::chrono::milliseconds(30000) : run);
  for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
    pollfd ready{out[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (poll(&ready, 1, static_cast<int>(left.count()) + 1) <= 0) continue;
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;  // The writer died on its own: the checks will say.
    if (writing && text.empty()) deadline = Clock::now() + run;
    text.append(buffer, n);
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  // Lines already in the pipe were printed, so they were durable too.
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(out[0]);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

  std::vector<Reported> reported;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (lines.eof()) break;  // A line cut by the kill promises nothing.
    std::istringstream words(line);
    std::string word;
    Reported r;
    words >> word >> r.seq >> r.digest;
    REQUIRE(word == "durable");
    reported.push_back(r);
  }
  return reported;
}

TEST_CASE("SIGKILL at random moments loses no commit reported durable", "[storage][crash]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("store");
  std::mt19937_64 rng(Catch::rngSeed());
  uint64_t promised = 0;
  uint64_t total_reported = 0;
  int kills = 0;
  const auto started = Clock::now();
  for (; kills < 40 && Clock::now() - started < std::chrono::seconds(25); ++kills) {
    const auto run = std::chrono::milliseconds(20 + rng() % 181);
    // Every other kill lands while it opens the store, or soon after.
    std::vector<Reported> reported = RunAndKill(path, rng(), run, kills % 2 == 1);
    total_reported += reported.size();

    Result<Store> store = Store::Open(path, testing::CrashOptions());
    REQUIRE(store);
    Result<sync::Document*> document = store->OpenDocument("crash");
    INFO("kill " << kills << " after " << run.count() << " ms"
                 << (kills % 2 == 1 ? " of writing" : ""));
    REQUIRE(document);  // Not corrupt: the log and snapshot replay.
    const uint64_t head = store->Head("crash");
    for (const Reported& r : reported) promised = std::max(promised, r.seq);
    CHECK(head >= promised);                                    // Nothing reported is missing.
    CHECK(sync::FromSnapshot(sync::TakeSnapshot(**document)));  // A valid document.
    if (!reported.empty()) {
      // The newest promised state is exactly the one stored at its seq.
      const Reported& last = reported.back();
      if (head == last.seq) CHECK(testing::Digest(**document) == last.digest);
      Result<sync::Snapshot> state = store->StateAt("crash", last.seq);
      if (state) {
        CHECK(testing::Digest(**sync::FromSnapshot(*state)) == last.digest);
      } else {
        CHECK(state.error().reason == codec::Reason::kTruncated);
      }
    }
    // The log is whole from its floor to the head.
    auto info = store->Info("crash");
    REQUIRE(info);
    Result<std::vector<Entry>> log = store->Since("crash", info->floor);
    REQUIRE(log);
    CHECK(log->size() == head - info->floor);
  }
  CHECK(kills >= 30);
  CHECK(total_reported > 0);
  WARN(kills << " kills, " << total_reported << " commits reported durable, head " << promised);
}

}  // namespace
}  // namespace aweft::storage

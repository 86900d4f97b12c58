// Writes random commits to document "crash" of the store at argv[1] in sync
// mode, forever, and after each Sync() prints "durable <seq> <digest>": the
// head, now durable, and a fingerprint of the state at it. The crash test
// SIGKILLs it at random moments and checks that nothing reported is lost.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "storage/store.h"
#include "tests/storage/crash_options.h"
#include "tests/storage/digest.h"
#include "tests/sync/editor.h"

int main(int argc, char** argv) {
  using namespace aweft;
  if (argc != 3) {
    std::fprintf(stderr, "usage: crash_writer <store directory> <seed>\n");
    return 2;
  }
  auto store = storage::Store::Open(argv[1], storage::testing::CrashOptions());
  if (!store) {
    std::fprintf(stderr, "crash_writer: %s\n", store.error().ToString().c_str());
    return 1;
  }
  auto document = store->OpenDocument("crash", codec::Kind::kObject);
  if (!document) {
    std::fprintf(stderr, "crash_writer: %s\n", document.error().ToString().c_str());
    return 1;
  }
  sync::testing::Editor editor(std::strtoull(argv[2], nullptr, 10));
  for (;;) {
    const int edits = 1 + static_cast<int>(editor.rng()() % 5);
    for (int i = 0; i < edits; ++i) editor.RandomEdit(**document);
    store->Sync();  // One fsync for the whole group.
    std::printf("durable %llu %s\n", static_cast<unsigned long long>(store->Head("crash")),
                storage::testing::Digest(**document).c_str());
    std::fflush(stdout);
  }
}

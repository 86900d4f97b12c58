// Embedding aweft: keep a document in a local store, share it over an
// in-process link with a second document, and find it again after the store
// is reopened. Exits 0 when every check holds, 1 otherwise.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include "codec/id.h"
#include "storage/store.h"
#include "sync/channel.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/snapshot.h"

using namespace aweft;
using codec::Kind;

// Every call that can be refused returns a Result: this turns a refusal into
// an exception naming the step ("reason: detail. fix").
template <typename T>
T Check(codec::Result<T> result, const std::string& step) {
  if (!result) throw std::runtime_error(step + ": " + result.error().ToString());
  return std::move(*result);
}
void Check(const codec::Result<void>& result, const std::string& step) {
  if (!result) throw std::runtime_error(step + ": " + result.error().ToString());
}
void Expect(bool holds, const std::string& what) {
  if (!holds) throw std::runtime_error("mismatch: " + what);
  std::cout << "  ok: " << what << "\n";
}

// A fresh directory under /tmp, removed at the end.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "aweft-embedded-XXXXXX").string();
    if (!mkdtemp(name.data())) throw std::runtime_error("cannot make a temp dir");
    path = name;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

int main() try {
  TempDir dir;
  const std::string path = (dir.path / "store").string();
  sync::Snapshot before;
  codec::Id root;
  {
    // 1. A store, and a document in it. The store watches the document:
    //    every commit is written to disk before the write returns.
    storage::Store store = Check(storage::Store::Open(path), "open the store");
    sync::Document& list = *Check(store.OpenDocument("groceries", Kind::kObject), "open");
    root = list.root().id();
    std::cout << "opened 'groceries' in " << path << ", root " << codec::IdText(root) << "\n";

    // 2. Edits: slots of the root object, then an array attached under it.
    Check(list.Set(list.root(), "title", std::string("Saturday")), "set title");
    Check(list.Set(list.root(), "budget", 40.0), "set budget");
    sync::Observable& items = list.Create(Kind::kArray);
    Check(list.Push(items, std::string("bread")), "push");
    Check(list.Push(items, std::string("milk")), "push");
    Check(list.Set(list.root(), "items", sync::Attach(items)), "attach items");
    std::cout << "edited: title, budget and 2 items (" << store.Head("groceries")
              << " commits stored)\n";

    // 3. Share it over an in-process link. Both ends run on one scheduler,
    //    drained by hand; the other end shares no document, so it receives ours.
    sync::ManualScheduler scheduler;
    auto [here_channel, there_channel] = sync::InProcessPair(scheduler);
    sync::Link here(*here_channel, scheduler), there(*there_channel, scheduler);
    Check(here.Share("groceries", &list), "share");
    sync::Shared* replica = Check(there.Share("groceries"), "ask for it");
    scheduler.RunUntilIdle();
    Expect(replica->ready(), "the other end has the document");
    sync::Document& copy = *replica->document();
    Expect(sync::TakeSnapshot(copy) == sync::TakeSnapshot(list), "the copy equals the original");

    // 4. The link runs both ways: an edit to the copy reaches the original,
    //    and so the store.
    Check(copy.Push(*copy.Find(items.id()), std::string("eggs")), "push on the copy");
    scheduler.RunUntilIdle();
    Expect(sync::TakeSnapshot(copy) == sync::TakeSnapshot(list), "the copy's edit came back");
    Expect(items.size() == 3, "the original has 3 items");
    before = sync::TakeSnapshot(list);
    std::cout << "shared over the link: " << here.stats().frames_out << " frames out, "
              << here.stats().commits_in << " commit in\n";
  }  // The links end, then the store syncs and closes.

  // 5. Reopen: the document comes back from disk, same ids and positions.
  storage::Store store = Check(storage::Store::Open(path), "reopen the store");
  sync::Document& list = *Check(store.OpenDocument("groceries"), "reopen the document");
  std::cout << "reopened 'groceries': " << store.Head("groceries") << " commits\n";
  Expect(list.root().id() == root, "the same root id");
  Expect(sync::TakeSnapshot(list) == before, "the same state");
  std::cout << "done\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "embedded: " << e.what() << "\n";
  return 1;
}

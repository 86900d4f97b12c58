#include "tests/sync/converge.h"

#include <random>
#include <sstream>

#include "codec/id.h"
#include "sync/link.h"
#include "sync/snapshot.h"
#include "tests/sync/editor.h"

namespace aweft::sync::testing {
namespace {

// The one value end 0 holds in `sealed`; it turns away anything else.
const Value kSealed = std::string("held by the first end");

// One link between two ends: `a` is the end nearer end 0.
struct Wire {
  int a = 0, b = 0;
  std::unique_ptr<Channel> channels[2];  // Declared first: outlive the links.
  std::unique_ptr<Link> links[2];
  Shared* shares[2] = {nullptr, nullptr};
  // Set when the wire is cut: its ends may then hear closed, at any later
  // turn (over sockets, once the far end sees the connection go).
  std::shared_ptr<bool> cut = std::make_shared<bool>(false);
};

// The observables reachable from `top` through attach edges, as a snapshot
// rooted there.
Snapshot Subtree(const Snapshot& whole, const Id& top) {
  Snapshot sub{top, Kind::kObject, {}};
  std::vector<Id> pending{top};
  while (!pending.empty()) {
    Id id = pending.back();
    pending.pop_back();
    auto it = whole.observables.find(id);
    if (it == whole.observables.end() || sub.observables.count(id)) continue;
    sub.observables.emplace(id, it->second);
    for (const auto& [key, value] : it->second.slots) {
      if (IsAttach(value)) pending.push_back(std::get<codec::Reference>(value).id);
    }
  }
  return sub;
}

class Run {
 public:
  Run(Network& network, const Shape& shape)
      : net_(network), shape_(shape), rng_(shape.seed), editor_(shape.seed ^ 0x9e3779b97f4a7c15) {}

  Outcome Go();

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  void Fail(std::string what) { out_.failures.push_back(std::move(what)); }
  bool Settle();

  void Build();
  std::unique_ptr<Wire> Join(int a, int b, bool b_empty);
  ShareHandlers Handlers(int at, std::shared_ptr<bool> cut);
  std::vector<WireReason> Guard(const Commit& commit) const;
  void OnRefused(int at, const Refused& report);

  void MakeEdit(int at, int round);
  void Splice(int at, int round, Document& doc, Observable& list, bool remove);
  void Cut(int leaf);
  bool Adopt(int at);
  void Check();
  bool SameEverywhere(bool ignore_contended);

  Network& net_;
  Shape shape_;
  std::mt19937_64 rng_;
  Editor editor_;
  Outcome out_;

  Id root_, list_;
  std::vector<Id> subtree_;                       // Each end's own object.
  std::vector<std::unique_ptr<Document>> owned_;  // The copies built up front.
  std::vector<Document*> docs_;                   // Each end's document now.
  // A re-shared leaf's share, until its state lands.
  std::vector<Shared*> asking_;
  // The editor's view of each end's subtree.
  std::vector<std::unique_ptr<Document>> private_;
  std::vector<std::unique_ptr<Wire>> wires_, cut_;
  std::vector<int> leaves_;
  bool contended_ = false;  // Two ends may have replaced "c" concurrently.
};

bool Run::Settle() {
  auto quiet = [this] {
    for (const auto& wire : wires_) {
      const Link& x = *wire->links[0];
      const Link& y = *wire->links[1];
      if (x.closed() || y.closed()) continue;
      if (x.stats().frames_out != y.stats().frames_in ||
          y.stats().frames_out != x.stats().frames_in) {
        return false;
      }
    }
    return true;
  };
  if (net_.Settle(quiet)) return true;
  Fail("the links never went quiet");
  return false;
}

void Run::Build() {
  auto origin = std::make_unique<Document>(Kind::kObject);
  Document& doc = *origin;
  root_ = doc.root().id();
  auto built = doc.Atomic([&]() -> Result<void> {
    Observable& list = doc.Create(Kind::kArray);
    list_ = list.id();
    (void)doc.Push(list, std::string("first"));
    (void)doc.Push(list, std::string("last"));
    (void)doc.Set(doc.root(), "list", Attach(list));
    (void)doc.Set(doc.root(), "sealed", kSealed);
    (void)doc.Set(doc.root(), "c", 0.0);
    for (int i = 0; i < shape_.size; ++i) {
      const std::string n = std::to_string(i);
      (void)doc.Set(doc.root(), "s" + n, 0.0);
      Observable& own = doc.Create(Kind::kObject);
      subtree_.push_back(own.id());
      (void)doc.Set(doc.root(), "p" + n, Attach(own));
    }
    return {};
  });
  if (!built) {
    return Fail("the first document did not build: " + built.error().ToString());
  }
  const Snapshot start = TakeSnapshot(doc);
  owned_.push_back(std::move(origin));
  for (int i = 1; i < shape_.size; ++i) {
    owned_.push_back(std::move(*FromSnapshot(start)));
  }
  for (int i = 0; i < shape_.size; ++i) {
    docs_.push_back(owned_[i].get());
    asking_.push_back(nullptr);
    private_.push_back(std::make_unique<Document>(subtree_[i], Kind::kObject));
  }
  for (int i = 1; i < shape_.size; ++i) {
    wires_.push_back(Join(shape_.star ? 0 : i - 1, i, /*b_empty=*/false));
  }
  for (int i = 1; i < shape_.size; ++i) {
    const bool leaf = shape_.star || i == shape_.size - 1;
    if (leaf) leaves_.push_back(i);
  }
  Settle();
}

std::unique_ptr<Wire> Run::Join(int a, int b, bool b_empty) {
  auto wire = std::make_unique<Wire>();
  wire->a = a;
  wire->b = b;
  auto [x, y] = net_.Join();
  wire->channels[0] = std::move(x);
  wire->channels[1] = std::move(y);
  for (int side : {0, 1}) {
    wire->links[side] = std::make_unique<Link>(*wire->channels[side], net_.scheduler());
  }
  // Either end may share first (behaviour.md §2.4).
  const bool b_first = Pick(2) == 0;
  for (int side : b_first ? std::vector<int>{1, 0} : std::vector<int>{0, 1}) {
    const int at = side == 0 ? a : b;
    Document* doc = side == 1 && b_empty ? nullptr : docs_[at];
    auto shared = wire->links[side]->Share("board", doc, Handlers(at, wire->cut));
    if (!shared) {
      Fail("share refused: " + shared.error().ToString());
      continue;
    }
    wire->shares[side] = *shared;
  }
  return wire;
}

ShareHandlers Run::Handlers(int at, std::shared_ptr<bool> cut) {
  ShareHandlers handlers;
  if (at == 0) {
    handlers.accept = [this](const Commit& commit) { return Guard(commit); };
  }
  handlers.refused = [this, at](const Refused& report) { OnRefused(at, report); };
  handlers.fault = [this, at, cut](const std::string& reason, const std::string& message) {
    if (*cut && reason == "closed") return;
    Fail("end " + std::to_string(at) + " heard fault " + reason + ": " + message);
  };
  return handlers;
}

// End 0's rule, and nobody else's: `sealed` keeps the value it has there.
std::vector<WireReason> Run::Guard(const Commit& commit) const {
  for (const auto& delta : commit.deltas) {
    if (delta.id == root_ && delta.ref.key == "sealed" &&
        (delta.type != codec::DeltaType::kReplace || delta.value != kSealed)) {
      return {{"not-here", "sealed is not written from anywhere else",
               std::vector<std::string>{"sealed"}}};
    }
  }
  return {};
}

void Run::OnRefused(int at, const Refused& report) {
  const std::string who = "end " + std::to_string(at);
  if (report.reasons.empty() || report.reasons[0].code != "not-here") {
    return Fail(who + " heard an unexpected refusal: " +
                (report.reasons.empty()
                     ? "none"
                     : report.reasons[0].code + ": " + report.reasons[0].message));
  }
  if (!report.mine) {
    if (at != 0) Fail(who + " refused, but only end 0 refuses");
    ++out_.refusals;
    return;
  }
  // The end beside end 0 yields with the undo the refusal carried.
  if (!docs_[at]) return Fail(who + " was refused before it held a document");
  if (!report.undo) {
    return Fail(who + " was refused seq " + std::to_string(report.seq) +
                " without an undo (past the window)");
  }
  ++out_.yields;
  if (auto undone = docs_[at]->Apply(*report.undo); !undone) {
    Fail(who + " could not apply the undo: " + undone.error().ToString());
  }
}

void Run::Splice(int at, int round, Document& doc, Observable& list, bool remove) {
  const std::string mine = std::to_string(at) + ":";
  auto result = doc.Atomic([&]() -> Result<void> {
    size_t index = Pick(list.size() + 1);
    if (remove) {
      // Only an end's own items: two ends removing one item would both be
      // refused slot-missing, and that is not what this run is about.
      std::vector<size_t> own;
      for (size_t i = 0; i < list.size(); ++i) {
        const auto* text = std::get_if<std::string>(&list.At(i));
        if (text && text->rfind(mine, 0) == 0) own.push_back(i);
      }
      if (!own.empty()) {
        index = own[Pick(own.size())];
        if (auto r = doc.RemoveAt(list, index); !r) return r;
      }
    }
    return doc.Insert(list, index, mine + std::to_string(round));
  });
  if (!result) {
    Fail("a splice at end " + std::to_string(at) + ": " + result.error().ToString());
  }
}

void Run::MakeEdit(int at, int round) {
  if (!Adopt(at)) return;  // Still waiting for its state.
  Document& doc = *docs_[at];
  Observable* list = doc.Find(list_);
  if (!list) return Fail("end " + std::to_string(at) + " lost the list");
  ++out_.commits;
  const size_t roll = Pick(100);
  Result<void> done;
  if (roll < 30) {
    Splice(at, round, doc, *list, false);
  } else if (roll < 40) {
    Splice(at, round, doc, *list, true);
  } else if (roll < 55) {
    done = doc.Set(doc.root(), "s" + std::to_string(at), static_cast<double>(round));
  } else if (roll < 85) {
    testing::Edit edit = editor_.RandomEdit(*private_[at]);
    if (!edit.empty()) done = Editor::Replay(doc, edit);
  } else if (roll < 92) {
    // The contended slot: concurrent replaces may leave ends swapped.
    contended_ = true;
    done = doc.Set(doc.root(), "c", static_cast<double>(at * 1000 + round));
  } else if (at == 1 && *doc.root().Get("sealed") == kSealed) {
    // The one edit that does not commute, and the only one anybody refuses.
    // Made only from the value end 0 holds, so the undo puts back a value
    // end 0 takes.
    done = doc.Set(doc.root(), "sealed", "written from end 1 at " + std::to_string(round));
  }
  if (!done) {
    Fail("an edit at end " + std::to_string(at) + ": " + done.error().ToString());
  }
}

void Run::Cut(int leaf) {
  auto it = wires_.begin();
  while ((*it)->b != leaf) ++it;
  std::unique_ptr<Wire> old = std::move(*it);
  // Close the leaf's side, the far side, or both: the other hears closed.
  const size_t how = Pick(3);
  *old->cut = true;
  if (how != 1) old->links[1]->Close();
  if (how != 0) old->links[0]->Close();
  net_.Step(4);
  cut_.push_back(std::move(old));
  // The leaf throws its copy away and asks for the document back. Half the
  // time the others carry on editing while its state is on the way.
  *it = Join(cut_.back()->a, leaf, /*b_empty=*/true);
  docs_[leaf] = nullptr;
  asking_[leaf] = (*it)->shares[1];
  ++out_.cuts;
  if (Pick(2) == 0) Settle();
}

// Takes up a re-shared leaf's document once its state has landed.
bool Run::Adopt(int at) {
  if (docs_[at]) return true;
  Shared* asking = asking_[at];
  if (!asking || !asking->ready()) return false;
  docs_[at] = asking->document();
  asking_[at] = nullptr;
  auto sub = FromSnapshot(Subtree(TakeSnapshot(*docs_[at]), subtree_[at]));
  if (!sub) {
    Fail("the leaf's subtree does not stand alone: " + sub.error().ToString());
    return false;
  }
  private_[at] = std::move(*sub);
  return true;
}

bool Run::SameEverywhere(bool ignore_contended) {
  auto view = [&](int i) {
    Snapshot s = TakeSnapshot(*docs_[i]);
    if (ignore_contended) s.observables[root_].slots.erase("c");
    return s;
  };
  const Snapshot truth = view(0);
  bool same = true;
  for (int i = 1; i < shape_.size; ++i) {
    const Snapshot got = view(i);
    if (got == truth) continue;
    same = false;
    Fail("end " + std::to_string(i) + " differs from end 0" +
         (ignore_contended ? " (beyond the contended slot):" : ":") + Difference(truth, got));
  }
  return same;
}

void Run::Check() {
  if (!Settle()) return;
  for (int i = 0; i < shape_.size; ++i) {
    if (!Adopt(i)) {
      return Fail("re-shared end " + std::to_string(i) + " never got the document");
    }
  }
  // Everything but the contended slot converges by itself.
  if (!SameEverywhere(/*ignore_contended=*/true)) return;
  if (contended_) {
    // Same-slot replaces stay swapped until someone resyncs (§2.9): each end
    // asks the end nearer end 0, nearest first.
    for (int i = 1; i < shape_.size; ++i) {
      for (const auto& wire : wires_) {
        if (wire->b == i) wire->shares[1]->Resync();
      }
      ++out_.resyncs;
      if (!Settle()) return;
    }
  }
  SameEverywhere(/*ignore_contended=*/false);
  if (*docs_[0]->root().Get("sealed") != kSealed) {
    Fail("end 0's sealed slot was written");
  }
  for (int i = 0; i < shape_.size; ++i) {
    // The editor's private view still matches the end's subtree.
    const Snapshot sub = Subtree(TakeSnapshot(*docs_[i]), subtree_[i]);
    if (!(TakeSnapshot(*private_[i]) == sub)) {
      Fail("end " + std::to_string(i) + "'s subtree drifted from its editor's view");
    }
  }
}

Outcome Run::Go() {
  Build();
  if (!out_.failures.empty()) return out_;
  for (int round = 0; round < shape_.rounds && out_.failures.empty(); ++round) {
    const size_t writers = 1 + Pick(shape_.size);
    for (size_t i = 0; i < writers; ++i) {
      MakeEdit(static_cast<int>(Pick(shape_.size)), round);
    }
    if (shape_.cuts && Pick(100) < 8) Cut(leaves_[Pick(leaves_.size())]);
    const size_t roll = Pick(100);
    if (roll < 30) {
      Settle();
    } else if (roll < 70) {
      net_.Step(1 + Pick(12));
    }
  }
  if (out_.failures.empty()) Check();
  return out_;
}

}  // namespace

std::string Difference(const Snapshot& want, const Snapshot& got) {
  std::ostringstream out;
  int shown = 0;
  for (const auto& [id, observable] : want.observables) {
    auto it = got.observables.find(id);
    if (it == got.observables.end()) {
      out << " missing " << codec::IdText(id) << ";";
    } else if (!(it->second == observable)) {
      out << " " << codec::IdText(id) << " has " << it->second.slots.size() << " slots, not "
          << observable.slots.size() << ";";
    } else {
      continue;
    }
    if (++shown == 4) break;
  }
  for (const auto& [id, observable] : got.observables) {
    if (!want.observables.count(id) && shown++ < 6) {
      out << " extra " << codec::IdText(id) << ";";
    }
  }
  return out.str();
}

std::string Describe(const Shape& shape) {
  return "seed " + std::to_string(shape.seed) + ", " + (shape.star ? "star" : "chain") + " of " +
         std::to_string(shape.size) + (shape.cuts ? ", cuts" : "");
}

Outcome Converge(Network& network, const Shape& shape) { return Run(network, shape).Go(); }

}  // namespace aweft::sync::testing

// Fuzzes a Link as the far end of its connection: the input is a run of
// frames, each a 2-byte little-endian length and that many bytes, delivered
// one at a time to a link over a channel that decodes bytes as the socket
// channels do; the scheduler is drained after each. The link holds
// "board:42" (a document with a few slots, root 0102..0c as in the frame
// fixtures; an accept that refuses `sealed` and throws on `throw`; a watcher
// that answers `ping` with `pong`) and "notes" (shared with none: it waits
// for the other end's state). An open for "spare" is answered by sharing a
// third document, any other is declined, as the node does.
//
// Beyond "no crash, no sanitizer report", after every frame:
//  - each document the link holds is a valid state: its snapshot rebuilds
//    into the same snapshot, each observable but the root has an attach edge
//    from its parent, and the whole state is one commit that encodes and
//    rebuilds it;
//  - each frame the link sent encodes and decodes again;
//  - each topic that ended has a reason; a closed link has ended them all;
//  - each refusal this end sends names its reasons.
// After the last frame a link that is not closed is still usable: a new
// Share is taken and its open is sent, and a local write is taken.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "codec/commit.h"
#include "codec/frame.h"
#include "codec/id.h"
#include "sync/channel.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/snapshot.h"
#include "tests/fuzz/check.h"

namespace {

namespace codec = aweft::codec;
namespace sync = aweft::sync;
using aweft::fuzz::Fail;
using codec::Kind;

// A channel that carries bytes with no socket under it. What arrives goes
// through ChannelBase::DeliverBytes, and bytes that are not a frame end the
// channel with the refusal's text, as WebSocketChannel::OnMessage does; what
// the link sends is encoded as a socket channel would, checked and kept.
class BytesChannel : public sync::ChannelBase {
 public:
  BytesChannel(sync::Scheduler& scheduler, std::string_view input)
      : ChannelBase(scheduler), input_(input) {}

  void Send(const codec::Frame& frame) override { Keep(codec::EncodeFrame(frame)); }
  void SendCommits(const sync::SharedCommits& commits) override { Keep(commits.Encode()); }
  void Close() override { End(); }

  void Arrive(std::string_view bytes) {
    if (ended()) return;
    if (auto bad = DeliverBytes(bytes)) EndWith(std::move(*bad));
  }

  std::vector<codec::Frame> sent;

 private:
  void Keep(codec::Result<std::string> bytes) {
    if (ended()) return;
    if (!bytes) Fail(input_, "the link sent a frame with no encoding", bytes.error().ToString());
    auto frame = codec::DecodeFrame(*bytes);
    if (!frame) {
      Fail(input_, "a frame the link sent does not decode",
           codec::Hex(*bytes) + ": " + frame.error().ToString());
    }
    sent.push_back(std::move(*frame));
  }

  std::string_view input_;
};

// The id the frame fixtures give their root.
codec::Id FixtureRoot() {
  codec::Id id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<uint8_t>(i + 1);
  return id;
}

bool Touches(const sync::Commit& commit, std::string_view key) {
  for (const auto& delta : commit.deltas) {
    if (delta.ref.key == key) return true;
  }
  return false;
}

void Require(std::string_view input, const sync::Result<void>& done, const char* what) {
  if (!done) Fail(input, what, done.error().ToString());
}

// The document's state is one a document can be in (see the top).
void CheckDocument(std::string_view input, const std::string& name, const sync::Document& doc) {
  const sync::Snapshot snapshot = sync::TakeSnapshot(doc);
  auto rebuilt = sync::FromSnapshot(snapshot);
  if (!rebuilt) {
    Fail(input, "a document's snapshot is not a document",
         name + ": " + rebuilt.error().ToString());
  }
  if (!(sync::TakeSnapshot(**rebuilt) == snapshot)) {
    Fail(input, "a document's snapshot rebuilds into another state", name);
  }
  for (const auto& [id, node] : doc.index()) {
    if (node.get() == &doc.root()) continue;
    const sync::Observable* parent = node->parent();
    const sync::Value* edge = parent ? parent->Get(node->parent_key()) : nullptr;
    if (!edge || !sync::IsAttach(*edge) || std::get<codec::Reference>(*edge).id != id) {
      Fail(input, "an observable's parent holds no attach edge to it",
           name + ": " + codec::IdText(id));
    }
  }
  const std::optional<sync::Commit> whole = sync::AsCommit(doc);
  if (!whole) return;
  if (auto encoded = codec::EncodeCommit(*whole); !encoded) {
    Fail(input, "a document's state does not encode", name + ": " + encoded.error().ToString());
  }
  auto copy = sync::RootFrom(doc.root().id(), static_cast<int>(doc.root().kind()));
  Require(input, (*copy)->Apply(*whole), "a document's state does not apply to its root");
  if (!(sync::TakeSnapshot(**copy) == snapshot)) {
    Fail(input, "a document's state as a commit rebuilds another state", name);
  }
}

// One input's world: the documents, the channel, the link and its topics.
// Members are destroyed in reverse: the link before the channel and the
// documents it shares.
struct World {
  explicit World(std::string_view input) : input(input), channel(scheduler, input) {
    Require(input, board.Set(board.root(), "title", std::string("draft")), "setup");
    Require(input, board.Set(board.root(), "gone", 1.0), "setup");
    Require(input, board.Set(board.root(), "sealed", std::string("yes")), "setup");
    sync::Observable& list = board.Create(Kind::kArray);
    Require(input, board.Push(list, std::string("a")), "setup");
    Require(input, board.Push(list, 2.0), "setup");
    Require(input, board.Set(board.root(), "list", sync::Attach(list)), "setup");
    board.Watch([this](const sync::Change& change) {
      if (!change.local && Touches(change.commit, "ping")) {
        Require(this->input, board.Set(board.root(), "pong", true), "a reaction was refused");
      }
    });
    Require(input, spare.Set(spare.root(), "spare", true), "setup");

    link.OnOpen([this](const codec::OpenFrame& open) {
      if (open.name == "spare") {
        if (auto shared = link.Share("spare", &spare, Handlers())) {
          topics.push_back(*shared);
          return;
        }
      }
      link.Decline(open, "no-document", "nothing here is called " + open.name);
    });
    Share("board:42", &board);
    Share("notes", nullptr);
    scheduler.RunUntilIdle();
  }

  sync::ShareHandlers Handlers() {
    sync::ShareHandlers handlers;
    handlers.accept = [](const sync::Commit& commit) -> std::vector<codec::WireReason> {
      if (Touches(commit, "throw")) throw std::runtime_error("accept was asked to throw");
      if (Touches(commit, "sealed")) return {{"sealed", "the slot is sealed", std::nullopt}};
      return {};
    };
    handlers.refused = [this](const sync::Refused& refused) {
      if (refused.mine) return;  // The other end's reasons are its own.
      for (const auto& reason : refused.reasons) {
        if (reason.code.empty()) {
          Fail(input, "this end refused a commit without a reason", reason.message);
        }
      }
    };
    return handlers;
  }

  void Share(const std::string& name, sync::Document* document) {
    auto shared = link.Share(name, document, Handlers());
    if (!shared) Fail(input, "a Share was refused", name + ": " + shared.error().ToString());
    topics.push_back(*shared);
  }

  void Check() {
    CheckDocument(input, "board:42", board);
    CheckDocument(input, "spare", spare);
    for (const sync::Shared* topic : topics) {
      if (topic->document()) CheckDocument(input, topic->name(), *topic->document());
      if (topic->ended() && topic->end_reason().empty()) {
        Fail(input, "a topic ended without a reason", topic->name());
      }
      if (link.closed() && !topic->ended()) {
        Fail(input, "a closed link left a topic open", topic->name());
      }
    }
  }

  // A link still open takes a new share, sends its open, and a local write.
  void CheckUsable() {
    if (link.closed()) return;
    const size_t before = channel.sent.size();
    Share("probe", &probe);
    Require(input, board.Set(board.root(), "probe", 1.0), "a local write was refused");
    scheduler.RunUntilIdle();
    bool opened = false;
    for (size_t i = before; i < channel.sent.size(); ++i) {
      const auto* open = std::get_if<codec::OpenFrame>(&channel.sent[i]);
      opened = opened || (open && open->name == "probe");
    }
    if (!opened) Fail(input, "a link that is not closed did not send an open", "probe");
    link.Close();
    scheduler.RunUntilIdle();
    Check();
  }

  std::string_view input;
  sync::Document board{FixtureRoot(), Kind::kObject};
  sync::Document spare{Kind::kObject};
  sync::Document probe{Kind::kObject};
  sync::ManualScheduler scheduler;
  BytesChannel channel;
  sync::Link link{channel, scheduler};
  std::vector<sync::Shared*> topics;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  World world(input);
  for (std::string_view rest = input; rest.size() >= 2 && !world.channel.ended();) {
    const size_t length = static_cast<uint8_t>(rest[0]) | static_cast<uint8_t>(rest[1]) << 8;
    rest.remove_prefix(2);
    const std::string_view frame = rest.substr(0, length);
    rest.remove_prefix(frame.size());
    world.channel.Arrive(frame);
    world.scheduler.RunUntilIdle();
    world.Check();
  }
  world.CheckUsable();
  return 0;
}

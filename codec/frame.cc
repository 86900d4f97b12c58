#include "codec/frame.h"

#include <array>
#include <cmath>

#include "codec/cbor.h"
#include "codec/commit.h"

namespace aweft::codec {
namespace {

// Elements per frame kind, the kind included (spec/README.md §6.3).
constexpr std::array<uint64_t, 6> kArity = {6, 3, 4, 4, 2, 4};
constexpr size_t kMaxArity = 6;

Refusal Bad(std::string what) { return Refusal{Reason::kBadFrame, std::move(what)}; }

// --- Decoding --------------------------------------------------------------

// Reads a frame's numbers: whole, at least `minimum`, and at most 2^53. A
// larger whole number arrives as a float64; the reference accepts it, and we
// refuse it (the one documented deviation, see FORMAT.md).
Result<void> ReadCount(std::string_view item, uint64_t minimum, std::string_view what,
                       uint64_t& out) {
  Reader in(item);
  double number = 0;
  if (in.ReadUint(out)) {
    if (out >= minimum) return {};
    return Bad(std::string(what) + " is " + std::to_string(out) + ", below its minimum of " +
               std::to_string(minimum));
  }
  if (in.ReadNumber(number) && number > 0 && std::trunc(number) == number) {
    return Bad(std::string(what) + " is above 2^53, which this end refuses");
  }
  return Bad(std::string(what) + " is not a whole number from 0");
}

Result<std::string_view> ReadTextItem(std::string_view item, std::string_view what) {
  Reader in(item);
  std::string_view text;
  if (in.ReadText(text)) return text;
  return Bad(std::string(what) + " is not text");
}

// A frame's elements after the kind, each one whole item.
struct Elements {
  std::array<std::string_view, kMaxArity> at;  // at[0] is the kind.
};

Result<Frame> DecodeOpen(const Elements& e) {
  OpenFrame frame;
  if (!Reader(e.at[5]).ReadBool(frame.want)) {
    return Bad("want is not a boolean");
  }
  const bool no_id = Reader(e.at[3]).ReadNull();
  const bool no_kind = Reader(e.at[4]).ReadNull();
  if (no_id != no_kind) return Bad("an open names half a root");
  if (no_id && !frame.want) return Bad("an open with no root must want state");
  if (!no_id) {
    uint64_t kind = 0;
    std::string_view id;
    if (!Reader(e.at[4]).ReadUint(kind) || kind > 2) {
      return Bad("the root kind is not 0, 1 or 2");
    }
    if (!Reader(e.at[3]).ReadBytes(id)) return Bad("the root id is not bytes");
    frame.root = RootRef{std::string(id), static_cast<Kind>(kind)};
  }
  if (auto topic = ReadCount(e.at[1], 1, "the topic", frame.topic); !topic) {
    return topic.error();
  }
  auto name = ReadTextItem(e.at[2], "the name");
  if (!name) return name.error();
  frame.name = std::string(*name);
  return Frame(std::move(frame));
}

// Decodes one embedded commit: bytes holding a commit, which keeps its own
// refusal reason.
Result<Commit> ReadCommitItem(std::string_view item) {
  std::string_view bytes;
  if (!Reader(item).ReadBytes(bytes)) return Bad("a commit is not bytes");
  return DecodeCommit(bytes);
}

Result<Frame> DecodeState(const Elements& e) {
  StateFrame frame;
  if (auto topic = ReadCount(e.at[1], 1, "the topic", frame.topic); !topic) {
    return topic.error();
  }
  if (Reader(e.at[2]).ReadNull()) return Frame(std::move(frame));
  auto commit = ReadCommitItem(e.at[2]);
  if (!commit) return commit.error();
  frame.commit = std::move(*commit);
  return Frame(std::move(frame));
}

// Opens the list in the last element, refusing one that is not a non-empty
// array.
Result<void> OpenList(std::string_view item, std::string_view what, Reader& list, uint64_t& count) {
  list = Reader(item);
  if (!list.ReadArray(count)) return Bad(std::string(what) + " are not a list");
  if (count == 0) return Bad(std::string(what) + " are an empty list");
  return {};
}

Result<Frame> DecodeCommits(const Elements& e) {
  CommitsFrame frame;
  Reader list(e.at[3]);
  uint64_t count = 0;
  if (auto opened = OpenList(e.at[3], "the commits", list, count); !opened) {
    return opened.error();
  }
  if (auto topic = ReadCount(e.at[1], 1, "the topic", frame.topic); !topic) {
    return topic.error();
  }
  if (auto first = ReadCount(e.at[2], 1, "first", frame.first); !first) {
    return first.error();
  }
  frame.commits.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    auto commit = ReadCommitItem(list.NextItem());
    if (!commit) return commit.error();
    frame.commits.push_back(std::move(*commit));
    list.Skip();
  }
  return Frame(std::move(frame));
}

Result<std::optional<std::vector<std::string>>> ReadPath(std::string_view item) {
  Reader in(item);
  uint64_t count = 0;
  if (in.ReadNull()) return std::optional<std::vector<std::string>>();
  if (!in.ReadArray(count)) return Bad("a reason path is neither null nor a list");
  std::vector<std::string> steps;
  steps.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view step;
    if (!in.ReadText(step)) return Bad("a reason path step is not text");
    steps.emplace_back(step);
  }
  return std::optional<std::vector<std::string>>(std::move(steps));
}

Result<WireReason> ReadReason(std::string_view item) {
  Reader in(item);
  uint64_t count = 0;
  if (!in.ReadArray(count) || count != 3) {
    return Bad("a reason is not a code, a message and a path");
  }
  const std::string_view code = in.NextItem();
  in.Skip();
  const std::string_view message = in.NextItem();
  in.Skip();
  auto path = ReadPath(in.NextItem());
  if (!path) return path.error();
  auto code_text = ReadTextItem(code, "a reason code");
  if (!code_text) return code_text.error();
  auto message_text = ReadTextItem(message, "a reason message");
  if (!message_text) return message_text.error();
  return WireReason{std::string(*code_text), std::string(*message_text), std::move(*path)};
}

Result<Frame> DecodeRefused(const Elements& e) {
  RefusedFrame frame;
  Reader list(e.at[3]);
  uint64_t count = 0;
  if (auto opened = OpenList(e.at[3], "the reasons", list, count); !opened) {
    return opened.error();
  }
  if (auto topic = ReadCount(e.at[1], 1, "the topic", frame.topic); !topic) {
    return topic.error();
  }
  if (auto seq = ReadCount(e.at[2], 1, "seq", frame.seq); !seq) {
    return seq.error();
  }
  frame.reasons.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    auto reason = ReadReason(list.NextItem());
    if (!reason) return reason.error();
    frame.reasons.push_back(std::move(*reason));
    list.Skip();
  }
  return Frame(std::move(frame));
}

Result<Frame> DecodeLeave(const Elements& e) {
  LeaveFrame frame;
  if (auto topic = ReadCount(e.at[1], 1, "the topic", frame.topic); !topic) {
    return topic.error();
  }
  return Frame(std::move(frame));
}

Result<Frame> DecodeFault(const Elements& e) {
  FaultFrame frame;
  if (auto topic = ReadCount(e.at[1], 0, "the topic", frame.topic); !topic) {
    return topic.error();
  }
  auto reason = ReadTextItem(e.at[2], "the fault reason");
  if (!reason) return reason.error();
  auto message = ReadTextItem(e.at[3], "the fault message");
  if (!message) return message.error();
  frame.reason = std::string(*reason);
  frame.message = std::string(*message);
  return Frame(std::move(frame));
}

// --- Encoding --------------------------------------------------------------

// The encoder's side of ReadCount: a number the decoder would refuse.
Result<void> CheckCount(uint64_t value, uint64_t minimum, std::string_view what) {
  if (value < minimum) {
    return Bad(std::string(what) + " is " + std::to_string(value) + ", below its minimum of " +
               std::to_string(minimum));
  }
  if (value > kMaxSafeInteger) {
    return Bad(std::string(what) + " is above 2^53");
  }
  return {};
}

Result<void> Write(Writer& out, const OpenFrame& frame) {
  if (auto topic = CheckCount(frame.topic, 1, "the topic"); !topic) {
    return topic;
  }
  if (frame.root && static_cast<uint8_t>(frame.root->kind) > 2) {
    return Bad("the root kind is not 0, 1 or 2");
  }
  if (!frame.root && !frame.want) return Bad("an open with no root must want state");
  if (auto name = CheckText(frame.name); !name) return name;
  out.Array(6);
  out.Uint(0);
  out.Uint(frame.topic);
  out.Text(frame.name);
  if (frame.root) {
    out.Bytes(frame.root->id);
    out.Uint(static_cast<uint8_t>(frame.root->kind));
  } else {
    out.Null();
    out.Null();
  }
  out.Bool(frame.want);
  return {};
}

Result<void> Write(Writer& out, const StateFrame& frame) {
  if (auto topic = CheckCount(frame.topic, 1, "the topic"); !topic) {
    return topic;
  }
  out.Array(3);
  out.Uint(1);
  out.Uint(frame.topic);
  if (!frame.commit) {
    out.Null();
    return {};
  }
  auto commit = EncodeCommit(*frame.commit);
  if (!commit) return commit.error();
  out.Bytes(*commit);
  return {};
}

// The head of a commits frame, up to the commits themselves.
Result<void> WriteCommitsHead(Writer& out, uint64_t topic, uint64_t first, size_t count) {
  if (auto checked = CheckCount(topic, 1, "the topic"); !checked) return checked;
  if (auto checked = CheckCount(first, 1, "first"); !checked) return checked;
  if (count == 0) return Bad("the commits are an empty list");
  out.Array(4);
  out.Uint(2);
  out.Uint(topic);
  out.Uint(first);
  out.Array(count);
  return {};
}

Result<void> Write(Writer& out, const CommitsFrame& frame) {
  if (auto head = WriteCommitsHead(out, frame.topic, frame.first, frame.commits.size()); !head) {
    return head;
  }
  for (const Commit& commit : frame.commits) {
    auto bytes = EncodeCommit(commit);
    if (!bytes) return bytes.error();
    out.Bytes(*bytes);
  }
  return {};
}

Result<void> WriteReason(Writer& out, const WireReason& reason) {
  if (auto code = CheckText(reason.code); !code) return code;
  if (auto message = CheckText(reason.message); !message) return message;
  out.Array(3);
  out.Text(reason.code);
  out.Text(reason.message);
  if (!reason.path) {
    out.Null();
    return {};
  }
  out.Array(reason.path->size());
  for (const std::string& step : *reason.path) {
    if (auto text = CheckText(step); !text) return text;
    out.Text(step);
  }
  return {};
}

Result<void> Write(Writer& out, const RefusedFrame& frame) {
  if (auto topic = CheckCount(frame.topic, 1, "the topic"); !topic) {
    return topic;
  }
  if (auto seq = CheckCount(frame.seq, 1, "seq"); !seq) return seq;
  if (frame.reasons.empty()) return Bad("the reasons are an empty list");
  out.Array(4);
  out.Uint(3);
  out.Uint(frame.topic);
  out.Uint(frame.seq);
  out.Array(frame.reasons.size());
  for (const WireReason& reason : frame.reasons) {
    if (auto written = WriteReason(out, reason); !written) return written;
  }
  return {};
}

Result<void> Write(Writer& out, const LeaveFrame& frame) {
  if (auto topic = CheckCount(frame.topic, 1, "the topic"); !topic) {
    return topic;
  }
  out.Array(2);
  out.Uint(4);
  out.Uint(frame.topic);
  return {};
}

Result<void> Write(Writer& out, const FaultFrame& frame) {
  if (auto topic = CheckCount(frame.topic, 0, "the topic"); !topic) {
    return topic;
  }
  if (auto reason = CheckText(frame.reason); !reason) return reason;
  if (auto message = CheckText(frame.message); !message) return message;
  out.Array(4);
  out.Uint(5);
  out.Uint(frame.topic);
  out.Text(frame.reason);
  out.Text(frame.message);
  return {};
}

}  // namespace

std::string_view FrameKindName(const Frame& frame) {
  static constexpr std::array<std::string_view, 6> kNames = {"open",    "state", "commits",
                                                             "refused", "leave", "fault"};
  return kNames[frame.index()];
}

Result<std::string> EncodeCommitsFrame(uint64_t topic, uint64_t first,
                                       std::span<const std::string_view> commits) {
  size_t size = 16;
  for (std::string_view commit : commits) size += commit.size() + 9;
  std::string out;
  out.reserve(size);
  Writer writer(out);
  if (auto head = WriteCommitsHead(writer, topic, first, commits.size()); !head) {
    return head.error();
  }
  for (std::string_view commit : commits) writer.Bytes(commit);
  return out;
}

Result<std::string> EncodeFrame(const Frame& frame) {
  std::string out;
  Writer writer(out);
  auto written = std::visit([&writer](const auto& kind) { return Write(writer, kind); }, frame);
  if (!written) return written.error();
  return out;
}

// Checks in the reference decoder's order (spec/README.md §6.3): the byte
// layer, the kind, the element count, then per kind its own fields, the
// topic, first or seq, and last the items of a list.
Result<Frame> DecodeFrame(std::string_view bytes) {
  if (auto scanned = Scan(bytes); !scanned) return scanned.error();
  Reader in(bytes);
  uint64_t count = 0;
  uint64_t kind = 0;
  if (!in.ReadArray(count) || count == 0) {
    return Bad("a frame is a non-empty array");
  }
  if (!in.ReadUint(kind) || kind >= kArity.size()) {
    return Bad("the frame kind is not a whole number from 0 to 5");
  }
  if (count != kArity[kind]) {
    return Bad("a frame of kind " + std::to_string(kind) + " has " + std::to_string(kArity[kind]) +
               " elements, not " + std::to_string(count));
  }
  Elements elements;
  for (uint64_t i = 1; i < count; ++i) {
    elements.at[i] = in.NextItem();
    in.Skip();
  }
  switch (kind) {
    case 0:
      return DecodeOpen(elements);
    case 1:
      return DecodeState(elements);
    case 2:
      return DecodeCommits(elements);
    case 3:
      return DecodeRefused(elements);
    case 4:
      return DecodeLeave(elements);
  }
  return DecodeFault(elements);
}

}  // namespace aweft::codec

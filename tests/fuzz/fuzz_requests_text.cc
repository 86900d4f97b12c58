// Fuzzes `requests` (sync/requests.h): the input is one text message that
// arrives at a Requests with an answerer registered and one ask of its own
// pending (id 1, "probe"), so that the input may be a request, an answer to
// that ask, progress, or anything else. Requests only reads text from a
// WebSocketChannel, so the message crosses a real WebSocket on loopback
// (tests/sync/loopback.h); one connection serves input after input until
// one ends it. After the input, a request of the harness's own (the
// sentinel) is sent, and the loop runs until its answer arrives or the
// socket ends.
//
// Beyond "no crash, no sanitizer report": every text the Requests sends
// parses as JSON and is one frame: an object with a numeric id and exactly
// one of name, result, progress or error, an error having a non-empty
// reason, a message and well-formed reasons; the probe's `done` runs at
// most once, with a named reason when it fails, and no progress after it;
// and a socket still open answers the sentinel within 5 s.
//
// The answerer: "echo" answers with its args, "progress" sends them twice as
// progress and answers null, "error" throws AnswerError (reason: the args if
// text; reasons: the args' strings), "throw" throws std::runtime_error, any
// other name is answered with an error with no reason (`failed`).

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "codec/cbor.h"
#include "sync/requests.h"
#include "sync/websocket.h"
#include "tests/fuzz/check.h"
#include "tests/sync/loopback.h"

namespace {

namespace codec = aweft::codec;
namespace json = boost::json;
namespace sync = aweft::sync;
using aweft::fuzz::Fail;

std::vector<codec::WireReason> Reasons(const json::value& args) {
  std::vector<codec::WireReason> out;
  if (!args.is_array()) return out;
  for (const auto& item : args.get_array()) {
    if (!item.is_string()) continue;
    std::string text(item.get_string());
    out.push_back({text, text, std::vector<std::string>{text}});
  }
  return out;
}

void Answer(const std::string& name, const json::value& args, sync::Reply reply) {
  if (name == "sentinel") return reply.SendResult("sentinel");
  if (name == "echo") return reply.SendResult(args);
  if (name == "progress") {
    reply.SendProgress(args);
    reply.SendProgress(args);
    return reply.SendResult(nullptr);
  }
  if (name == "error") {
    throw sync::AnswerError(args.is_string() ? std::string(args.get_string()) : "", "asked to fail",
                            Reasons(args));
  }
  if (name == "throw") throw std::runtime_error("asked to throw");
  reply.SendError({"", "nothing here answers " + name, {}});
}

bool IsText(const json::object& object, std::string_view key, bool nonempty = false) {
  const json::value* value = object.if_contains(key);
  return value && value->is_string() && !(nonempty && value->get_string().empty());
}

// The error part of an error frame, as requests.h spells it.
bool WellFormedError(const json::value& error) {
  const json::object* object = error.if_object();
  if (!object || !IsText(*object, "reason", true) || !IsText(*object, "message")) return false;
  const json::value* reasons = object->if_contains("reasons");
  if (!reasons) return true;
  if (!reasons->is_array()) return false;
  for (const auto& item : reasons->get_array()) {
    const json::object* entry = item.if_object();
    if (!entry || !IsText(*entry, "code") || !IsText(*entry, "message")) return false;
    if (const json::value* path = entry->if_contains("path")) {
      if (!path->is_array()) return false;
      for (const auto& step : path->get_array()) {
        if (!step.is_string()) return false;
      }
    }
  }
  return true;
}

void CheckSent(std::string_view input, const std::string& text) {
  json::parse_options options;
  options.max_depth = sync::Requests::kMaxDepth + 8;  // As Requests reads.
  boost::system::error_code ec;
  const json::value message = json::parse(text, ec, {}, options);
  if (ec) Fail(input, "this end sent a text that is not JSON", text);
  const json::object* frame = message.if_object();
  const json::value* id = frame ? frame->if_contains("id") : nullptr;
  if (!id || !id->is_number()) Fail(input, "this end sent a frame without a numeric id", text);
  const int kinds = frame->contains("name") + frame->contains("result") +
                    frame->contains("progress") + frame->contains("error");
  if (kinds != 1) Fail(input, "this end sent a frame that is not exactly one kind", text);
  if (const json::value* error = frame->if_contains("error"); error && !WellFormedError(*error)) {
    Fail(input, "this end sent a malformed error", text);
  }
}

// What the probe ask heard.
struct Probe {
  int done = 0;
  bool progress_after_done = false;
  bool unnamed = false;  // It failed without a reason.
};

// One WebSocket on loopback, kept from input to input while it stays open.
struct Net {
  aweft::sync::testing::Loopback<aweft::sync::testing::WebSocketKind> loop;
  std::unique_ptr<sync::WebSocketChannel> dialed, accepted;
  std::vector<std::string> heard;  // Texts that reached the dialing end.
  int64_t sentinels = 0;

  void Connect(std::string_view input) {
    if (dialed && !dialed->ended() && !accepted->ended()) return;
    accepted.reset();
    dialed.reset();
    auto [near, far] = loop.Join();
    if (!far) Fail(input, "no WebSocket connection on loopback", "");
    dialed = std::move(near);
    accepted = std::move(far);
    dialed->OnText([this](const std::string& text) { heard.push_back(text); });
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string_view input = text;
  // A WebSocket text message is UTF-8: Beast ends a connection that sends
  // one that is not before any Requests sees it. Not worth a reconnect, nor
  // a place in the corpus.
  if (!codec::CheckText(text)) return -1;
  static Net& net = *new Net;  // Lives to the end of the process.
  net.Connect(input);
  net.heard.clear();

  auto requests = sync::Requests::Open(*net.accepted, net.loop.io.get_executor());
  if (!requests) Fail(input, "Requests::Open refused", requests.error().ToString());
  auto unregister = requests->Answer(Answer);
  if (!unregister) Fail(input, "Requests::Answer refused", unregister.error().ToString());
  auto probe = std::make_shared<Probe>();
  sync::AskOptions options;
  options.progress = [probe](const json::value&) {
    probe->progress_after_done = probe->progress_after_done || probe->done > 0;
  };
  requests->Ask("probe", nullptr, std::move(options), [probe](sync::AskResult result) {
    ++probe->done;
    probe->unnamed = probe->unnamed || (!result && result.error().reason.empty());
  });

  const int64_t sentinel = -++net.sentinels;
  const std::string answered =
      json::serialize(json::object{{"id", sentinel}, {"result", "sentinel"}});
  net.dialed->SendText(text);
  net.dialed->SendText(json::serialize(json::object{{"id", sentinel}, {"name", "sentinel"}}));
  const bool settled = aweft::sync::testing::RunUntil(net.loop.io, [&] {
    return net.dialed->ended() || (!net.heard.empty() && net.heard.back() == answered);
  });
  if (!settled) Fail(input, "an open socket did not answer the sentinel within 5 s", "");

  for (const std::string& sent : net.heard) CheckSent(input, sent);
  if (probe->done > 1) Fail(input, "an ask's done ran more than once", "");
  if (probe->progress_after_done) Fail(input, "an ask heard progress after done", "");
  if (probe->unnamed) Fail(input, "an ask failed without a reason", "");
  return 0;
}

#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec/frame.h"
#include "codec/result.h"

namespace aweft::sync {

class TextChannel;

// Why an ask has no result (behaviour.md §3). `reason` is either one of this
// end's (closed, timeout, not-data) or whatever the answering end answered
// with, which is free text, so it is a string rather than a codec::Reason.
// A remote `message` is the answerer's text, unchanged.
struct RequestError {
  std::string reason;
  std::string message;
  std::vector<codec::WireReason> reasons;  // Empty when the error carried none.
  bool operator==(const RequestError&) const = default;
};

// What an ask ends with: the answer's result, or the error that replaced it.
using AskResult = codec::Result<boost::json::value, RequestError>;

// Thrown by an answerer to answer with a reason of its own (and, optionally,
// a list of reasons). Any other std::exception answers `failed` with its
// what(); an exception that is not a std::exception is not caught.
class AnswerError : public std::runtime_error {
 public:
  AnswerError(std::string reason, const std::string& message,
              std::vector<codec::WireReason> reasons = {})
      : std::runtime_error(message), reason_(std::move(reason)), reasons_(std::move(reasons)) {}
  const std::string& reason() const { return reason_; }
  const std::vector<codec::WireReason>& reasons() const { return reasons_; }

 private:
  std::string reason_;
  std::vector<codec::WireReason> reasons_;
};

struct AskOptions {
  // Called with each progress report, in order, on a later turn; none after
  // the ask has ended. Default: none.
  std::function<void(const boost::json::value&)> progress;
  // How long to wait for the answer before the ask fails with `timeout` (a
  // late answer is then dropped). Default: none; the ask waits until it is
  // answered or the requests end.
  std::optional<std::chrono::milliseconds> timeout;
};

// How an answerer answers one request. Copyable; every copy answers the same
// request. The first SendResult or SendError answers it; anything sent after
// that, and anything sent once the requests have stopped, is dropped. A value
// JSON cannot carry (see Requests) answers `not-data` instead. Use it on the
// executor's thread only.
class Reply {
 public:
  // Sends a progress report, unless the request is already answered.
  void SendProgress(boost::json::value value) const;
  // Answers with `value` (null for nothing).
  void SendResult(boost::json::value value) const;
  // Answers with an error; an empty reason becomes `failed`.
  void SendError(RequestError error) const;
  // True once SendResult or SendError has answered.
  bool answered() const;

  struct State;  // requests.cc
  explicit Reply(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

// What this end does with a request: answer through `reply`, now or later.
// Runs on a later turn than the request's arrival.
using Answerer =
    std::function<void(const std::string& name, const boost::json::value& args, Reply reply)>;

// JSON requests beside the link, in both directions, as text messages on a
// text channel (a WebSocket, or an in-process pair) whose frames carry the
// link (behaviour.md §3). Frames:
// {id,name,args}, {id,result}, {id,progress}, {id,error:{reason,message,
// reasons?}}. Values are Boost.JSON values; one that JSON text cannot carry
// (a number that is not finite, a string that is not UTF-8, nesting deeper
// than kMaxDepth) is refused `not-data`.
//
// A text message that is not a request or an answer ends the requests and
// closes the channel; answers for ids nobody waits on are dropped.
//
// Lives on the executor's thread, which must be the channel's. Every callback
// (done, progress, the answerer) runs on a later turn, never inside a call.
// The channel must outlive this object.
class Requests {
 public:
  static constexpr size_t kMaxDepth = 512;  // Arrays and objects inside a value.

  // Starts requests on `channel`. Refuses `duplicate` while another live
  // Requests is on the same channel (until it stops, is destroyed, or the
  // channel ends). The channel may still be connecting: asks wait for it.
  static codec::Result<Requests> Open(TextChannel& channel, boost::asio::any_io_executor executor);

  Requests(Requests&&) noexcept;
  Requests& operator=(Requests&&) noexcept;
  // Stops, and drops pending asks without calling their `done`.
  ~Requests();

  // Asks the other end; `done` hears the result or a RequestError exactly
  // once: `closed` (stopped, the socket ended or is closing), `not-data`
  // (args), `timeout`, or the remote error. Every call uses up one id.
  void Ask(std::string name, boost::json::value args, AskOptions options,
           std::function<void(AskResult)> done);
  void Ask(std::string name, boost::json::value args, std::function<void(AskResult)> done) {
    Ask(std::move(name), std::move(args), AskOptions{}, std::move(done));
  }

  // Registers the answerer; returns the function that unregisters it.
  // Refuses `answering` while one is registered. Requests that arrive with
  // none registered are answered `missing` at once.
  codec::Result<std::function<void()>> Answer(Answerer fn);

  // Fails every pending ask with `closed`, stops asking and answering, and
  // frees the channel for another Requests. Leaves the socket open.
  void Stop();

  struct State;  // requests.cc

 private:
  explicit Requests(std::shared_ptr<State> state) : state_(std::move(state)) {}

  std::shared_ptr<State> state_;  // Null once moved from.
};

}  // namespace aweft::sync

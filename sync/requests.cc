// JSON requests beside the link (behaviour.md §3). All state lives in one
// Requests::State, owned by the Requests; everything that runs later (text
// handler, closed listener, timers, answerers, replies) holds a weak_ptr to
// it, so it does nothing once the Requests is gone.

#include "sync/requests.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "codec/cbor.h"
#include "codec/json.h"
#include "sync/channel.h"

namespace aweft::sync {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

using codec::Spelled;

// Why `value` cannot cross as JSON text, or nullopt if it can. Iterative, so
// a deep value cannot exhaust the stack.
std::optional<std::string> NotData(const json::value& value) {
  std::vector<std::pair<const json::value*, size_t>> stack{{&value, 1}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if ((v->is_array() || v->is_object()) && depth > Requests::kMaxDepth) {
      return "nested deeper than " + std::to_string(Requests::kMaxDepth) + " levels";
    }
    if (v->is_double() && !std::isfinite(v->get_double())) {
      return "a number that is not finite";
    } else if (v->is_string() && !codec::CheckText(v->get_string())) {
      return "text that is not UTF-8";
    } else if (v->is_array()) {
      for (const auto& item : v->get_array()) stack.emplace_back(&item, depth + 1);
    } else if (v->is_object()) {
      for (const auto& [key, item] : v->get_object()) {
        if (!codec::CheckText(key)) return "a key that is not UTF-8";
        stack.emplace_back(&item, depth + 1);
      }
    }
  }
  return std::nullopt;
}

// JSON's integers are numbers with no fraction, whatever their spelling.
bool IsInteger(const json::value& id) {
  if (id.is_int64() || id.is_uint64()) return true;
  return id.is_double() && std::isfinite(id.get_double()) &&
         std::trunc(id.get_double()) == id.get_double();
}

// The counter value `id` names, if it can name one of our asks.
std::optional<uint64_t> AskId(const json::value& id) {
  if (id.is_uint64()) return id.get_uint64();
  if (id.is_int64() && id.get_int64() > 0) return static_cast<uint64_t>(id.get_int64());
  if (id.is_double() && id.get_double() > 0 && id.get_double() < 0x1p64) {
    return static_cast<uint64_t>(id.get_double());
  }
  return std::nullopt;
}

json::value ErrorJson(const RequestError& error) {
  json::object out{{"reason", error.reason}, {"message", error.message}};
  if (error.reasons.empty()) return out;
  json::array reasons;
  for (const auto& reason : error.reasons) {
    json::object item{{"code", reason.code}, {"message", reason.message}};
    if (reason.path) {
      json::array path;
      for (const auto& step : *reason.path) path.emplace_back(step);
      item["path"] = std::move(path);
    }
    reasons.push_back(std::move(item));
  }
  out["reasons"] = std::move(reasons);
  return out;
}

// An error frame's `error`, as the asker sees it: a malformed one is
// `failed`, a missing message is the reason, and only well-formed entries
// of `reasons` are kept.
RequestError ErrorFrom(const json::value& error) {
  const json::object* object = error.if_object();
  const json::value* reason = object ? object->if_contains("reason") : nullptr;
  if (!reason || !reason->is_string() || reason->get_string().empty()) {
    return {Spelled(codec::Reason::kFailed), "the other end answered with a malformed error", {}};
  }
  RequestError out{std::string(reason->get_string()), "", {}};
  const json::value* message = object->if_contains("message");
  out.message = message && message->is_string() ? std::string(message->get_string()) : out.reason;
  const json::value* reasons = object->if_contains("reasons");
  if (!reasons || !reasons->is_array()) return out;
  for (const auto& item : reasons->get_array()) {
    const json::object* entry = item.if_object();
    const json::value* code = entry ? entry->if_contains("code") : nullptr;
    const json::value* text = entry ? entry->if_contains("message") : nullptr;
    if (!code || !code->is_string() || !text || !text->is_string()) continue;
    codec::WireReason wire{std::string(code->get_string()), std::string(text->get_string()), {}};
    if (const json::value* path = entry->if_contains("path"); path && path->is_array()) {
      std::vector<std::string> steps;
      for (const auto& step : path->get_array()) {
        if (step.is_string()) steps.emplace_back(step.get_string());
      }
      if (steps.size() == path->get_array().size()) wire.path = std::move(steps);
    }
    out.reasons.push_back(std::move(wire));
  }
  return out;
}

// Which Requests holds each channel. One io_context normally means one
// thread, but several nodes may share a process, so the map is locked.
class Holders {
 public:
  static Holders& Get() {
    static Holders holders;
    return holders;
  }
  Requests::State* Holder(const TextChannel* channel) {
    std::lock_guard lock(mutex_);
    auto it = holders_.find(channel);
    return it == holders_.end() ? nullptr : it->second;
  }
  void Hold(const TextChannel* channel, Requests::State* state) {
    std::lock_guard lock(mutex_);
    holders_[channel] = state;
  }
  void Release(const TextChannel* channel, Requests::State* state) {
    std::lock_guard lock(mutex_);
    if (auto it = holders_.find(channel); it != holders_.end() && it->second == state) {
      holders_.erase(it);
    }
  }

 private:
  std::mutex mutex_;
  std::map<const TextChannel*, Requests::State*> holders_;
};

}  // namespace

struct Reply::State {
  std::weak_ptr<Requests::State> requests;
  json::value id;  // Echoed as it arrived.
  bool answered = false;
};

struct Requests::State : std::enable_shared_from_this<State> {
  struct Pending {
    std::string name;
    std::function<void(const json::value&)> progress;
    std::function<void(AskResult)> done;
    std::unique_ptr<asio::steady_timer> timer;  // Only with a timeout.
  };

  State(TextChannel& channel, asio::any_io_executor executor)
      : channel(channel), executor(std::move(executor)) {}

  TextChannel& channel;
  asio::any_io_executor executor;
  uint64_t next_id = 1;
  std::map<uint64_t, Pending> pending;
  Answerer answerer;
  uint64_t answerer_serial = 0;  // Tells an old unregister function apart.
  uint64_t closed_handle = 0;
  bool over = false;        // Stopped, or the socket ended: nothing more.
  std::string end_message;  // Why, for asks that fail `closed`.

  void Start();
  void Ask(std::string name, json::value args, AskOptions options,
           std::function<void(AskResult)> done);
  void OnText(const std::string& text);
  void OnRequest(json::value id, std::string name, json::value args);
  void OnAnswer(const json::value& id, const json::object& frame);
  void TimeOut(uint64_t id);
  void Finish(std::string message, bool tell);
  void Send(const json::object& frame) { channel.SendText(codec::WriteJson(frame)); }
  void Deliver(std::function<void(AskResult)> done, AskResult result) {
    asio::post(executor, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }
};

void Requests::State::Start() {
  Holders::Get().Hold(&channel, this);
  std::weak_ptr<State> weak = weak_from_this();
  channel.OnText([weak](const std::string& text) {
    if (auto self = weak.lock()) self->OnText(text);
  });
  closed_handle = channel.Closed([weak] {
    auto self = weak.lock();
    if (!self) return;
    const auto& why = self->channel.end_reason();
    self->Finish("the socket closed" + (why ? " (" + why->ToString() + ")" : ""), true);
  });
}

void Requests::State::Ask(std::string name, json::value args, AskOptions options,
                          std::function<void(AskResult)> done) {
  const uint64_t id = next_id++;  // Used up even if the ask fails here.
  if (over || channel.ended()) {
    return Deliver(std::move(done), RequestError{Spelled(codec::Reason::kClosed),
                                                 over ? end_message : "the socket is closing",
                                                 {}});
  }
  std::optional<std::string> why = NotData(args);
  if (!codec::CheckText(name)) why = "a name that is not UTF-8";
  if (why) {
    return Deliver(std::move(done),
                   RequestError{Spelled(codec::Reason::kNotData),
                                "the request to " + name + " cannot be carried as JSON: " + *why,
                                {}});
  }
  json::object frame{{"id", id}, {"name", name}, {"args", std::move(args)}};
  Pending& entry = pending[id];
  entry.name = std::move(name);
  entry.progress = std::move(options.progress);
  entry.done = std::move(done);
  if (options.timeout) {
    entry.timer = std::make_unique<asio::steady_timer>(executor, *options.timeout);
    entry.timer->async_wait([weak = weak_from_this(), id](boost::system::error_code ec) {
      auto self = weak.lock();
      if (!ec && self) self->TimeOut(id);
    });
  }
  // While the socket is still connecting, the channel holds text in order.
  Send(frame);
}

void Requests::State::OnText(const std::string& text) {
  if (over) return;
  json::parse_options options;
  options.max_depth = kMaxDepth + 8;  // Room for the frame around a value.
  boost::system::error_code ec;
  json::value message = codec::ParseJson(text, ec, options);
  // spec: a text that is not one of the four frames ends requests and
  // closes the socket, as bytes that are not a frame end the link.
  const json::object* frame = ec ? nullptr : message.if_object();
  const json::value* id = frame ? frame->if_contains("id") : nullptr;
  const bool known = frame && (frame->contains("name") || frame->contains("result") ||
                               frame->contains("progress") || frame->contains("error"));
  if (!id || !IsInteger(*id) || !known) {
    Finish("the other end sent a text message that is not a request frame", true);
    channel.Close();
    return;
  }
  // A string name makes a request; anything else answers one of our asks,
  // so the two ends' ids never meet.
  if (const json::value* name = frame->if_contains("name"); name && name->is_string()) {
    const json::value* args = frame->if_contains("args");
    return OnRequest(*id, std::string(name->get_string()), args ? *args : json::value());
  }
  OnAnswer(*id, *frame);
}

void Requests::State::OnRequest(json::value id, std::string name, json::value args) {
  if (!answerer) {
    RequestError missing{Spelled(codec::Reason::kMissing), "nothing here answers " + name, {}};
    return Send(json::object{{"id", std::move(id)}, {"error", ErrorJson(missing)}});
  }
  Reply reply(std::make_shared<Reply::State>(Reply::State{weak_from_this(), std::move(id)}));
  asio::post(executor, [weak = weak_from_this(), fn = answerer, reply, name = std::move(name),
                        args = std::move(args)] {
    if (auto self = weak.lock(); !self || self->over) return;  // Stopped meanwhile.
    try {
      fn(name, args, reply);
    } catch (const AnswerError& e) {
      reply.SendError({e.reason(), e.what(), e.reasons()});
    } catch (const std::exception& e) {
      reply.SendError({Spelled(codec::Reason::kFailed), e.what(), {}});
    }
  });
}

// Precedence when a frame carries more than one: error, result, progress;
// a frame with only a non-string name is a result of null.
void Requests::State::OnAnswer(const json::value& id, const json::object& frame) {
  auto ask = AskId(id);
  auto it = ask ? pending.find(*ask) : pending.end();
  if (it == pending.end()) return;  // Timed out, or never ours: dropped.
  const json::value* error = frame.if_contains("error");
  const json::value* result = frame.if_contains("result");
  const json::value* progress = frame.if_contains("progress");
  if (progress && !error && !result) {
    if (it->second.progress) {
      asio::post(executor, [fn = it->second.progress, value = *progress] { fn(value); });
    }
    return;
  }
  auto done = std::move(it->second.done);
  pending.erase(it);
  if (error) return Deliver(std::move(done), ErrorFrom(*error));
  Deliver(std::move(done), result ? *result : json::value());
}

void Requests::State::TimeOut(uint64_t id) {
  auto it = pending.find(id);
  if (it == pending.end()) return;
  Pending entry = std::move(it->second);
  pending.erase(it);
  Deliver(std::move(entry.done),
          RequestError{
              Spelled(codec::Reason::kTimeout), "no answer to " + entry.name + " in time", {}});
}

// Ends asking and answering for good. `tell` says whether pending asks hear
// `closed` (not when the Requests is being destroyed).
void Requests::State::Finish(std::string message, bool tell) {
  if (over) return;
  over = true;
  end_message = std::move(message);
  Holders::Get().Release(&channel, this);
  channel.Unsubscribe(closed_handle);
  auto waiting = std::move(pending);
  pending.clear();
  if (!tell) return;
  for (auto& [id, entry] : waiting) {
    Deliver(std::move(entry.done), RequestError{Spelled(codec::Reason::kClosed), end_message, {}});
  }
}

// --- Reply

void Reply::SendProgress(json::value value) const {
  auto requests = state_->requests.lock();
  if (state_->answered || !requests || requests->over) return;
  if (auto why = NotData(value)) {
    return SendError({Spelled(codec::Reason::kNotData),
                      "a progress report cannot be carried as JSON: " + *why,
                      {}});
  }
  requests->Send(json::object{{"id", state_->id}, {"progress", std::move(value)}});
}

void Reply::SendResult(json::value value) const {
  auto requests = state_->requests.lock();
  if (state_->answered || !requests || requests->over) return;
  if (auto why = NotData(value)) {
    return SendError(
        {Spelled(codec::Reason::kNotData), "the result cannot be carried as JSON: " + *why, {}});
  }
  state_->answered = true;
  requests->Send(json::object{{"id", state_->id}, {"result", std::move(value)}});
}

void Reply::SendError(RequestError error) const {
  auto requests = state_->requests.lock();
  if (state_->answered || !requests || requests->over) return;
  if (error.reason.empty()) error.reason = Spelled(codec::Reason::kFailed);
  json::value body = ErrorJson(error);
  if (auto why = NotData(body)) {
    body = ErrorJson(
        {Spelled(codec::Reason::kNotData), "the error cannot be carried as JSON: " + *why, {}});
  }
  state_->answered = true;
  requests->Send(json::object{{"id", state_->id}, {"error", std::move(body)}});
}

bool Reply::answered() const { return state_->answered; }

// --- Requests

codec::Result<Requests> Requests::Open(TextChannel& channel, asio::any_io_executor executor) {
  if (State* holder = Holders::Get().Holder(&channel)) {
    if (!channel.ended()) {
      return codec::Refusal{codec::Reason::kDuplicate, "this socket already has a request channel"};
    }
    // The socket has ended but the holder has not heard yet: it is over.
    holder->Finish("the socket closed", true);
  }
  auto state = std::make_shared<State>(channel, std::move(executor));
  state->Start();
  return Requests(std::move(state));
}

Requests::Requests(Requests&&) noexcept = default;

Requests& Requests::operator=(Requests&& other) noexcept {
  if (this != &other) {
    if (state_) state_->Finish("the request channel was replaced", false);
    state_ = std::move(other.state_);
  }
  return *this;
}

Requests::~Requests() {
  if (state_) state_->Finish("the request channel was destroyed", false);
}

void Requests::Ask(std::string name, json::value args, AskOptions options,
                   std::function<void(AskResult)> done) {
  state_->Ask(std::move(name), std::move(args), std::move(options), std::move(done));
}

codec::Result<std::function<void()>> Requests::Answer(Answerer fn) {
  if (state_->answerer) {
    return codec::Refusal{codec::Reason::kAnswering, "an answerer is already registered"};
  }
  state_->answerer = std::move(fn);
  const uint64_t serial = ++state_->answerer_serial;
  return std::function<void()>([weak = std::weak_ptr<State>(state_), serial] {
    auto state = weak.lock();
    if (state && state->answerer_serial == serial) state->answerer = nullptr;
  });
}

void Requests::Stop() { state_->Finish("the request channel was stopped", true); }

}  // namespace aweft::sync

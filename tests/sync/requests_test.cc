#include "sync/requests.h"

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sync/link.h"
#include "sync/snapshot.h"
#include "sync/websocket.h"

namespace aweft::sync {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

// Two ends of one WebSocket on loopback and the loop that runs them. Every
// wait is bounded, so a broken rule fails a check instead of hanging.
struct Loopback {
  boost::asio::io_context io;
  AsioScheduler scheduler{io.get_executor()};
  std::function<void(WebSocketChannel&)> on_accept;  // Runs before any read.
  std::unique_ptr<WebSocketChannel> accepted;
  WebSocketListener listener{io.get_executor(), scheduler, "127.0.0.1", 0,
                             [this](std::unique_ptr<WebSocketChannel> channel) {
                               accepted = std::move(channel);
                               if (on_accept) on_accept(*accepted);
                             }};
  std::unique_ptr<WebSocketChannel> dialed = WebSocketChannel::Dial(
      io.get_executor(), scheduler, "ws://127.0.0.1:" + std::to_string(listener.port()) + "/");

  // Runs the loop until `done` holds or two seconds pass.
  template <typename F>
  bool RunUntil(F done) {
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_for(5ms);
    }
    return done();
  }
  // Runs the loop for `span`: long enough for anything stray to arrive.
  void RunFor(std::chrono::milliseconds span) {
    const auto deadline = std::chrono::steady_clock::now() + span;
    while (std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_for(5ms);
    }
  }
  bool Connect() {
    return RunUntil([&] { return accepted != nullptr; });
  }

  Requests Open(WebSocketChannel& channel) {
    auto requests = Requests::Open(channel, io.get_executor());
    REQUIRE(requests);
    return std::move(*requests);
  }
};

// What one ask heard.
struct Outcome {
  std::optional<AskResult> result;
  int calls = 0;
  std::vector<json::value> progress;
  size_t progress_before_done = 0;

  std::function<void(AskResult)> Done() {
    return [this](AskResult result) {
      ++calls;
      progress_before_done = progress.size();
      this->result = std::move(result);
    };
  }
  AskOptions Options(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    return {[this](const json::value& value) { progress.push_back(value); }, timeout};
  }
  bool ok() const { return result && result->has_value(); }
  const json::value& value() const { return **result; }
  const RequestError& error() const { return result->error(); }
};

// Records the text messages a channel receives (a hand-written peer).
std::vector<std::string>& RecordText(WebSocketChannel& channel, std::vector<std::string>& texts) {
  channel.OnText([&texts](const std::string& text) { texts.push_back(text); });
  return texts;
}

// Answers "echo" with its args and anything else with null.
void Echo(const std::string& name, const json::value& args, Reply reply) {
  reply.SendResult(name == "echo" ? args : json::value());
}

TEST_CASE("requests cross as JSON text frames, with null for what is absent", "[sync][requests]") {
  Loopback net;
  REQUIRE(net.Connect());
  std::vector<std::string> wire;
  RecordText(*net.accepted, wire);  // The far end is written by hand.
  Requests asks = net.Open(*net.dialed);
  REQUIRE(asks.Answer(Echo));

  Outcome daily, ping;
  asks.Ask("report/Daily", json::parse(R"({"day":"mon"})"), daily.Done());
  asks.Ask("ping", nullptr, ping.Done());
  REQUIRE(net.RunUntil([&] { return wire.size() == 2; }));
  CHECK(wire[0] == R"({"id":1,"name":"report/Daily","args":{"day":"mon"}})");
  CHECK(wire[1] == R"({"id":2,"name":"ping","args":null})");
  net.accepted->SendText(R"({"id":1,"result":{"rows":3}})");
  net.accepted->SendText(R"({"id":2,"result":null})");
  REQUIRE(net.RunUntil([&] { return daily.result && ping.result; }));
  REQUIRE(daily.ok());
  CHECK(daily.value() == json::parse(R"({"rows":3})"));
  REQUIRE(ping.ok());
  CHECK(ping.value().is_null());

  // This end answers the hand-written one: args absent arrive as null.
  net.accepted->SendText(R"({"id":7,"name":"echo","args":[1,"two"]})");
  net.accepted->SendText(R"({"id":8,"name":"echo"})");
  net.accepted->SendText(R"({"id":9,"name":"other","args":{}})");
  REQUIRE(net.RunUntil([&] { return wire.size() == 5; }));
  CHECK(wire[2] == R"({"id":7,"result":[1,"two"]})");
  CHECK(wire[3] == R"({"id":8,"result":null})");
  CHECK(wire[4] == R"({"id":9,"result":null})");
}

TEST_CASE("progress arrives in order before the result, and none is sent after it",
          "[sync][requests]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests answering = net.Open(*net.accepted);
  REQUIRE(answering.Answer([](const std::string& name, const json::value&, Reply reply) {
    if (name == "ping") return reply.SendResult("pong");
    for (int i = 1; i <= 3; ++i) reply.SendProgress(i);
    reply.SendResult("done");
    reply.SendProgress(4);  // Dropped here, at the answering end.
    reply.SendError({"late", "after the answer", {}});
    CHECK(reply.answered());
  }));

  SECTION("on the wire") {
    std::vector<std::string> wire;
    RecordText(*net.dialed, wire);
    net.dialed->SendText(R"({"id":1,"name":"job","args":null})");
    net.dialed->SendText(R"({"id":2,"name":"ping","args":null})");
    REQUIRE(net.RunUntil([&] { return wire.size() >= 5; }));
    net.RunFor(30ms);
    CHECK(wire == std::vector<std::string>{R"({"id":1,"progress":1})", R"({"id":1,"progress":2})",
                                           R"({"id":1,"progress":3})",
                                           R"({"id":1,"result":"done"})",
                                           R"({"id":2,"result":"pong"})"});
  }
  SECTION("at the asking end") {
    Requests asks = net.Open(*net.dialed);
    Outcome job;
    asks.Ask("job", nullptr, job.Options(), job.Done());
    REQUIRE(net.RunUntil([&] { return job.result.has_value(); }));
    REQUIRE(job.ok());
    CHECK(job.value() == "done");
    CHECK(job.progress == std::vector<json::value>{1, 2, 3});
    CHECK(job.progress_before_done == 3);
  }
}

TEST_CASE("an answerer's error crosses with its reason, message and reasons",
          "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests answering = net.Open(*net.accepted);
  Requests asks = net.Open(*net.dialed);
  const std::vector<codec::WireReason> why = {
      {"rows", "too many rows", std::vector<std::string>{"report", "rows"}},
      {"cols", "too wide", std::nullopt}};
  REQUIRE(answering.Answer([&](const std::string& name, const json::value&, Reply reply) {
    if (name == "quota") throw AnswerError("quota", "over the daily limit, said the far end", why);
    if (name == "crash") throw std::runtime_error("disk on fire");
    if (name == "busy") return reply.SendError({"busy", "try later", {}});
    reply.SendError({"", "no reason given", {}});
  }));

  Outcome quota, crash, busy, blank;
  asks.Ask("quota", nullptr, quota.Done());
  asks.Ask("crash", nullptr, crash.Done());
  asks.Ask("busy", nullptr, busy.Done());
  asks.Ask("blank", nullptr, blank.Done());
  REQUIRE(
      net.RunUntil([&] { return quota.result && crash.result && busy.result && blank.result; }));
  REQUIRE_FALSE(quota.ok());
  // The remote message is kept word for word.
  CHECK(quota.error() == RequestError{"quota", "over the daily limit, said the far end", why});
  CHECK(crash.error() == RequestError{"failed", "disk on fire", {}});
  CHECK(busy.error() == RequestError{"busy", "try later", {}});
  CHECK(blank.error() == RequestError{"failed", "no reason given", {}});
}

TEST_CASE("a request nobody answers is missing, and a second answerer is refused answering",
          "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests answering = net.Open(*net.accepted);
  Requests asks = net.Open(*net.dialed);
  auto Ask = [&](const std::string& name) {
    Outcome outcome;
    asks.Ask(name, nullptr, outcome.Done());
    REQUIRE(net.RunUntil([&] { return outcome.result.has_value(); }));
    return outcome;
  };

  Outcome missing = Ask("report");
  CHECK(missing.error() == RequestError{"missing", "nothing here answers report", {}});

  auto first = answering.Answer(Echo);
  REQUIRE(first);
  auto second = answering.Answer(Echo);
  REQUIRE_FALSE(second);
  CHECK(codec::Name(second.error().reason) == "answering");
  (*first)();
  auto third = answering.Answer(
      [](const std::string&, const json::value&, Reply reply) { reply.SendResult("third"); });
  REQUIRE(third);
  (*first)();  // An old unregister function leaves the new answerer alone.
  Outcome answered = Ask("report");
  REQUIRE(answered.ok());
  CHECK(answered.value() == "third");
  (*third)();
  CHECK(Ask("report").error().reason == "missing");
}

TEST_CASE("an ask times out, and its late answer is dropped", "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests answering = net.Open(*net.accepted);
  Requests asks = net.Open(*net.dialed);
  std::optional<Reply> held;
  REQUIRE(answering.Answer([&](const std::string& name, const json::value&, Reply reply) {
    if (name != "slow") return reply.SendResult("pong");
    held.emplace(reply);
  }));

  Outcome slow, ping;
  asks.Ask("slow", nullptr, slow.Options(50ms), slow.Done());
  REQUIRE(net.RunUntil([&] { return slow.result.has_value(); }));
  CHECK(slow.error().reason == "timeout");
  REQUIRE(held);
  held->SendProgress("late");
  held->SendResult("late");
  asks.Ask("ping", nullptr, ping.Options(50ms), ping.Done());  // Answered in time.
  REQUIRE(net.RunUntil([&] { return ping.result.has_value(); }));
  net.RunFor(100ms);
  CHECK(slow.calls == 1);
  CHECK(slow.progress.empty());
  CHECK(ping.calls == 1);
  CHECK(ping.ok());
}

TEST_CASE("the socket closing fails pending and later asks with closed",
          "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests answering = net.Open(*net.accepted);
  Requests asks = net.Open(*net.dialed);
  std::optional<Reply> held;
  REQUIRE(answering.Answer(
      [&](const std::string&, const json::value&, Reply reply) { held.emplace(reply); }));

  Outcome pending;
  asks.Ask("slow", nullptr, pending.Done());
  REQUIRE(net.RunUntil([&] { return held.has_value(); }));
  net.accepted->Close();
  REQUIRE(net.RunUntil([&] { return pending.result.has_value(); }));
  CHECK(pending.error().reason == "closed");
  held->SendResult("too late");  // Nothing to send it on: dropped.

  Outcome later, there;
  asks.Ask("again", nullptr, later.Done());
  answering.Ask("back", nullptr, there.Done());
  REQUIRE(net.RunUntil([&] { return later.result && there.result; }));
  CHECK(later.error().reason == "closed");
  CHECK(there.error().reason == "closed");
  CHECK(pending.calls == 1);
}

TEST_CASE("a socket that is closing refuses an ask with closed, on a later turn",
          "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests asks = net.Open(*net.dialed);
  net.dialed->Close();
  Outcome refused;
  asks.Ask("report", nullptr, refused.Done());
  CHECK(refused.calls == 0);  // Never inside Ask.
  REQUIRE(net.RunUntil([&] { return refused.result.has_value(); }));
  CHECK(refused.error().reason == "closed");
}

TEST_CASE("stop fails pending asks and leaves the socket to the link", "[sync][requests]") {
  Loopback net;
  REQUIRE(net.Connect());
  Link client(*net.dialed, net.scheduler), server(*net.accepted, net.scheduler);
  Requests answering = net.Open(*net.accepted);
  Requests asks = net.Open(*net.dialed);
  std::optional<Reply> held;
  REQUIRE(answering.Answer([&](const std::string& name, const json::value&, Reply reply) {
    if (name != "slow") return reply.SendResult("pong");
    held.emplace(reply);
  }));
  REQUIRE(asks.Answer(Echo));

  Outcome pending;
  asks.Ask("slow", nullptr, pending.Done());
  REQUIRE(net.RunUntil([&] { return held.has_value(); }));
  asks.Stop();
  Outcome later, unanswered;
  asks.Ask("ping", nullptr, later.Done());
  answering.Ask("echo", 1, unanswered.Options(100ms), unanswered.Done());
  REQUIRE(net.RunUntil([&] { return pending.result && later.result && unanswered.result; }));
  CHECK(pending.error().reason == "closed");
  CHECK(later.error().reason == "closed");
  CHECK(unanswered.error().reason == "timeout");  // A stopped end does not answer.
  held->SendResult("after stop");
  net.RunFor(20ms);
  CHECK(pending.calls == 1);

  // The socket is still open: the link on it works, and so do new requests.
  CHECK_FALSE(net.dialed->ended());
  Document source(Kind::kObject);
  REQUIRE(source.Set(source.root(), "title", std::string("plan")));
  REQUIRE(server.Share("board", &source));
  auto shared = client.Share("board", nullptr);
  REQUIRE(shared);
  REQUIRE(net.RunUntil([&] { return (*shared)->ready(); }));
  CHECK(TakeSnapshot(*(*shared)->document()) == TakeSnapshot(source));
  Requests again = net.Open(*net.dialed);
  Outcome ping;
  again.Ask("ping", nullptr, ping.Done());
  REQUIRE(net.RunUntil([&] { return ping.result.has_value(); }));
  REQUIRE(ping.ok());
  CHECK(ping.value() == "pong");
}

TEST_CASE("asks made while the socket connects are sent once it opens", "[sync][requests]") {
  Loopback net;
  std::optional<Requests> answering;
  net.on_accept = [&](WebSocketChannel& channel) {
    answering.emplace(net.Open(channel));
    REQUIRE(answering->Answer(Echo));
  };
  Requests asks = net.Open(*net.dialed);  // Nothing has run: still connecting.
  Outcome first, second;
  asks.Ask("echo", 1, first.Done());
  asks.Ask("echo", "two", second.Done());
  REQUIRE(net.RunUntil([&] { return first.result && second.result; }));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first.value() == 1);
  CHECK(second.value() == "two");
}

TEST_CASE("a link's commits and requests share one socket", "[sync][requests][websocket]") {
  Loopback net;
  REQUIRE(net.Connect());
  Link client(*net.dialed, net.scheduler), server(*net.accepted, net.scheduler);
  Requests server_requests = net.Open(*net.accepted);
  Requests client_requests = net.Open(*net.dialed);
  Document source(Kind::kObject);
  REQUIRE(source.Set(source.root(), "title", std::string("plan")));
  REQUIRE(server_requests.Answer([&](const std::string&, const json::value&, Reply reply) {
    reply.SendResult(source.root().Get("done") != nullptr);
  }));
  REQUIRE(client_requests.Answer(Echo));
  REQUIRE(server.Share("board", &source));
  auto shared = client.Share("board", nullptr);
  REQUIRE(shared);
  REQUIRE(net.RunUntil([&] { return (*shared)->ready(); }));

  // A commit and a request made in one turn both cross, each its own way.
  Document& copy = *(*shared)->document();
  REQUIRE(copy.Set(copy.root(), "done", true));
  Outcome asked, back;
  client_requests.Ask("done?", nullptr, asked.Done());
  server_requests.Ask("echo", "hello", back.Done());
  REQUIRE(net.RunUntil(
      [&] { return source.root().Get("done") != nullptr && asked.result && back.result; }));
  CHECK(asked.ok());
  REQUIRE(back.ok());
  CHECK(back.value() == "hello");
  CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
  CHECK_FALSE(net.dialed->ended());
}

TEST_CASE(
    "a text that is not a request frame closes the socket, while stray answers and binary do not",
    "[sync][requests][refusal]") {
  const std::string bad = GENERATE(as<std::string>(), "not json", R"("text")", "[1,2]", "null",
                                   R"({"id":"1","result":1})", R"({"id":1})");
  Loopback net;
  REQUIRE(net.Connect());
  Requests asks = net.Open(*net.accepted);
  std::vector<std::string> wire;
  RecordText(*net.dialed, wire);
  bool dialed_closed = false;
  net.dialed->Closed([&] { dialed_closed = true; });

  Outcome job;
  asks.Ask("job", nullptr, job.Options(), job.Done());
  REQUIRE(net.RunUntil([&] { return wire.size() == 1; }));
  net.dialed->SendText(R"({"id":99,"result":1})");  // Nobody waits on 99.
  net.dialed->SendText(R"({"id":-1,"error":{"reason":"x"}})");
  net.dialed->SendText(R"({"id":2.0,"progress":"stray"})");
  net.dialed->Send(codec::LeaveFrame{1});  // Binary: the link's, not ours.
  net.dialed->SendText(R"({"id":1,"progress":"alive"})");
  REQUIRE(net.RunUntil([&] { return !job.progress.empty(); }));
  CHECK(job.progress == std::vector<json::value>{"alive"});
  CHECK_FALSE(job.result.has_value());

  INFO(bad);
  net.dialed->SendText(bad);
  REQUIRE(net.RunUntil([&] { return job.result && dialed_closed; }));
  CHECK(job.error().reason == "closed");
  CHECK(net.accepted->ended());
  Outcome after;
  asks.Ask("job", nullptr, after.Done());
  REQUIRE(net.RunUntil([&] { return after.result.has_value(); }));
  CHECK(after.error().reason == "closed");
}

TEST_CASE("values JSON cannot carry are refused not-data at both ends",
          "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  json::value deep = json::array();
  for (size_t i = 1; i < Requests::kMaxDepth + 1; ++i) deep = json::array{deep};

  SECTION("asking: refused here, and the id is used up") {
    std::vector<std::string> wire;
    RecordText(*net.accepted, wire);
    Requests asks = net.Open(*net.dialed);
    Outcome nan, text, nested, fine;
    asks.Ask("x", std::nan(""), nan.Done());
    asks.Ask("x", json::object{{"name", "\xff"}}, text.Done());
    asks.Ask("x", deep, nested.Done());
    asks.Ask("x", 1, fine.Done());
    REQUIRE(net.RunUntil([&] { return nan.result && text.result && nested.result; }));
    CHECK(nan.error().reason == "not-data");
    CHECK(text.error().reason == "not-data");
    CHECK(nested.error().reason == "not-data");
    REQUIRE(net.RunUntil([&] { return !wire.empty(); }));
    CHECK(wire == std::vector<std::string>{R"({"id":4,"name":"x","args":1})"});
  }
  SECTION("answering: the asker hears not-data") {
    Requests answering = net.Open(*net.accepted);
    Requests asks = net.Open(*net.dialed);
    REQUIRE(answering.Answer([&](const std::string& name, const json::value& args, Reply reply) {
      if (name == "inf") return reply.SendResult(INFINITY);
      if (name == "progress") return reply.SendProgress(std::nan(""));
      reply.SendResult(args);  // As deep as may be sent: it crosses back.
    }));
    Outcome inf, progress, nested;
    asks.Ask("inf", nullptr, inf.Done());
    asks.Ask("progress", nullptr, progress.Options(), progress.Done());
    json::value deepest = deep.as_array()[0];  // kMaxDepth levels.
    asks.Ask("echo", deepest, nested.Done());
    REQUIRE(net.RunUntil([&] { return inf.result && progress.result && nested.result; }));
    CHECK(inf.error().reason == "not-data");
    CHECK(progress.error().reason == "not-data");
    CHECK(progress.progress.empty());
    REQUIRE(nested.ok());
    CHECK(nested.value() == deepest);
  }
}

TEST_CASE("a malformed error fails the ask with failed, and a missing message is the reason",
          "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());
  std::vector<std::string> wire;
  RecordText(*net.accepted, wire);
  Requests asks = net.Open(*net.dialed);
  std::vector<Outcome> outcomes(5);
  for (auto& outcome : outcomes) asks.Ask("x", nullptr, outcome.Done());
  REQUIRE(net.RunUntil([&] { return wire.size() == 5; }));
  net.accepted->SendText(R"({"id":1,"error":"boom"})");
  net.accepted->SendText(R"({"id":2,"error":{"message":"no reason"}})");
  net.accepted->SendText(R"({"id":3,"error":{"reason":"nope"}})");
  net.accepted->SendText(R"({"id":4,"error":{"reason":"x","message":"m","reasons":[)"
                         R"({"code":"c","message":"d"},{"code":5},"junk",)"
                         R"({"code":"e","message":"f","path":["a",1]},)"
                         R"({"code":"g","message":"h","path":["p"]}]}})");
  net.accepted->SendText(R"({"id":5,"error":null})");
  REQUIRE(net.RunUntil([&] {
    for (auto& outcome : outcomes) {
      if (!outcome.result) return false;
    }
    return true;
  }));
  CHECK(outcomes[0].error().reason == "failed");
  CHECK(outcomes[1].error().reason == "failed");
  CHECK(outcomes[2].error() == RequestError{"nope", "nope", {}});
  CHECK(outcomes[3].error() == RequestError{"x",
                                            "m",
                                            {{"c", "d", std::nullopt},
                                             {"e", "f", std::nullopt},
                                             {"g", "h", std::vector<std::string>{"p"}}}});
  CHECK(outcomes[4].error().reason == "failed");
}

TEST_CASE("concurrent asks from both ends keep their ids apart", "[sync][requests]") {
  Loopback net;
  REQUIRE(net.Connect());
  Requests server = net.Open(*net.accepted);
  Requests client = net.Open(*net.dialed);
  std::vector<std::pair<json::value, Reply>> held;
  REQUIRE(server.Answer([&](const std::string& name, const json::value& args, Reply reply) {
    if (name == "who") return reply.SendResult("server");
    held.emplace_back(args, reply);
    if (held.size() < 3) return;
    // Answered in reverse: each answer finds its own ask by id.
    for (auto it = held.rbegin(); it != held.rend(); ++it) it->second.SendResult(it->first);
  }));
  REQUIRE(client.Answer(
      [](const std::string&, const json::value&, Reply reply) { reply.SendResult("client"); }));

  Outcome from_client, from_server;
  client.Ask("who", nullptr, from_client.Done());  // Both are id 1.
  server.Ask("who", nullptr, from_server.Done());
  std::vector<Outcome> echoes(3);
  for (size_t i = 0; i < echoes.size(); ++i) client.Ask("echo", i * 10, echoes[i].Done());
  REQUIRE(net.RunUntil([&] {
    return from_client.result && from_server.result && echoes[0].result && echoes[1].result &&
           echoes[2].result;
  }));
  CHECK(from_client.value() == "server");
  CHECK(from_server.value() == "client");
  for (size_t i = 0; i < echoes.size(); ++i) {
    REQUIRE(echoes[i].ok());
    CHECK(echoes[i].value() == i * 10);
  }
}

TEST_CASE(
    "a second Requests on one socket is refused duplicate until the first stops or the "
    "socket ends",
    "[sync][requests][refusal]") {
  Loopback net;
  REQUIRE(net.Connect());

  SECTION("until stop, or the first is destroyed") {
    Requests first = net.Open(*net.dialed);
    auto second = Requests::Open(*net.dialed, net.io.get_executor());
    REQUIRE_FALSE(second);
    CHECK(codec::Name(second.error().reason) == "duplicate");
    first.Stop();
    {
      Requests third = net.Open(*net.dialed);
      CHECK_FALSE(Requests::Open(*net.dialed, net.io.get_executor()));
    }
    CHECK(Requests::Open(*net.dialed, net.io.get_executor()));
  }
  SECTION("until the socket ends") {
    Requests first = net.Open(*net.accepted);
    CHECK_FALSE(Requests::Open(*net.accepted, net.io.get_executor()));
    Outcome pending;
    first.Ask("x", nullptr, pending.Done());  // Nothing there answers.
    net.dialed->Close();
    REQUIRE(net.RunUntil([&] { return pending.result.has_value(); }));
    CHECK(pending.error().reason == "closed");
    Requests second = net.Open(*net.accepted);
    Outcome later;
    second.Ask("x", nullptr, later.Done());
    REQUIRE(net.RunUntil([&] { return later.result.has_value(); }));
    CHECK(later.error().reason == "closed");
  }
}

}  // namespace
}  // namespace aweft::sync

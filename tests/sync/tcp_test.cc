// The TCP channel, and the channel contract (behaviour.md §2.1, §7 item 29)
// over both socket kinds on loopback.

#include "sync/tcp.h"

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "sync/link.h"
#include "sync/snapshot.h"
#include "tests/sync/loopback.h"

namespace aweft::sync::testing {
namespace {

namespace asio = boost::asio;

uint64_t TopicOf(const codec::Frame& frame) { return std::get<codec::LeaveFrame>(frame).topic; }

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST_CASE("a link over TCP on loopback shares and trades commits", "[sync][tcp]") {
  Loopback<TcpKind> net;
  auto dialed = net.Dial();
  Link client(*dialed, net.scheduler);
  Document source(Kind::kObject);
  REQUIRE(source.Set(source.root(), "title", std::string("plan")));
  auto shared = client.Share("board", nullptr);  // Sent while connecting: held.
  REQUIRE(shared);
  REQUIRE(RunUntil(net.io, [&] { return !net.accepted.empty(); }));
  Link server(*net.accepted.front(), net.scheduler);
  REQUIRE(server.Share("board", &source));
  REQUIRE(RunUntil(net.io, [&] { return (*shared)->ready(); }));
  Document& copy = *(*shared)->document();
  CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
  REQUIRE(copy.Set(copy.root(), "done", true));
  REQUIRE(RunUntil(net.io, [&] { return source.root().Get("done") != nullptr; }));
  CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
  client.Close();
  REQUIRE(RunUntil(net.io, [&] { return server.closed(); }));
}

TEMPLATE_TEST_CASE("a socket channel delivers in order and never inside Send",
                   "[sync][channel][tcp][websocket]", WebSocketKind, TcpKind) {
  Loopback<TestType> net;
  auto dialed = net.Dial();
  // Sent while connecting: held, then sent in order.
  for (uint64_t topic = 1; topic <= 3; ++topic) {
    dialed->Send(codec::LeaveFrame{topic});
  }
  REQUIRE(RunUntil(net.io, [&] { return !net.accepted.empty(); }));
  auto& far = *net.accepted.front();
  std::vector<uint64_t> got;
  far.Receive([&](const codec::Frame& f) {
    got.push_back(TopicOf(f));
    if (got.size() == 3) {
      far.Send(codec::LeaveFrame{99});
      dialed->Send(codec::LeaveFrame{4});
    }
  });
  std::vector<uint64_t> back;
  dialed->Receive([&](const codec::Frame& f) { back.push_back(TopicOf(f)); });
  REQUIRE(RunUntil(net.io, [&] { return got.size() == 4 && back.size() == 1; }));
  CHECK(got == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(back == std::vector<uint64_t>{99});
  // On an open connection too: nothing arrives inside Send.
  dialed->Send(codec::LeaveFrame{5});
  CHECK(got.size() == 4);
  REQUIRE(RunUntil(net.io, [&] { return got.size() == 5; }));
}

TEMPLATE_TEST_CASE(
    "a socket channel forgets unsubscribed listeners, takes a double close and "
    "tells a late closed listener",
    "[sync][channel][tcp][websocket]", WebSocketKind, TcpKind) {
  Loopback<TestType> net;
  auto [dialed, far] = net.Join();
  REQUIRE(far);
  int heard = 0, far_closed = 0, dialed_closed = 0, unsubscribed = 0;
  const uint64_t receiver = far->Receive([&](const codec::Frame&) { ++heard; });
  const uint64_t listener = far->Closed([&] { ++unsubscribed; });
  far->Closed([&] { ++far_closed; });
  dialed->Closed([&] { ++dialed_closed; });
  far->Unsubscribe(receiver);
  far->Unsubscribe(listener);
  dialed->Send(codec::LeaveFrame{1});
  dialed->Close();
  dialed->Close();                     // Twice is fine.
  dialed->Send(codec::LeaveFrame{2});  // After the end: nothing.
  CHECK(dialed_closed == 0);           // Told on a later turn.
  REQUIRE(RunUntil(net.io, [&] { return far_closed == 1 && dialed_closed == 1; }));
  CHECK(heard == 0);
  CHECK(unsubscribed == 0);
  int late = 0;
  far->Closed([&] { ++late; });
  CHECK(late == 0);
  REQUIRE(RunUntil(net.io, [&] { return late == 1; }));
  // The frame sent before Close crossed; nobody was listening for it.
  CHECK(dialed_closed == 1);
  CHECK(far_closed == 1);
}

TEMPLATE_TEST_CASE("undecodable bytes end a socket channel at both ends, not the process",
                   "[sync][channel][tcp][websocket][refusal]", WebSocketKind, TcpKind) {
  Loopback<TestType> net;
  auto [dialed, far] = net.Join();
  REQUIRE(far);
  bool far_closed = false, dialed_closed = false;
  far->Closed([&] { far_closed = true; });
  dialed->Closed([&] { dialed_closed = true; });
  dialed->SendBinary("\x64open");  // The text "open": not a frame.
  REQUIRE(RunUntil(net.io, [&] { return far_closed && dialed_closed; }));
  REQUIRE(far->end_reason());
  CHECK(far->end_reason()->reason == codec::Reason::kBadFrame);
}

// A plain socket to a TCP listener, for bytes no channel would send.
struct RawClient {
  explicit RawClient(Loopback<TcpKind>& net) : socket(net.io) {
    asio::ip::tcp::endpoint to(asio::ip::make_address("127.0.0.1"), net.listener.port());
    socket.connect(to);
  }
  void Write(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }
  asio::ip::tcp::socket socket;
};

TEST_CASE("a TCP frame longer than the limit ends the channel before it is read",
          "[sync][tcp][refusal]") {
  Loopback<TcpKind> net(TcpChannel::Options{.max_frame = 1024});
  RawClient raw(net);
  REQUIRE(RunUntil(net.io, [&] { return !net.accepted.empty(); }));
  auto& far = *net.accepted.front();
  // 4 GiB announced, 3 bytes sent: refused on the header alone.
  raw.Write(std::string("\xff\xff\xff\xff", 4) + "abc");
  REQUIRE(RunUntil(net.io, [&] { return far.ended(); }));
  REQUIRE(far.end_reason());
  CHECK(far.end_reason()->reason == codec::Reason::kLimit);
  CHECK(StartsWith(far.end_reason()->message, "a frame of 4294967295 bytes"));
  // The socket is closed: the raw end reads the end of the stream (or a
  // reset, as the unread "abc" was dropped).
  std::array<char, 8> buffer;
  boost::system::error_code ec;
  raw.socket.read_some(asio::buffer(buffer), ec);
  CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));
}

TEST_CASE(
    "a TCP frame at the limit is read and the connection ending inside a frame "
    "ends the channel",
    "[sync][tcp]") {
  const std::string leave = *codec::EncodeFrame(codec::LeaveFrame{7});
  Loopback<TcpKind> net(TcpChannel::Options{.max_frame = leave.size()});
  RawClient raw(net);
  REQUIRE(RunUntil(net.io, [&] { return !net.accepted.empty(); }));
  auto& far = *net.accepted.front();
  std::vector<codec::Frame> got;
  bool closed = false;
  far.Receive([&](const codec::Frame& f) { got.push_back(f); });
  far.Closed([&] { closed = true; });
  const std::string length("\0\0\0", 3);
  raw.Write(length + static_cast<char>(leave.size()) + leave);
  raw.Write(length + static_cast<char>(leave.size()) + leave.substr(0, 1));  // Half a frame.
  raw.socket.close();
  REQUIRE(RunUntil(net.io, [&] { return closed; }));
  REQUIRE(got.size() == 1);
  CHECK(got[0] == codec::Frame(codec::LeaveFrame{7}));
  REQUIRE(far.end_reason());
  CHECK(far.end_reason()->reason == codec::Reason::kClosed);
  CHECK(far.end_reason()->message == "the connection ended inside a frame");
}

TEST_CASE("a TCP channel closed while connecting still sends what it held", "[sync][tcp]") {
  Loopback<TcpKind> net;
  auto dialed = net.Dial();
  dialed->Send(codec::LeaveFrame{1});
  dialed->Send(codec::LeaveFrame{2});
  dialed->Close();
  REQUIRE(RunUntil(net.io, [&] { return !net.accepted.empty(); }));
  auto& far = *net.accepted.front();
  std::vector<uint64_t> got;
  bool closed = false;
  far.Receive([&](const codec::Frame& f) { got.push_back(TopicOf(f)); });
  far.Closed([&] { closed = true; });
  REQUIRE(RunUntil(net.io, [&] { return closed; }));
  CHECK(got == std::vector<uint64_t>{1, 2});
  REQUIRE(far.end_reason());
  CHECK(far.end_reason()->reason == codec::Reason::kClosed);
  CHECK(far.end_reason()->message == "the other end closed");
}

}  // namespace
}  // namespace aweft::sync::testing

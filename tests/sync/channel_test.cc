// The channel contract (behaviour.md §2.1, §7 item 29) for the in-process
// pair; the socket channels have the same tests in tcp_test.cc.

#include "sync/channel.h"

#include <catch2/catch.hpp>
#include <memory>
#include <vector>

namespace aweft::sync {
namespace {

uint64_t TopicOf(const codec::Frame& frame) { return std::get<codec::LeaveFrame>(frame).topic; }

TEST_CASE("an in-process channel delivers in order and never inside Send", "[sync][channel]") {
  ManualScheduler scheduler;
  auto [a, b] = InProcessPair(scheduler);
  std::vector<uint64_t> got;
  b->Receive([&](const codec::Frame& f) { got.push_back(TopicOf(f)); });
  for (uint64_t topic = 1; topic <= 3; ++topic) {
    a->Send(codec::LeaveFrame{topic});
  }
  CHECK(got.empty());
  scheduler.RunUntilIdle();
  CHECK(got == std::vector<uint64_t>{1, 2, 3});
  // A receiver that sends back is not re-entered either.
  std::vector<uint64_t> echoed;
  a->Receive([&](const codec::Frame& f) { echoed.push_back(TopicOf(f)); });
  b->Receive([&, &b = b](const codec::Frame& f) {
    b->Send(codec::LeaveFrame{TopicOf(f) + 10});
    CHECK(echoed.empty());  // Not delivered inside this Send.
  });
  a->Send(codec::LeaveFrame{4});
  scheduler.RunUntilIdle();
  CHECK(echoed == std::vector<uint64_t>{14});
}

TEST_CASE(
    "an in-process channel forgets unsubscribed listeners, takes a double "
    "close and tells a late closed listener",
    "[sync][channel]") {
  ManualScheduler scheduler;
  auto [a, b] = InProcessPair(scheduler);
  int heard = 0, a_closed = 0, b_closed = 0, unsubscribed_closed = 0;
  const uint64_t receiver = b->Receive([&](const codec::Frame&) { ++heard; });
  a->Closed([&] { ++a_closed; });
  b->Closed([&] { ++b_closed; });
  const uint64_t listener = b->Closed([&] { ++unsubscribed_closed; });
  b->Unsubscribe(receiver);
  b->Unsubscribe(listener);
  a->Send(codec::LeaveFrame{1});
  scheduler.RunUntilIdle();
  CHECK(heard == 0);

  a->Close();
  a->Close();  // Twice is fine.
  b->Close();
  CHECK(a_closed == 0);  // Told on a later turn, not inside Close.
  scheduler.RunUntilIdle();
  CHECK(a_closed == 1);
  CHECK(b_closed == 1);
  CHECK(unsubscribed_closed == 0);

  int late = 0;
  b->Closed([&] { ++late; });
  CHECK(late == 0);
  scheduler.RunUntilIdle();
  CHECK(late == 1);

  // Sending on an ended channel does nothing.
  b->Receive([&](const codec::Frame&) { ++heard; });
  a->Send(codec::LeaveFrame{2});
  scheduler.RunUntilIdle();
  CHECK(heard == 0);
}

TEST_CASE("frames sent before the first receiver wait for it", "[sync][channel]") {
  ManualScheduler scheduler;
  auto [a, b] = InProcessPair(scheduler);
  a->Send(codec::LeaveFrame{1});
  a->Send(codec::LeaveFrame{2});
  scheduler.RunUntilIdle();
  std::vector<uint64_t> got;
  b->Receive([&](const codec::Frame& f) { got.push_back(TopicOf(f)); });
  scheduler.RunUntilIdle();
  CHECK(got == std::vector<uint64_t>{1, 2});
}

}  // namespace
}  // namespace aweft::sync

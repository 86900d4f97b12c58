// The admin HTTP server on loopback: an answer the router defers
// (Response::later, a whole document's JSON) is built on the server's own
// thread while its loop goes on serving.

#include "admin/http_server.h"

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "admin/http_client.h"

namespace aweft::admin {
namespace {

namespace asio = boost::asio;

// A server on a loop of its own thread whose "/slow" answer is built by a
// `later` that waits until the test releases it; every other path is
// answered at once.
struct SlowServer {
  SlowServer() : work(io.get_executor()) {
    server.emplace(io.get_executor(), "127.0.0.1", 0, [this](const Request& request) {
      Response out;
      out.body = "quick";
      if (request.target == "/slow") {
        out.later = [this] {
          built_on = std::this_thread::get_id();
          building = true;
          released.wait();
          Response done;
          done.body = "slow";
          return done;
        };
      }
      return out;
    });
    loop = std::thread([this] { io.run(); });
    url = "http://127.0.0.1:" + std::to_string(server->port());
  }
  ~SlowServer() {
    if (!released_set) release.set_value();
    asio::post(io, [this] { server->Stop(); });
    work.reset();
    loop.join();
  }

  // Waits up to 10 s for the `later` to start.
  bool WaitBuilding() {
    for (int i = 0; i < 1000 && !building; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return building;
  }

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::optional<HttpServer> server;
  std::thread loop;
  std::string url;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  bool released_set = false;
  std::atomic<bool> building{false};
  std::thread::id built_on;
};

TEST_CASE("a deferred answer is built off the server's loop, which answers others meanwhile",
          "[admin][http]") {
  SlowServer f;
  auto slow = std::async(std::launch::async, [&] { return HttpRequest(f.url, "GET", "/slow"); });
  REQUIRE(f.WaitBuilding());
  // "/slow" is being built and held there: the loop still answers.
  for (int i = 0; i < 3; ++i) {
    const HttpReply quick = HttpRequest(f.url, "GET", "/quick", "", "", std::chrono::seconds(5));
    CHECK(quick.status == 200);
    CHECK(quick.body == "quick");
  }
  CHECK(slow.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
  f.release.set_value();
  f.released_set = true;
  const HttpReply answer = slow.get();
  CHECK(answer.status == 200);
  CHECK(answer.body == "slow");
  CHECK(f.built_on != f.loop.get_id());
}

TEST_CASE("stopping the server waits for a deferred answer being built", "[admin][http]") {
  SlowServer f;
  auto slow = std::async(std::launch::async, [&] {
    try {
      return HttpRequest(f.url, "GET", "/slow", "", "", std::chrono::seconds(10)).status;
    } catch (const HttpError&) {
      return 0;  // Closed unanswered: what a stopped server does.
    }
  });
  REQUIRE(f.WaitBuilding());
  std::promise<void> stopped;
  asio::post(f.io, [&] {
    f.server->Stop();
    stopped.set_value();
  });
  // Stop() is held by the answer being built ...
  auto done = stopped.get_future();
  CHECK(done.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
  // ... and returns once it is: the connection is closed, not answered.
  f.release.set_value();
  f.released_set = true;
  CHECK(done.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(slow.get() == 0);
}

}  // namespace
}  // namespace aweft::admin

#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "admin/http_client.h"
#include "codec/id.h"
#include "sync/asio_scheduler.h"
#include "sync/document.h"
#include "tests/node/node_process.h"

// A real aweft-node with its admin endpoint on a free port, and a client on
// the test's loop to make documents on it.
namespace aweft::admin::testing {

using node::testing::Client;
using node::testing::NodeProcess;
using node::testing::RunUntil;
using node::testing::TempDir;
namespace json = boost::json;

// A JSON string, to compare with: json::value has no == for std::string.
inline json::value J(const std::string& text) { return json::value(text); }

struct AdminFixture {
  explicit AdminFixture(std::vector<std::string> extra = {})
      : node(dir.path() + "/data", std::move(extra)) {
    node.Start();
    REQUIRE(node.admin_port() != 0);
  }

  // `token` empty: the fixture's own (admin_token), if set.
  HttpReply Call(const std::string& method, const std::string& target,
                 const std::string& token = "", const std::string& body = "") {
    return HttpRequest(node.admin_url(), method, target, token.empty() ? admin_token : token, body,
                       std::chrono::seconds(10));
  }
  HttpReply Get(const std::string& target, const std::string& token = "") {
    return Call("GET", target, token);
  }
  // The JSON body of GET `target`, which must answer `status`.
  json::value GetJson(const std::string& target, int status = 200, const std::string& token = "") {
    HttpReply reply = Get(target, token);
    INFO(target << " answered " << reply.status << ": " << reply.body);
    REQUIRE(reply.status == status);
    REQUIRE(reply.content_type == "application/json");
    return json::parse(reply.body);
  }

  // Shares `document` as `name` from a new client (which creates it on the
  // node, taking what it holds as one commit) and waits until the node holds
  // `head` commits of it.
  Client& Share(const std::string& name, sync::Document& document, uint64_t head = 0) {
    clients.push_back(std::make_unique<Client>(io, scheduler, node.url()));
    REQUIRE(clients.back()->link->Share(name, &document));
    REQUIRE(WaitForHead(name, head));
    // Let the link settle, so that later writes travel as commits.
    RunUntil(
        io, [] { return false; }, std::chrono::milliseconds(100));
    return *clients.back();
  }

  // Runs the loop until the node's head of `name` is at least `head`.
  bool WaitForHead(const std::string& name, uint64_t head) {
    return RunUntil(
        io,
        [&] {
          HttpReply reply = Get("/v1/documents?prefix=" + PathEncode(name));
          if (reply.status != 200) return false;
          const json::value page = json::parse(reply.body);
          for (const auto& doc : page.at("documents").as_array()) {
            if (doc.at("name") == J(name) && doc.at("head").to_number<uint64_t>() >= head)
              return true;
          }
          return false;
        },
        std::chrono::milliseconds(10000));
  }

  std::string admin_token;  // Sent when a call names none.
  TempDir dir;
  NodeProcess node;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler{io.get_executor()};
  std::vector<std::unique_ptr<Client>> clients;
};

}  // namespace aweft::admin::testing

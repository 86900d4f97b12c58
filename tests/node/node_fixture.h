#pragma once

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "node/client.h"
#include "sync/asio_scheduler.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {

// What a test of real node processes with clients needs: a scratch
// directory, one loop for the clients, and sharing that must succeed.
struct ClientFixture {
  TempDir dir;
  boost::asio::io_context io;
  sync::AsioScheduler scheduler{io.get_executor()};

  sync::Shared* ShareOrFail(Client& client, const std::string& name, sync::Document* doc,
                            sync::ShareHandlers handlers = {}) {
    auto shared = client.link->Share(name, doc, std::move(handlers));
    REQUIRE(shared);
    return *shared;
  }
  // Shares `doc` from a client that has shared nothing yet and waits until
  // the node has answered the open, so the document is there: with sockets on
  // several threads (--threads), another connection's open sent right after
  // may otherwise reach the node first and find none.
  sync::Shared* Create(Client& client, const std::string& name, sync::Document& doc) {
    sync::Shared* shared = ShareOrFail(client, name, &doc);
    REQUIRE(RunUntil(io, [&] { return client.link->stats().frames_in > 0; }));
    return shared;
  }
};

}  // namespace aweft::node::testing

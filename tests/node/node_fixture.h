#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

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
};

}  // namespace aweft::node::testing

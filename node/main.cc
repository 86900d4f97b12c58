// aweft-node: the replication node (docs/node.md).

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>

#include "node/config.h"
#include "node/log.h"
#include "node/node.h"

int main(int argc, char** argv) {
  // A large message's bytes (a state, a commit, one partly read) are mapped
  // for it and unmapped when it goes, so RSS falls back once a connection
  // that held them is cut or a large commit refused; by default glibc raises
  // this bound as large blocks are freed, and keeps them in its arenas.
  mallopt(M_MMAP_THRESHOLD, 64 << 10);
  using aweft::node::ConfigError;
  aweft::node::Config config;
  try {
    bool help = false, version = false;
    config = aweft::node::LoadConfig(argc, argv, help, version);
    if (help) {
      std::cout << aweft::node::Usage();
      return EXIT_SUCCESS;
    }
    if (version) {
      std::cout << "aweft-node " AWEFT_VERSION "\n";
      return EXIT_SUCCESS;
    }
  } catch (const ConfigError& e) {
    std::cerr << "aweft-node: " << e.what() << "\n";
    return 2;
  }
  aweft::node::SetUpLogging(config.log_level, config.log_format);
  // A start that fails leaves no data directory it made behind.
  std::error_code ec;
  const bool had_data = std::filesystem::exists(config.data, ec);
  bool started = false;
  auto undo = [&] {
    if (!started && !had_data) std::filesystem::remove_all(config.data, ec);
  };
  try {
    boost::asio::io_context io;
    aweft::node::Node node(config, io);
    started = true;
    // Scripts and tests read these lines to learn the ports: the admin
    // endpoint's first (when it is on), so that it is out once "listening" is.
    if (node.admin_port() != 0) {
      std::cout << "aweft-node " AWEFT_VERSION " admin "
                << (config.tls.serving() ? "https://" : "http://")
                << aweft::node::HostPort(config.admin, "admin").first << ":" << node.admin_port()
                << "/\n";
    }
    std::cout << "aweft-node " AWEFT_VERSION " listening " << node.url() << std::endl;
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      // A second signal exits at once.
      signals.async_wait([](boost::system::error_code e, int) {
        if (!e) _exit(130);
      });
      node.Shutdown([&] { io.stop(); });
    });
    io.run();
    spdlog::info("event=stopped");
  } catch (const ConfigError& e) {
    undo();
    std::cerr << "aweft-node: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    undo();
    spdlog::error("event=failure detail={}", aweft::node::Quoted{e.what()});
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sync/link.h"
#include "sync/websocket.h"

// Real aweft-node processes on loopback, and clients that talk to them, for
// the node's integration tests.
namespace aweft::node::testing {

// A scratch directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/aweft-node-test-XXXXXX";
    if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs aweft-node with `args` (shell words) to its end, writing its output
// in `scratch`: its exit status, standard output and standard error.
struct Ran {
  int status;
  std::string out, err;
};
inline Ran RunNode(const std::string& scratch, const std::string& args) {
  const std::string out = scratch + "/out", err = scratch + "/err";
  const int status =
      std::system((std::string(AWEFT_NODE) + " " + args + " >" + out + " 2>" + err).c_str());
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  return {WEXITSTATUS(status), read(out), read(err)};
}

// One aweft-node process. Start() waits for its "listening" line, and
// notes the admin endpoint's port from the line before it.
class NodeProcess {
 public:
  NodeProcess(std::string data, std::vector<std::string> extra = {})
      : data_(std::move(data)), extra_(std::move(extra)) {}
  ~NodeProcess() { Kill(); }

  // Starts the node on `port` (0: any) and returns the port it listens on.
  uint16_t Start(uint16_t port = 0) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> args{
        AWEFT_NODE, "--data",      data_,         "--listen", "127.0.0.1:" + std::to_string(port),
        "--admin",  "127.0.0.1:0", "--log-level", "warn"};
    // The suite runs a second time with connections spread over threads
    // (tests/node/CMakeLists.txt).
    if (const char* threads = std::getenv("AWEFT_TEST_NODE_THREADS")) {
      args.insert(args.end(), {"--threads", threads});
    }
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      // Nothing of the test's (its sockets above all) goes with the node: a
      // copy held there keeps a connection the test closes from ending.
      close_range(3, ~0U, 0);
      if (descriptors_ > 0) {
        const rlimit limit{descriptors_, descriptors_};
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(126);
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    output_ = fdopen(out[0], "r");
    char line[512];
    while (fgets(line, sizeof line, output_)) {
      std::string text(line);
      early_ += text;
      // "... admin http://127.0.0.1:P/" then "... listening ws://127.0.0.1:P/"
      // (https:// and wss:// with TLS).
      const std::string host = "://127.0.0.1:";
      const size_t at = text.find(host);
      if (at == std::string::npos) continue;
      const uint16_t found = static_cast<uint16_t>(std::stoi(text.substr(at + host.size())));
      if (text.find(" admin http") != std::string::npos) {
        admin_port_ = found;
        admin_scheme_ = text.find(" admin https://") != std::string::npos ? "https" : "http";
      } else if (text.find(" listening ws") != std::string::npos) {
        port_ = found;
        scheme_ = text.find(" listening wss://") != std::string::npos ? "wss" : "ws";
        return port_;
      }
    }
    throw std::runtime_error("aweft-node did not start");
  }

  // What the process printed since the last call (its log at the level
  // asked), without waiting for more.
  std::string Drain() {
    std::string out = std::move(early_);
    early_.clear();
    if (!output_) return out;
    const int fd = fileno(output_);
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) out.append(buffer, n);
    fcntl(fd, F_SETFL, flags);
    return out;
  }

  void Signal(int signal) {
    if (pid_ > 0) kill(pid_, signal);
  }
  // Waits for the process to end and returns its exit status.
  int Wait() {
    int status = 0;
    if (pid_ > 0) waitpid(pid_, &status, 0);
    pid_ = -1;
    if (output_) fclose(output_);
    output_ = nullptr;
    return status;
  }
  void Kill() {
    Signal(SIGKILL);
    Wait();
  }
  // The descriptor limit the process starts with (ulimit -n, soft and
  // hard); 0: the test's own. Before Start().
  void set_descriptors(rlim_t descriptors) { descriptors_ = descriptors; }
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  uint16_t admin_port() const { return admin_port_; }
  std::string admin_url() const {
    return admin_scheme_ + "://127.0.0.1:" + std::to_string(admin_port_);
  }
  std::string url() const { return scheme_ + "://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  std::string data_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
  rlim_t descriptors_ = 0;
  FILE* output_ = nullptr;
  uint16_t port_ = 0;
  uint16_t admin_port_ = 0;
  std::string scheme_ = "ws", admin_scheme_ = "http";
  std::string early_;  // What Start() read, for Drain().
};

// A client: a WebSocket channel and a link on the test's io_context.
struct Client {
  Client(boost::asio::io_context& io, sync::Scheduler& scheduler, const std::string& url,
         std::string bearer = "") {
    sync::WebSocketChannel::Options options;
    options.bearer = std::move(bearer);
    channel = sync::WebSocketChannel::Dial(io.get_executor(), scheduler, url, options);
    link = std::make_unique<sync::Link>(*channel, scheduler);
  }
  std::unique_ptr<sync::WebSocketChannel> channel;
  std::unique_ptr<sync::Link> link;
};

// Writes a config file with two tokens, "writer-secret" (write to every
// name) and "reader-secret" (read only), and returns its path.
inline std::string TwoTokens(const std::string& path) {
  std::ofstream(path) << "[[tokens]]\ntoken = \"writer-secret\"\nwrite = [\"*\"]\n"
                         "[[tokens]]\ntoken = \"reader-secret\"\nread = [\"*\"]\n";
  return path;
}

// A process's resident memory, in KiB.
inline uint64_t RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == "VmRSS:") return in >> value, value;
  }
  return 0;
}

// Runs `io` until `done` holds or `limit` passes; returns whether it held.
// `count` loopback ports free now, all held until each is known, so that
// nodes can be told each other's before any starts.
inline std::vector<uint16_t> FreePorts(int count) {
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::acceptor> held;
  std::vector<uint16_t> ports;
  for (int i = 0; i < count; ++i) {
    held.emplace_back(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    ports.push_back(held.back().local_endpoint().port());
  }
  return ports;
}

inline bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done,
                     std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return done();
}

}  // namespace aweft::node::testing

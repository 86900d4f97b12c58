#include "admin/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace aweft::admin {
namespace {

using Clock = std::chrono::steady_clock;

// Owns a socket descriptor.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Waits until `fd` is ready for `events` or the deadline passes.
void Await(int fd, short events, Clock::time_point deadline, const std::string& what) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  pollfd one{fd, events, 0};
  const int ready = left.count() > 0 ? poll(&one, 1, static_cast<int>(left.count())) : 0;
  if (ready <= 0) throw HttpError("timed out " + what);
}

int Connect(const std::string& host, const std::string& port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw HttpError("cannot resolve " + host + ": " + gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd one{fd, POLLOUT, 0};
      if (left.count() <= 0 || poll(&one, 1, static_cast<int>(left.count())) <= 0) {
        err = ETIMEDOUT;
      } else {
        socklen_t length = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &length);
      }
    }
    if (err == 0) {
      freeaddrinfo(found);
      return fd;
    }
    error = std::strerror(err);
    close(fd);
  }
  freeaddrinfo(found);
  throw HttpError("cannot connect to " + host + ":" + port + ": " + error);
}

HttpReply Parse(const std::string& raw) {
  const size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos || raw.size() < 12) {
    throw HttpError("the answer is not HTTP");
  }
  HttpReply reply;
  reply.status = std::atoi(raw.c_str() + 9);
  reply.headers = raw.substr(0, end);
  reply.body = raw.substr(end + 4);
  std::string lower = reply.headers;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (size_t at = lower.find("\r\ncontent-type:"); at != std::string::npos) {
    const size_t start = reply.headers.find_first_not_of(' ', at + 15);
    reply.content_type = reply.headers.substr(start, reply.headers.find("\r\n", start) - start);
  }
  return reply;
}

}  // namespace

std::string PathEncode(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

HttpReply HttpRequest(const std::string& base, const std::string& method, const std::string& target,
                      const std::string& token, const std::string& body,
                      std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (base.rfind("http://", 0) != 0) throw HttpError("'" + base + "' is not an http:// URL");
  std::string authority = base.substr(7);
  authority = authority.substr(0, authority.find('/'));
  const size_t colon = authority.rfind(':');
  const std::string host = authority.substr(0, colon);
  const std::string port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  Socket socket(Connect(host, port, deadline));

  std::string request = method + " " + target + " HTTP/1.1\r\nHost: " + authority +
                        "\r\nConnection: close\r\nUser-Agent: aweftctl\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  if (!body.empty() || method == "PUT" || method == "POST") {
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  for (size_t sent = 0; sent < request.size();) {
    Await(socket.fd(), POLLOUT, deadline, "sending to " + authority);
    const ssize_t n = send(socket.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN)
      throw HttpError("sending to " + authority + ": " + std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }
  // Connection: close: the answer ends where the stream does.
  std::string raw;
  char buffer[65536];
  for (;;) {
    Await(socket.fd(), POLLIN, deadline, "waiting for " + authority);
    const ssize_t n = recv(socket.fd(), buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0 && errno != EAGAIN)
      throw HttpError("reading from " + authority + ": " + std::strerror(errno));
    if (n > 0) raw.append(buffer, static_cast<size_t>(n));
  }
  return Parse(raw);
}

}  // namespace aweft::admin

#include "admin/http_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

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

// The bytes of one connection: plain, or TLS over it (OpenSSL, verifying
// the server's certificate against the system's store, or the file that
// SSL_CERT_FILE names, and its name or address against `host`).
class Conn {
 public:
  Conn(int fd, Clock::time_point deadline, std::string where)
      : fd_(fd), deadline_(deadline), where_(std::move(where)) {}

  void StartTls(const std::string& host) {
    static SSL_CTX* const context = [] {
      SSL_CTX* c = SSL_CTX_new(TLS_client_method());
      SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
      SSL_CTX_set_default_verify_paths(c);
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
      SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF);
      return c;
    }();
    tls_.reset(SSL_new(context));
    SSL_set_fd(tls_.get(), fd_);
    in6_addr address;
    const bool ip = inet_pton(AF_INET, host.c_str(), &address) == 1 ||
                    inet_pton(AF_INET6, host.c_str(), &address) == 1;
    X509_VERIFY_PARAM* param = SSL_get0_param(tls_.get());
    if (ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    } else {
      SSL_set_tlsext_host_name(tls_.get(), host.c_str());
      SSL_set1_host(tls_.get(), host.c_str());
    }
    Retry("the TLS handshake with " + where_, [&] { return SSL_connect(tls_.get()); });
  }

  void Write(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const char* at = bytes.data() + sent;
      const size_t left = bytes.size() - sent;
      if (tls_) {
        sent += static_cast<size_t>(Retry("sending to " + where_, [&] {
          return SSL_write(tls_.get(), at, static_cast<int>(left));
        }));
        continue;
      }
      Await(fd_, POLLOUT, deadline_, "sending to " + where_);
      const ssize_t n = send(fd_, at, left, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN)
        throw HttpError("sending to " + where_ + ": " + std::strerror(errno));
      if (n > 0) sent += static_cast<size_t>(n);
    }
  }

  // Some bytes into `buffer`; 0 at the end of the stream.
  size_t Read(char* buffer, size_t size) {
    if (tls_) {
      return static_cast<size_t>(Retry("reading from " + where_, [&] {
        return SSL_read(tls_.get(), buffer, static_cast<int>(size));
      }));
    }
    for (;;) {
      Await(fd_, POLLIN, deadline_, "waiting for " + where_);
      const ssize_t n = recv(fd_, buffer, size, 0);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EAGAIN) throw HttpError("reading from " + where_ + ": " + std::strerror(errno));
    }
  }

 private:
  // Runs an OpenSSL call until it is done, waiting on the socket as it
  // asks; its result, 0 for a clean end.
  template <class F>
  int Retry(const std::string& what, F&& call) {
    for (;;) {
      const int rc = call();
      if (rc > 0) return rc;
      const int error = SSL_get_error(tls_.get(), rc);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        Await(fd_, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_, what);
        continue;
      }
      char text[256] = "the connection ended";
      if (const unsigned long code = ERR_get_error()) ERR_error_string_n(code, text, sizeof text);
      const long verify = SSL_get_verify_result(tls_.get());
      std::string detail = text;
      if (verify != X509_V_OK) detail = X509_verify_cert_error_string(verify);
      throw HttpError(what + ": " + detail +
                      (verify != X509_V_OK ? ". Trust its certificate: SSL_CERT_FILE=FILE" : ""));
    }
  }

  struct Free {
    void operator()(SSL* tls) const { SSL_free(tls); }
  };
  int fd_;
  Clock::time_point deadline_;
  std::string where_;
  std::unique_ptr<SSL, Free> tls_;
};

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
  return boost::urls::encode(text, boost::urls::unreserved_chars);
}

HttpReply HttpRequest(const std::string& base, const std::string& method, const std::string& target,
                      const std::string& token, const std::string& body,
                      std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const bool tls = base.rfind("https://", 0) == 0;
  if (!tls && base.rfind("http://", 0) != 0) {
    throw HttpError("'" + base + "' is not an http:// or https:// URL");
  }
  std::string authority = base.substr(tls ? 8 : 7);
  authority = authority.substr(0, authority.find('/'));
  const size_t colon = authority.rfind(':');
  const std::string host = authority.substr(0, colon);
  const std::string port = colon != std::string::npos ? authority.substr(colon + 1)
                           : tls                      ? "443"
                                                      : "80";
  Socket socket(Connect(host, port, deadline));
  Conn conn(socket.fd(), deadline, authority);
  if (tls) conn.StartTls(host);

  std::string request = method + " " + target + " HTTP/1.1\r\nHost: " + authority +
                        "\r\nConnection: close\r\nUser-Agent: aweftctl\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  if (!body.empty() || method == "PUT" || method == "POST") {
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  conn.Write(request);
  // Connection: close: the answer ends where the stream does.
  std::string raw;
  char buffer[65536];
  while (const size_t n = conn.Read(buffer, sizeof buffer)) raw.append(buffer, n);
  return Parse(raw);
}

}  // namespace aweft::admin

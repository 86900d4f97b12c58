#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "admin/metrics.h"
#include "admin/problem.h"
#include "admin/source.h"

namespace aweft::admin {

// One HTTP request, as the server read it.
struct Request {
  std::string method;         // "GET", "PUT", ...
  std::string target;         // Path and query, still percent-encoded.
  std::string authorization;  // The Authorization header, if any.
  std::string body;
  std::string host;          // The Host header, if any.
  std::string content_type;  // The Content-Type header, if any.
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Beside the content type.
  // Set for an answer built off the loop (a Source's Later): the server
  // runs it on a thread of its own and sends what it returns instead.
  std::function<Response()> later;
};

// `response`, or what its `later` returns when set (run here).
Response Complete(Response response);

// The admin endpoint's routes (docs/admin.md), with no I/O: the server hands
// it each request and writes what it returns. With a token configured every
// route but /health needs it. Counts every answer in `metrics`
// (aweft_admin_requests_total). `source` and `metrics` must outlive it.
//
// Against pages in a browser (docs/admin.md "Browsers"): a request whose
// Host is a name other than localhost and `hosts` is refused (DNS
// rebinding), and without a token a POST must be application/json, which a
// page cannot send to another site unasked.
class Router {
 public:
  Router(Source& source, Metrics& metrics, std::string token, std::vector<std::string> hosts = {});

  Response Handle(const Request& request);

 private:
  using Query = std::map<std::string, std::string, std::less<>>;

  Response Route(const Request& request);
  bool Authorized(const Request& request, std::string_view query_token, Response& refusal) const;
  bool KnownHost(std::string_view host) const;
  Response Ready();
  Response List(const Query& query);
  Response Document(const Request& request, const std::string& name, std::string_view part,
                    const Query& query);
  Response Import(const std::string& name, const std::string& body);

  Source& source_;
  Metrics& metrics_;
  Family& requests_;
  std::string token_;
  std::vector<std::string> hosts_;
};

// The response for a Problem: its status, and {reason, message, fix}.
Response ProblemResponse(const Problem& problem);

// Decodes %XX escapes (and '+' as a space when `form`); nullopt for a bad
// escape.
std::optional<std::string> PercentDecode(std::string_view text, bool form);

}  // namespace aweft::admin

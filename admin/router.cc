#include "admin/router.h"

#include <algorithm>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/json/array.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/parse_query.hpp>
#include <boost/url/pct_string_view.hpp>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/dashboard.h"
#include "admin/secret.h"
#include "codec/cbor.h"
#include "codec/json.h"

namespace aweft::admin {
namespace json = boost::json;

namespace {

constexpr size_t kMaxLimit = 1000;

// The media type of a Content-Type value, without parameters or spaces.
std::string_view MediaType(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  return content_type;
}

// `text` with each byte that does not start a well-formed UTF-8 sequence
// replaced by U+FFFD. The first prefix of 1 to 4 bytes that CheckText takes
// is exactly one code point: a lead byte alone never is one.
std::string ValidUtf8(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;
    while (n <= 4 && i + n <= text.size() && !codec::CheckText(text.substr(i, n))) ++n;
    if (n <= 4 && i + n <= text.size()) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

// `value` with every string and key made valid UTF-8. Iterative, so a deep
// value cannot exhaust the stack.
json::value WithValidUtf8(json::value value) {
  std::vector<json::value*> stack{&value};
  while (!stack.empty()) {
    json::value* v = stack.back();
    stack.pop_back();
    if (v->is_string()) {
      *v = ValidUtf8(v->get_string());
    } else if (v->is_array()) {
      for (auto& item : v->get_array()) stack.push_back(&item);
    } else if (v->is_object()) {
      json::object fixed;
      for (auto& [key, item] : v->get_object()) fixed[ValidUtf8(key)] = std::move(item);
      *v = std::move(fixed);
      for (auto& [key, item] : v->get_object()) stack.push_back(&item);
    }
  }
  return value;
}

Response JsonResponse(int status, const json::value& body) {
  Response response;
  response.status = status;
  response.body = codec::WriteJson(body) + "\n";
  // Messages quote what the client sent (a path, a name, a parameter), and
  // that need not be UTF-8; Boost.JSON writes such bytes as they are, which
  // is not JSON (RFC 8259 §8.1). Only then, mend and write again.
  if (!codec::CheckText(response.body)) {
    response.body = codec::WriteJson(WithValidUtf8(body)) + "\n";
  }
  return response;
}

Response FromAnswer(const Answer& answer, int status = 200) {
  if (!answer) return ProblemResponse(answer.error());
  return JsonResponse(status, *answer);
}

// A response whose body `later` builds, on the server's own thread.
Response Deferred(Later later) {
  Response response;
  response.later = [later = std::move(later)] { return FromAnswer(later()); };
  return response;
}

// The path split at '/', each segment still encoded: "/v1/documents/a%2Fb"
// gives {"v1", "documents", "a%2Fb"}, so a name may hold '/'.
std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    if (path[0] == '/') {
      path.remove_prefix(1);
      continue;
    }
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return out;
}

// The query's parameters; a parameter given twice keeps the last. A bad
// escape is a Problem.
using Query = std::map<std::string, std::string, std::less<>>;

std::optional<Query> ParseQuery(std::string_view query) {
  auto params = boost::urls::parse_query(query);
  if (!params) return std::nullopt;
  boost::urls::encoding_opts form;
  form.space_as_plus = true;
  Query out;
  for (const auto& param : *params) {
    if (!param.key.empty()) out[param.key.decode(form)] = param.value.decode(form);
  }
  return out;
}

// Refuses any parameter not in `known` (a misspelt ?limt= is caught, not
// ignored); `token` is allowed everywhere.
std::optional<Problem> OnlyKnown(const Query& query,
                                 std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : query) {
    bool ok = key == "token";
    for (std::string_view k : known) ok = ok || key == k;
    if (!ok) return MakeProblem(Why::kBadParameter, "unknown parameter '" + key + "'");
  }
  return std::nullopt;
}

// A whole number from `min` to `max`, or `fallback` when absent.
std::variant<uint64_t, Problem> Number(const Query& query, std::string_view key, uint64_t fallback,
                                       uint64_t min, uint64_t max) {
  auto it = query.find(key);
  if (it == query.end()) return fallback;
  const std::string& text = it->second;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    return MakeProblem(Why::kBadParameter, std::string(key) + " must be a whole number from " +
                                               std::to_string(min) + " to " + std::to_string(max) +
                                               ", not '" + text + "'");
  }
  return value;
}

Response NotAllowed(std::string_view allow, const Request& request) {
  Response response = ProblemResponse(MakeProblem(
      Why::kMethod, request.method + " is not served here; " + std::string(allow) + " is"));
  response.headers.emplace_back("Allow", std::string(allow));
  return response;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool form) {
  auto checked = boost::urls::make_pct_string_view(text);
  if (!checked) return std::nullopt;
  boost::urls::encoding_opts options;
  options.space_as_plus = form;
  return checked->decode(options);
}

Response ProblemResponse(const Problem& problem) {
  Response response = JsonResponse(problem.status, problem.ToJson());
  if (problem.status == 401) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"aweft-admin\"");
  }
  return response;
}

Router::Router(Source& source, Metrics& metrics, std::string token, std::vector<std::string> hosts)
    : source_(source),
      metrics_(metrics),
      requests_(metrics.Counter("aweft_admin_requests_total",
                                "Admin endpoint requests answered, by HTTP status code.",
                                {"code"})),
      token_(std::move(token)),
      hosts_(std::move(hosts)) {}

Response Complete(Response response) {
  return response.later ? response.later() : std::move(response);
}

Response Router::Handle(const Request& request) {
  Response response = Route(request);
  // Counted when known: for a later answer, on the thread that builds it.
  auto counted = [&requests = requests_](Response done) {
    requests.Add(1, {std::to_string(done.status)});
    done.headers.emplace_back("Cache-Control", "no-store");
    return done;
  };
  if (!response.later) return counted(std::move(response));
  response.later = [counted, later = std::move(response.later)] { return counted(later()); };
  return response;
}

bool Router::Authorized(const Request& request, std::string_view query_token,
                        Response& refusal) const {
  if (token_.empty()) return true;
  const std::string_view given = BearerToken(request.authorization, query_token);
  if (given.empty()) {
    refusal = ProblemResponse(MakeProblem(Why::kUnauthorized, "this route needs the admin token"));
    return false;
  }
  if (!SameSecret(given, token_)) {
    refusal =
        ProblemResponse(MakeProblem(Why::kForbidden, "the token given is not the admin token"));
    return false;
  }
  return true;
}

// An address reaches only the machine it names; a name is what DNS
// rebinding turns against a server on loopback, so only localhost and the
// configured names pass. No Host at all is no browser's.
bool Router::KnownHost(std::string_view host) const {
  if (host.empty()) return true;
  auto authority = boost::urls::parse_authority(host);
  if (!authority || authority->has_userinfo()) return false;
  if (authority->host_type() != boost::urls::host_type::name) return true;
  const std::string name = authority->host_name();
  auto same = [&](std::string_view known) { return boost::iequals(name, known); };
  return same("localhost") || std::any_of(hosts_.begin(), hosts_.end(), same);
}

Response Router::Route(const Request& request) {
  if (!KnownHost(request.host)) {
    return ProblemResponse(
        MakeProblem(Why::kUnknownHost, "this endpoint does not answer to the host \"" +
                                           ValidUtf8(request.host) + "\" (admin_hosts)"));
  }
  const std::string_view target = request.target;
  const size_t mark = target.find('?');
  const std::string_view where = target.substr(0, mark);
  const std::vector<std::string_view> path = Segments(where);
  const std::optional<Query> query =
      ParseQuery(mark == std::string_view::npos ? "" : target.substr(mark + 1));
  if (!query)
    return ProblemResponse(
        MakeProblem(Why::kBadParameter, "the query does not parse (a bad %-escape?)"));
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (path.size() == 1 && path[0] == "health") {
    if (!get) return NotAllowed("GET", request);
    return JsonResponse(200, json::object{{"status", "ok"}});
  }
  // The dashboard's page holds no data: served to anyone, it asks for the
  // token and sends it with each of its requests (docs/admin.md).
  if (path.empty()) {
    if (!get) return NotAllowed("GET", request);
    Response page;
    page.content_type = "text/html; charset=utf-8";
    page.body = std::string(DashboardHtml());
    return page;
  }
  Response refusal;
  auto token = query->find("token");
  if (!Authorized(request, token == query->end() ? "" : token->second, refusal)) return refusal;

  const std::string_view first = path.empty() ? "" : path[0];
  const std::string_view second = path.size() < 2 ? "" : path[1];
  if ((path.size() == 1 && (first == "ready" || first == "metrics")) ||
      (path.size() == 2 && first == "v1" &&
       (second == "node" || second == "links" || second == "cluster"))) {
    if (!get) return NotAllowed("GET", request);
    if (first == "ready") return Ready();
    if (first == "metrics") {
      source_.CollectMetrics();
      Response response;
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = metrics_.Render();
      return response;
    }
    return JsonResponse(200, second == "node"    ? source_.NodeInfo()
                             : second == "links" ? source_.Links()
                                                 : source_.Cluster());
  }
  if (first == "v1" && second == "documents" && path.size() == 2) {
    if (!get) return NotAllowed("GET", request);
    return List(*query);
  }
  if (first == "v1" && second == "documents" && path.size() <= 4) {
    const std::optional<std::string> name = PercentDecode(path[2], false);
    if (!name)
      return ProblemResponse(MakeProblem(Why::kBadParameter, "the name has a bad %-escape"));
    if (auto bad = source_.CheckName(*name)) return ProblemResponse(MakeProblem(*bad));
    return Document(request, *name, path.size() == 4 ? path[3] : "", *query);
  }
  return ProblemResponse(MakeProblem(Why::kNoRoute, "nothing is served at " + std::string(where)));
}

Response Router::Ready() {
  json::array checks;
  std::string failing;
  for (const Check& check : source_.Readiness()) {
    checks.push_back(
        json::object{{"name", check.name}, {"ok", check.ok}, {"detail", check.detail}});
    if (!check.ok) failing += (failing.empty() ? "" : "; ") + check.name + ": " + check.detail;
  }
  if (failing.empty()) return JsonResponse(200, json::object{{"ready", true}, {"checks", checks}});
  const Problem problem = MakeProblem(Why::kNotReady, failing);
  json::value body = problem.ToJson();
  body.as_object()["checks"] = std::move(checks);
  return JsonResponse(problem.status, body);
}

Response Router::List(const Query& query) {
  if (auto bad = OnlyKnown(query, {"prefix", "contains", "after", "limit"})) {  // not a reason
    return ProblemResponse(*bad);
  }
  auto limit = Number(query, "limit", 100, 1, kMaxLimit);  // not a reason
  if (auto* bad = std::get_if<Problem>(&limit)) return ProblemResponse(*bad);
  DocumentQuery page;
  if (auto it = query.find("prefix"); it != query.end()) page.prefix = it->second;
  if (auto it = query.find("after"); it != query.end()) page.after = it->second;
  if (auto it = query.find("contains"); it != query.end()) page.contains = it->second;
  page.limit = std::get<uint64_t>(limit);
  return JsonResponse(200, source_.Documents(page));
}

Response Router::Document(const Request& request, const std::string& name, std::string_view part,
                          const Query& query) {
  const std::string& method = request.method;
  const bool get = method == "GET" || method == "HEAD";
  if (part.empty()) {
    if (get) {
      if (auto bad = OnlyKnown(query, {"at"})) return ProblemResponse(*bad);
      auto at = Number(query, "at", 0, 0, UINT64_MAX);
      if (auto* bad = std::get_if<Problem>(&at)) return ProblemResponse(*bad);
      std::optional<uint64_t> seq;
      if (query.count("at")) seq = std::get<uint64_t>(at);
      return Deferred(source_.State(name, seq));
    }
    if (method == "PUT") return Import(name, request.body);
    if (method == "DELETE") {
      if (auto bad = OnlyKnown(query, {"confirm"})) return ProblemResponse(*bad);
      auto confirm = query.find("confirm");
      if (confirm == query.end() || confirm->second != name) {
        return ProblemResponse(MakeProblem(
            Why::kUnconfirmed, "deleting \"" + name + "\" needs ?confirm= with its name"));
      }
      return FromAnswer(source_.Remove(name));
    }
    return NotAllowed("GET, PUT, DELETE", request);
  }
  if (part == "commits") {
    if (!get) return NotAllowed("GET", request);
    if (auto bad = OnlyKnown(query, {"since", "limit"})) {  // not a reason
      return ProblemResponse(*bad);
    }
    auto since = Number(query, "since", 0, 0, UINT64_MAX);
    if (auto* bad = std::get_if<Problem>(&since)) return ProblemResponse(*bad);
    auto limit = Number(query, "limit", 100, 1, kMaxLimit);  // not a reason
    if (auto* bad = std::get_if<Problem>(&limit)) return ProblemResponse(*bad);
    return Deferred(source_.Commits(name, std::get<uint64_t>(since), std::get<uint64_t>(limit)));
  }
  if (part == "export") {
    if (!get) return NotAllowed("GET", request);
    return Deferred(source_.Export(name));
  }
  if (part == "snapshot") {
    if (method != "POST") return NotAllowed("POST", request);
    // PUT and DELETE a page cannot send cross-site unasked; this POST it
    // could, were it not JSON.
    if (token_.empty() && !boost::iequals(MediaType(request.content_type), "application/json")) {
      return ProblemResponse(MakeProblem(Why::kSimpleRequest,
                                         "without an admin token, a POST must be application/json, "
                                         "which a page from another site cannot send unasked"));
    }
    return FromAnswer(source_.Snapshot(name));
  }
  return ProblemResponse(
      MakeProblem(Why::kNoRoute, "documents have no '" + std::string(part) + "'"));
}

Response Router::Import(const std::string& name, const std::string& body) {
  json::error_code ec;
  json::value exported = codec::ParseJson(body, ec);
  if (ec)
    return ProblemResponse(
        MakeProblem(Why::kBadParameter, "the body is not JSON: " + ec.message()));
  return FromAnswer(source_.Import(name, exported), 201);
}

}  // namespace aweft::admin

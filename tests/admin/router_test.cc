#include "admin/router.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "tests/admin/fake_source.h"

namespace aweft::admin {
namespace {

using testing::FakeSource;

namespace json = boost::json;

struct Fixture {
  explicit Fixture(std::string token = "") : router(source, metrics, std::move(token)) {}
  Response Get(const std::string& target, const std::string& authorization = "") {
    return Complete(router.Handle({"GET", target, authorization, "", "", ""}));
  }
  FakeSource source;
  Metrics metrics;
  Router router;
};

json::value Body(const Response& response) { return json::parse(response.body); }

TEST_CASE("the routes answer JSON from the source", "[admin][router]") {
  Fixture f;
  CHECK(f.Get("/health").status == 200);
  CHECK(Body(f.Get("/v1/node")).at("id") == "fake");
  CHECK(Body(f.Get("/v1/links")).at("links").as_array().empty());
  Response page = f.Get("/");
  CHECK(page.status == 200);
  CHECK(page.content_type.starts_with("text/html"));
  CHECK(page.body.find("<title>aweft-node</title>") != std::string::npos);
  Response metrics = f.Get("/metrics");
  CHECK(metrics.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(f.source.collected == 1);
  CHECK(metrics.body.find("aweft_admin_requests_total{code=\"200\"}") != std::string::npos);
}

TEST_CASE("names are one percent-encoded path segment, so they may hold '/'", "[admin][router]") {
  Fixture f;
  CHECK(f.Get("/v1/documents/team%2Fb").status == 200);
  CHECK(f.source.asked == "team/b@now");
  CHECK(f.Get("/v1/documents/a?at=3").status == 200);
  CHECK(f.source.asked == "a@3");
  CHECK(f.Get("/v1/documents/a%2").status == 400);
}

TEST_CASE("what a client sends that is not UTF-8 is quoted as U+FFFD, so the body stays JSON",
          "[admin][router][refusal]") {
  Fixture f;
  // Found by tests/fuzz/fuzz_admin_http.cc: each was a body JSON cannot parse.
  Response missing = f.Get("/v1/documents/%ff");
  CHECK(missing.status == 404);
  CHECK(Body(missing).at("message") == "no \xEF\xBF\xBD");
  Response route = f.Get("/v\xb1/x");
  CHECK(route.status == 404);
  CHECK(Body(route).at("message") == "nothing is served at /v\xEF\xBF\xBD/x");
  Response parameter = f.Get("/v1/documents?%c3=1");
  CHECK(parameter.status == 400);
  CHECK(Body(parameter).at("message") == "unknown parameter '\xEF\xBF\xBD'");
}

TEST_CASE("paging parameters are checked before the source is asked", "[admin][router][refusal]") {
  Fixture f;
  CHECK(f.Get("/v1/documents?prefix=te%20am&after=x&limit=5").status == 200);
  CHECK(f.source.asked == "te am|x|5");
  for (const char* bad :
       {"/v1/documents?limit=0", "/v1/documents?limit=1001", "/v1/documents?limit=ten",
        "/v1/documents?limit=-1", "/v1/documents?limt=5", "/v1/documents/a/commits?since=x",
        "/v1/documents/a/commits?limit=", "/v1/documents/a?at=1.5"}) {
    f.source.asked.clear();
    Response response = f.Get(bad);
    INFO(bad);
    CHECK(response.status == 400);
    CHECK(Body(response).at("reason") == "bad-parameter");
    CHECK(f.source.asked.empty());
  }
}

TEST_CASE("refusals become {reason, message, fix} with their status", "[admin][router][refusal]") {
  Fixture f;
  Response missing = f.Get("/v1/documents/zzz");
  CHECK(missing.status == 404);
  CHECK(Body(missing).at("reason") == "no-document");
  CHECK(Body(missing).at("message") == "no zzz");
  CHECK(Body(missing).at("fix").as_string().size() > 0);
  CHECK(f.Get("/v1/documents/a/commits?since=2").status == 410);
  CHECK(Body(f.Get("/v1/documents/a/commits?since=2")).at("reason") == "truncated");
  CHECK(f.Get("/v1/documents/a/commits?since=12&limit=7").status == 200);
  CHECK(f.source.asked == "a:12:7");
  CHECK(f.Get("/nothing").status == 404);
  CHECK(Body(f.Get("/v1/documents/a/nothing")).at("reason") == "no-route");
  Response wrong = f.router.Handle({"POST", "/v1/documents/a", "", "", "", ""});
  CHECK(wrong.status == 405);
  CHECK(Body(wrong).at("reason") == "method-not-allowed");
  f.source.ready = false;
  Response ready = f.Get("/ready");
  CHECK(ready.status == 503);
  CHECK(Body(ready).at("reason") == "not-ready");
  CHECK(Body(ready).at("checks").as_array().size() == 2);
}

TEST_CASE("DELETE needs ?confirm= with the document's name", "[admin][router][refusal]") {
  Fixture f;
  CHECK(f.router.Handle({"DELETE", "/v1/documents/a", "", "", "", ""}).status == 400);
  CHECK(f.router.Handle({"DELETE", "/v1/documents/a?confirm=b", "", "", "", ""}).status == 400);
  CHECK(
      Body(f.router.Handle({"DELETE", "/v1/documents/a?confirm=b", "", "", "", ""})).at("reason") ==
      "unconfirmed");
  CHECK(f.source.asked.empty());
  CHECK(f.router.Handle({"DELETE", "/v1/documents/team%2Fb?confirm=team%2Fb", "", "", "", ""})
            .status == 200);
  CHECK(f.source.asked == "removed team/b");
}

TEST_CASE("PUT hands the body to Import, and a body that is not JSON is refused",
          "[admin][router][refusal]") {
  Fixture f;
  CHECK(f.router.Handle({"PUT", "/v1/documents/c", "", R"({"x":1})", "", ""}).status == 201);
  CHECK(f.source.asked == R"(c={"x":1})");
  Response bad = f.router.Handle({"PUT", "/v1/documents/c", "", "{nope", "", ""});
  CHECK(bad.status == 400);
  CHECK(Body(bad).at("reason") == "bad-parameter");
}

TEST_CASE("with a token every route but /health needs it", "[admin][router][refusal]") {
  Fixture f("admin-secret");
  CHECK(f.Get("/health").status == 200);
  Response missing = f.Get("/v1/node");
  CHECK(missing.status == 401);
  CHECK(Body(missing).at("reason") == "unauthorized");
  bool challenged = false;
  for (const auto& [name, value] : missing.headers) challenged |= name == "WWW-Authenticate";
  CHECK(challenged);
  CHECK(f.Get("/v1/node", "Bearer wrong-secret").status == 403);
  CHECK(Body(f.Get("/v1/node", "Bearer wrong-secret")).at("reason") == "forbidden");
  CHECK(f.Get("/v1/node", "Bearer admin-secret").status == 200);
  CHECK(f.Get("/?token=admin-secret").status == 200);
  CHECK(f.Get("/metrics?token=nope").status == 403);
  for (const char* path : {"/ready", "/metrics", "/v1/links", "/v1/documents", "/v1/documents/a",
                           "/v1/documents/a/commits", "/nothing"}) {
    INFO(path);
    CHECK(f.Get(path).status == 401);
  }
  // The dashboard's page holds no data: it is served, and asks for the token.
  CHECK(f.Get("/").status == 200);
}

TEST_CASE("a Host that names another site is refused, on every route (DNS rebinding)",
          "[admin][router][refusal]") {
  FakeSource source;
  Metrics metrics;
  Router router(source, metrics, "", {"admin.internal"});
  auto host = [&](const std::string& host) {
    return router.Handle({"GET", "/health", "", "", host, ""});
  };
  for (const char* known : {"", "localhost", "LocalHost:7421", "127.0.0.1", "127.0.0.1:7421",
                            "10.1.2.3:80", "[::1]:7421", "admin.internal", "Admin.Internal:7421"}) {
    INFO(known);
    CHECK(host(known).status == 200);
  }
  for (const char* other :
       {"evil.example", "evil.example:7421", "localhost.evil.example", "user@localhost", "a b"}) {
    INFO(other);
    Response refused = host(other);
    CHECK(refused.status == 421);
    CHECK(Body(refused).at("reason") == "unknown-host");
  }
  Response state = router.Handle({"GET", "/v1/documents/a", "", "", "evil.example", ""});
  CHECK(state.status == 421);
  Response removed =
      router.Handle({"DELETE", "/v1/documents/a?confirm=a", "", "", "evil.example", ""});
  CHECK(removed.status == 421);
  CHECK(source.asked.empty());
}

TEST_CASE("without a token, a POST must be JSON (a page cannot send that cross-site unasked)",
          "[admin][router][refusal]") {
  Fixture f;
  for (const char* simple :
       {"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
    INFO(simple);
    Response refused = f.router.Handle({"POST", "/v1/documents/a/snapshot", "", "", "", simple});
    CHECK(refused.status == 415);
    CHECK(Body(refused).at("reason") == "unsupported-media-type");
  }
  CHECK(f.source.asked.empty());
  CHECK(f.router
            .Handle(
                {"POST", "/v1/documents/a/snapshot", "", "", "", "Application/JSON; charset=utf-8"})
            .status == 200);
  CHECK(f.source.asked == "snapshot a");
  Fixture guarded("admin-secret");
  CHECK(
      guarded.router.Handle({"POST", "/v1/documents/a/snapshot", "Bearer admin-secret", "", "", ""})
          .status == 200);
}

TEST_CASE("every admin reason has its spelling and status", "[admin][refusal]") {
  auto [why, reason, status] = GENERATE(table<Why, std::string, int>({
      {Why::kUnauthorized, "unauthorized", 401},
      {Why::kForbidden, "forbidden", 403},
      {Why::kNoRoute, "no-route", 404},
      {Why::kMethod, "method-not-allowed", 405},
      {Why::kBadParameter, "bad-parameter", 400},
      {Why::kUnconfirmed, "unconfirmed", 400},
      {Why::kExists, "exists", 409},
      {Why::kInUse, "in-use", 409},
      {Why::kTooLarge, "too-large", 413},
      {Why::kNotReady, "not-ready", 503},
      {Why::kUnknownHost, "unknown-host", 421},
      {Why::kSimpleRequest, "unsupported-media-type", 415},
  }));
  const Problem problem = MakeProblem(why, "detail");
  CHECK(ReasonName(why) == reason);
  CHECK(problem.reason == reason);
  CHECK(problem.status == status);
  CHECK_FALSE(problem.fix.empty());
}

}  // namespace
}  // namespace aweft::admin

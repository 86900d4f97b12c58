// aweft-node as a real process: every admin route, its errors, and metrics.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "sync/snapshot.h"
#include "tests/admin/admin_fixture.h"
#include "tests/admin/exposition.h"

namespace aweft::admin::testing {
namespace {

using codec::Kind;
using sync::Document;

// Writes a document with an array, a map and an alias in it (ids worth
// keeping); returns how many commits that made.
uint64_t Fill(Document& doc) {
  uint64_t commits = 0;
  const uint64_t watch = doc.Watch([&](const sync::Change&) { ++commits; });
  sync::Observable& list = doc.Create(Kind::kArray);
  sync::Observable& people = doc.Create(Kind::kMap);
  sync::Observable& ada = doc.Create(Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "title", std::string("plan")));
  REQUIRE(doc.Set(doc.root(), "list", sync::Attach(list)));
  REQUIRE(doc.Push(list, 1.0));
  REQUIRE(doc.Push(list, std::string("two")));
  REQUIRE(doc.Set(doc.root(), "people", sync::Attach(people)));
  REQUIRE(doc.Set(ada, "name", std::string("Ada")));
  REQUIRE(doc.Add(people, ada));
  REQUIRE(doc.Set(doc.root(), "owner", sync::Alias(ada)));
  doc.Unwatch(watch);
  return commits;
}

TEST_CASE("/health and /ready answer, and the dashboard page is served", "[admin][process]") {
  AdminFixture f;
  CHECK(f.GetJson("/health").at("status") == "ok");
  json::value ready = f.GetJson("/ready");
  CHECK(ready.at("ready") == true);
  CHECK(ready.at("checks").as_array().size() == 3);
  HttpReply page = f.Get("/");
  CHECK(page.status == 200);
  CHECK(page.content_type == "text/html; charset=utf-8");
  CHECK(page.body.find("aweft-node") != std::string::npos);
  for (const char* elsewhere :
       {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http", "import "}) {
    INFO(elsewhere);
    CHECK(page.body.find(elsewhere) == std::string::npos);  // Nothing from elsewhere.
  }
}

TEST_CASE("/ready fails while an upstream is not linked", "[admin][process][refusal]") {
  AdminFixture f({"--upstream", "ws://127.0.0.1:1/"});
  json::value ready = f.GetJson("/ready", 503);
  CHECK(ready.at("reason") == "not-ready");
  CHECK(std::string(ready.at("message").as_string()).find("ws://127.0.0.1:1/") !=
        std::string::npos);
  CHECK(f.GetJson("/health").at("status") == "ok");
}

TEST_CASE("/ready is ready on an idle node below once its upstream answers", "[admin][process]") {
  TempDir dir;
  NodeProcess above(dir.path() + "/above");
  above.Start();
  AdminFixture f({"--upstream", above.url()});  // No client shares anything.
  REQUIRE(RunUntil(
      f.io, [&] { return f.Get("/ready").status == 200; }, std::chrono::seconds(5)));
  above.Kill();
  CHECK(RunUntil(
      f.io, [&] { return f.Get("/ready").status == 503; }, std::chrono::seconds(5)));
}

TEST_CASE("documents are listed by prefix or by what they contain, a page at a time",
          "[admin][process]") {
  AdminFixture f;
  Document a(Kind::kObject), b(Kind::kArray), c(Kind::kMap);
  REQUIRE(a.Set(a.root(), "x", 1.0));
  f.Share("team/a", a, 1);
  f.Share("team/b", b);
  f.Share("zed", c);
  json::value all = f.GetJson("/v1/documents");
  REQUIRE(all.at("documents").as_array().size() == 3);
  CHECK(all.at("next").is_null());
  const json::value& first = all.at("documents").at(0);
  CHECK(first.at("name") == "team/a");
  CHECK(first.at("kind") == "object");
  CHECK(first.at("root") == J(codec::IdText(a.root().id())));
  CHECK(first.at("head") == 1);
  CHECK(first.at("loaded") == true);
  CHECK(first.at("links").as_array().size() == 1);
  CHECK(first.at("bytes").is_number());
  CHECK(all.at("documents").at(1).at("kind") == "array");

  json::value team = f.GetJson("/v1/documents?prefix=team%2F&limit=1");
  REQUIRE(team.at("documents").as_array().size() == 1);
  CHECK(team.at("next") == "team/a");
  json::value next = f.GetJson("/v1/documents?prefix=team%2F&limit=1&after=team%2Fa");
  CHECK(next.at("documents").at(0).at("name") == "team/b");
  CHECK(next.at("next").is_null());

  // Anywhere in the name: "e" is in "team/a", "team/b" and "zed"; "/b" in one.
  json::value holding = f.GetJson("/v1/documents?contains=e&limit=2");
  REQUIRE(holding.at("documents").as_array().size() == 2);
  CHECK(holding.at("next") == "team/b");
  holding = f.GetJson("/v1/documents?contains=e&limit=2&after=team%2Fb");
  CHECK(holding.at("documents").at(0).at("name") == "zed");
  CHECK(holding.at("next").is_null());
  holding = f.GetJson("/v1/documents?contains=%2Fb");
  REQUIRE(holding.at("documents").as_array().size() == 1);
  CHECK(holding.at("documents").at(0).at("name") == "team/b");
  CHECK(f.GetJson("/v1/documents?contains=nothing-holds-this").at("documents").as_array().empty());

  for (const char* bad : {"/v1/documents?limit=0", "/v1/documents?limit=5000",
                          "/v1/documents?limit=x", "/v1/documents?page=2"}) {
    INFO(bad);
    CHECK(f.GetJson(bad, 400).at("reason") == "bad-parameter");
  }
}

TEST_CASE("a document's state renders as JSON, now and at a past seq", "[admin][process]") {
  AdminFixture f;
  Document doc(Kind::kObject);
  f.Share("board", doc);
  const uint64_t head = Fill(doc);
  REQUIRE(f.WaitForHead("board", head));
  json::value state = f.GetJson("/v1/documents/board");
  CHECK(state.at("name") == "board");
  CHECK(state.at("seq") == head);
  const std::string root = codec::IdText(doc.root().id());
  CHECK(state.at("root") == J(root));
  const json::object& observables = state.at("observables").as_object();
  CHECK(observables.size() == 4);
  const json::value& top = observables.at(root).at("value");
  CHECK(top.at("title") == "plan");
  const json::value& list_ref = top.at("list");
  CHECK(list_ref.at("kind") == "array");
  CHECK(list_ref.at("edge") == "attach");
  const json::value& list = observables.at(list_ref.at("ref").as_string()).at("value");
  CHECK(json::serialize(list) == R"([1,"two"])");  // Position order.
  CHECK(top.at("owner").at("edge") == "alias");
  const json::value& people = observables.at(top.at("people").at("ref").as_string());
  CHECK(people.at("kind") == "map");
  // Maps are keyed by id text.
  const std::string ada(top.at("owner").at("ref").as_string());
  CHECK(people.at("value").at(ada).at("ref") == J(ada));

  json::value early = f.GetJson("/v1/documents/board?at=1");
  CHECK(early.at("seq") == 1);
  CHECK(early.at("observables").at(root).at("value").at("title") == "plan");
  CHECK_FALSE(early.at("observables").at(root).at("value").as_object().contains("list"));
  json::value empty = f.GetJson("/v1/documents/board?at=0");
  CHECK(empty.at("observables").at(root).at("value").as_object().empty());

  CHECK(f.GetJson("/v1/documents/nothing", 404).at("reason") == "no-document");
  CHECK(f.GetJson("/v1/documents/board?at=99", 404).at("reason") == "no-document");
  CHECK(f.GetJson("/v1/documents/board?at=x", 400).at("reason") == "bad-parameter");
}

TEST_CASE("history is decoded page by page, or truncated", "[admin][process]") {
  AdminFixture f(
      {"--set", "storage.snapshot_every_commits=4", "--set", "storage.history_commits=5"});
  Document doc(Kind::kObject);
  Client& client = f.Share("log", doc);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(doc.Set(doc.root(), "n", static_cast<double>(i)));
    RunUntil(
        f.io, [] { return false; }, std::chrono::milliseconds(20));
  }
  (void)client;
  REQUIRE(f.WaitForHead("log", 10));
  // A snapshot at 10 keeps 5 commits below it: the log starts after 5.
  REQUIRE(f.Call("POST", "/v1/documents/log/snapshot").status == 200);
  json::value info = f.GetJson("/v1/documents?prefix=log").at("documents").at(0);
  const uint64_t floor = info.at("floor").to_number<uint64_t>();
  REQUIRE(floor == 5);
  json::value page =
      f.GetJson("/v1/documents/log/commits?since=" + std::to_string(floor) + "&limit=2");
  REQUIRE(page.at("commits").as_array().size() == 2);
  CHECK(page.at("commits").at(0).at("seq") == floor + 1);
  const json::value& delta = page.at("commits").at(0).at("commit").at("deltas").at(0);
  CHECK(delta.at("ref").at("key") == "n");
  CHECK(delta.at("id") == J(codec::IdText(doc.root().id())));
  CHECK(page.at("next") == floor + 2);
  CHECK(page.at("head") == 10);
  json::value rest = f.GetJson("/v1/documents/log/commits?since=" + std::to_string(floor + 2));
  CHECK(rest.at("commits").as_array().size() == 10 - floor - 2);
  CHECK(rest.at("next").is_null());

  CHECK(f.GetJson("/v1/documents/log/commits?since=0", 410).at("reason") == "truncated");
  CHECK(f.GetJson("/v1/documents/log?at=1", 410).at("reason") == "truncated");
  CHECK(f.GetJson("/v1/documents/nothing/commits", 404).at("reason") == "no-document");
  CHECK(f.GetJson("/v1/documents/log/commits?limit=0", 400).at("reason") == "bad-parameter");
  CHECK(f.GetJson("/v1/documents/log/commits?since=-1", 400).at("reason") == "bad-parameter");
}

TEST_CASE("snapshot on demand, and delete with confirmation once no link shares it",
          "[admin][process]") {
  AdminFixture f;
  Document doc(Kind::kObject);
  f.Share("gone", doc);
  REQUIRE(doc.Set(doc.root(), "x", 1.0));
  REQUIRE(doc.Set(doc.root(), "y", 2.0));
  REQUIRE(f.WaitForHead("gone", 2));
  HttpReply snapshot = f.Call("POST", "/v1/documents/gone/snapshot");
  REQUIRE(snapshot.status == 200);
  CHECK(json::parse(snapshot.body).at("snapshot") == 2);
  CHECK(f.GetJson("/v1/documents?prefix=gone").at("documents").at(0).at("snapshot") == 2);
  CHECK(f.Call("POST", "/v1/documents/nothing/snapshot").status == 404);
  CHECK(f.Call("GET", "/v1/documents/gone/snapshot").status == 405);

  CHECK(json::parse(f.Call("DELETE", "/v1/documents/gone").body).at("reason") == "unconfirmed");
  HttpReply shared = f.Call("DELETE", "/v1/documents/gone?confirm=gone");
  CHECK(shared.status == 409);
  CHECK(json::parse(shared.body).at("reason") == "in-use");
  f.clients.clear();  // The link ends; the node lets go of the document.
  HttpReply removed;
  RunUntil(f.io, [&] {
    if (removed.status == 0 || removed.status == 409) {
      removed = f.Call("DELETE", "/v1/documents/gone?confirm=gone");
    }
    return removed.status != 409;
  });
  INFO(removed.body);
  REQUIRE(removed.status == 200);
  CHECK(f.GetJson("/v1/documents/gone", 404).at("reason") == "no-document");
  CHECK(f.Call("DELETE", "/v1/documents/gone?confirm=gone").status == 404);
}

TEST_CASE("links show each client with its topics, bytes, commits and lag", "[admin][process]") {
  AdminFixture f;
  Document doc(Kind::kObject);
  f.Share("shared", doc);
  REQUIRE(doc.Set(doc.root(), "x", 1.0));
  REQUIRE(f.WaitForHead("shared", 1));
  json::value links = f.GetJson("/v1/links");
  REQUIRE(links.at("links").as_array().size() == 1);
  const json::value& link = links.at("links").at(0);
  CHECK(link.at("kind") == "client");
  CHECK(link.at("direction") == "accepted");
  CHECK(std::string(link.at("remote").as_string()).starts_with("127.0.0.1:"));
  CHECK(json::serialize(link.at("topics")) == R"(["shared"])");
  CHECK(link.at("commits").at("in").to_number<uint64_t>() >= 1);
  CHECK(link.at("frames").at("in").to_number<uint64_t>() >= 2);
  CHECK(link.at("bytes").at("in").to_number<uint64_t>() > 0);
  CHECK(link.at("bytes").at("out").to_number<uint64_t>() > 0);
  CHECK(link.at("refusals").at("in") == 0);
  CHECK(link.at("lag").at("queued_bytes") == 0);
  CHECK(f.GetJson("/v1/documents?prefix=shared").at("documents").at(0).at("links").at(0) ==
        link.at("id"));
}

TEST_CASE("/v1/node shows the config in effect with every secret masked", "[admin][process]") {
  AdminFixture f({"--node-id", "node-one", "--threads", "2", "--admin-token", "admin-secret-1",
                  "--set", R"(tokens=[{token="link-secret-1", write=["*"]}])"});
  HttpReply reply = f.Get("/v1/node", "admin-secret-1");
  REQUIRE(reply.status == 200);
  CHECK(reply.body.find("admin-secret-1") == std::string::npos);
  CHECK(reply.body.find("link-secret-1") == std::string::npos);
  json::value node = json::parse(reply.body);
  CHECK(node.at("id") == "node-one");
  CHECK(node.at("version") == "0.1.0");
  CHECK(node.at("config").at("admin_token") == "********");
  CHECK(node.at("config").at("tokens").at(0).at("token") == "********");
  CHECK(node.at("config").at("tokens").at(0).at("write").at(0) == "*");
  CHECK(node.at("config").at("storage").at("durability") == "sync");
  CHECK(node.at("config").at("threads") == 2);
  CHECK(node.at("upstreams").as_array().empty());
  CHECK(node.at("uptime_seconds").to_number<double>() >= 0);
}

TEST_CASE(
    "at --threads 3 the links of every thread are listed, and each shard serving a "
    "document holds one replica of it",
    "[admin][process]") {
  AdminFixture f({"--threads", "3"});
  // Three connections in a row: one on the home thread, one on each shard.
  Document doc(Kind::kObject);
  Client& writer = f.Share("spread", doc);
  std::vector<std::unique_ptr<Client>> readers;
  std::vector<sync::Shared*> reads;
  for (int i = 0; i < 2; ++i) {
    readers.push_back(std::make_unique<Client>(f.io, f.scheduler, f.node.url()));
    reads.push_back(*readers.back()->link->Share("spread", nullptr));
  }
  REQUIRE(RunUntil(f.io, [&] { return reads[0]->ready() && reads[1]->ready(); }));
  REQUIRE(doc.Set(doc.root(), "everywhere", true));
  REQUIRE(RunUntil(f.io, [&] {
    for (sync::Shared* read : reads) {
      if (!read->document()->root().Get("everywhere")) return false;
    }
    return true;
  }));
  (void)writer;

  const json::array links = f.GetJson("/v1/links").at("links").as_array();
  REQUIRE(links.size() == 3);
  for (const auto& link : links) CHECK(link.at("topics").at(0) == "spread");
  CHECK(f.GetJson("/v1/documents?prefix=spread")
            .at("documents")
            .at(0)
            .at("links")
            .as_array()
            .size() == 3);
  HttpReply metrics = f.Get("/metrics");
  std::vector<Sample> samples;
  CHECK(ExpositionProblems(metrics.body, &samples).empty());
  CHECK(SampleValue(samples, "aweft_links_open", "kind=\"client\"") == 3);
  CHECK(SampleValue(samples, "aweft_replicas") == 2);

  // The readers leave: their replicas go with them.
  readers.clear();
  REQUIRE(RunUntil(f.io, [&] {
    std::vector<Sample> now;
    (void)ExpositionProblems(f.Get("/metrics").body, &now);
    return SampleValue(now, "aweft_replicas") == 0;
  }));
}

TEST_CASE("an admin token guards every route but /health and the dashboard's page",
          "[admin][process][refusal]") {
  AdminFixture f({"--admin-token", "admin-secret-1"});
  CHECK(f.GetJson("/health").at("status") == "ok");
  const HttpReply page = f.Get("/");
  CHECK(page.status == 200);
  CHECK(page.body.find("<input id=\"token\"") != std::string::npos);
  for (const char* route : {"/ready", "/metrics", "/v1/node", "/v1/links", "/v1/documents",
                            "/v1/documents/x", "/v1/documents/x/commits"}) {
    INFO(route);
    HttpReply missing = f.Get(route);
    CHECK(missing.status == 401);
    CHECK(json::parse(missing.body).at("reason") == "unauthorized");
    CHECK(missing.headers.find("WWW-Authenticate: Bearer") != std::string::npos);
    HttpReply wrong = f.Get(route, "not-the-secret");
    CHECK(wrong.status == 403);
    CHECK(json::parse(wrong.body).at("reason") == "forbidden");
  }
  CHECK(f.Get("/v1/node", "admin-secret-1").status == 200);
  CHECK(f.Get("/?token=admin-secret-1").status == 200);
  CHECK(f.Call("DELETE", "/v1/documents/x?confirm=x").status == 401);
}

TEST_CASE("the admin endpoint refuses a non-loopback address without a token, and one in use",
          "[admin][process][refusal]") {
  TempDir dir;
  NodeProcess node(dir.path() + "/data", {"--admin", "0.0.0.0:0"});
  CHECK_THROWS(node.Start());
  const int status = node.Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);

  // An address in use exits 2 as well, naming the setting.
  AdminFixture running;
  NodeProcess second(dir.path() + "/second",
                     {"--admin", "127.0.0.1:" + std::to_string(running.node.admin_port())});
  CHECK_THROWS(second.Start());
  const int busy = second.Wait();
  CHECK(WIFEXITED(busy));
  CHECK(WEXITSTATUS(busy) == 2);
}

TEST_CASE("/metrics is valid exposition format and its counters move with commits",
          "[admin][process]") {
  AdminFixture f;
  auto scrape = [&] {
    HttpReply reply = f.Get("/metrics");
    REQUIRE(reply.status == 200);
    REQUIRE(reply.content_type == "text/plain; version=0.0.4; charset=utf-8");
    std::vector<Sample> samples;
    std::vector<std::string> problems = ExpositionProblems(reply.body, &samples);
    INFO(reply.body);
    for (const auto& problem : problems) FAIL_CHECK(problem);
    return samples;
  };
  std::vector<Sample> before = scrape();
  CHECK(SampleValue(before, "aweft_commits_total", "direction=\"in\"") == 0);
  CHECK(SampleValue(before, "aweft_documents_stored") == 0);
  CHECK(SampleValue(before, "aweft_rocksdb_estimated_keys") >= 0);
  CHECK(SampleValue(before, "aweft_uptime_seconds") >= 0);

  Document doc(Kind::kObject);
  Client& writer = f.Share("counted", doc);
  for (int i = 0; i < 5; ++i) REQUIRE(doc.Set(doc.root(), "n" + std::to_string(i), 1.0 * i));
  REQUIRE(f.WaitForHead("counted", 5));
  Client reader(f.io, f.scheduler, f.node.url());
  sync::Shared* read = *reader.link->Share("counted", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  REQUIRE(doc.Set(doc.root(), "late", true));
  REQUIRE(RunUntil(f.io, [&] { return read->document()->root().Get("late") != nullptr; }));
  (void)writer;

  std::vector<Sample> after = scrape();
  CHECK(SampleValue(after, "aweft_commits_total", "direction=\"in\"") >= 6);
  CHECK(SampleValue(after, "aweft_commits_total", "direction=\"out\"") >= 1);
  CHECK(SampleValue(after, "aweft_frames_total", "direction=\"in\"") >
        SampleValue(before, "aweft_frames_total", "direction=\"in\""));
  CHECK(SampleValue(after, "aweft_bytes_total", "direction=\"out\"") > 0);
  CHECK(SampleValue(after, "aweft_links_open", "kind=\"client\"") == 2);
  CHECK(SampleValue(after, "aweft_connections_total") == 2);
  CHECK(SampleValue(after, "aweft_documents_stored") == 1);
  CHECK(SampleValue(after, "aweft_documents_loaded") == 1);
  CHECK(SampleValue(after, "aweft_store_commits_written_total") == 6);
  CHECK(SampleValue(after, "aweft_store_sync_batch_commits_count") >= 1);
  CHECK(SampleValue(after, "aweft_store_sync_batch_commits_sum") == 6);
  CHECK(SampleValue(after, "aweft_store_sync_duration_seconds_count") >= 1);
  // "late" went on to the reader once stored: its wait is in the histogram.
  CHECK(SampleValue(after, "aweft_forward_delay_seconds_count") >= 1);
  CHECK(SampleValue(after, "aweft_forward_delay_seconds_sum") > 0);
  CHECK(SampleValue(before, "aweft_forward_delay_seconds_count") == 0);
  const std::string build = "version=\"" AWEFT_VERSION "\",compiler=\"" __VERSION__ "\",";
  CHECK(std::any_of(after.begin(), after.end(), [&](const Sample& s) {
    return s.name == "aweft_build_info" && s.labels.rfind(build, 0) == 0 && s.value == 1;
  }));
  CHECK(SampleValue(after, "aweft_admin_requests_total", "code=\"200\"") >= 1);

  // A refused open and a snapshot count too.
  sync::Shared* missing = *reader.link->Share("not-here", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return missing->ended(); }));
  REQUIRE(f.Call("POST", "/v1/documents/counted/snapshot").status == 200);
  std::vector<Sample> last = scrape();
  CHECK(SampleValue(last, "aweft_faults_total", "reason=\"no-document\",origin=\"local\"") == 1);
  CHECK(SampleValue(last, "aweft_store_snapshots_total") == 1);

  // The process, under Prometheus' standard names.
  CHECK(SampleValue(last, "process_cpu_seconds_total") > 0);
  CHECK(SampleValue(last, "process_resident_memory_bytes") > 1e6);
  CHECK(SampleValue(last, "process_open_fds") > 3);
  CHECK(SampleValue(last, "process_max_fds") >= SampleValue(last, "process_open_fds"));
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(SampleValue(last, "process_start_time_seconds") > now - 600);
  CHECK(SampleValue(last, "process_start_time_seconds") <= now);

  // A client that goes is churn, not a fault.
  reader.channel->Close();
  std::vector<Sample> gone;
  REQUIRE(RunUntil(f.io, [&] {
    gone = scrape();
    return SampleValue(gone, "aweft_topics_ended_total", "reason=\"closed\"") >= 1;
  }));
  CHECK(SampleValue(gone, "aweft_faults_total", "reason=\"closed\",origin=\"remote\"") == -1);

  // And Prometheus' own linter finds nothing to say (promtool, Debian's
  // prometheus package, installed by scripts/deps.sh).
  const std::string path = f.dir.path() + "/metrics.txt";
  std::ofstream(path) << f.Get("/metrics").body;
  const std::string said = path + ".out";
  const int status =
      std::system(("promtool check metrics < " + path + " > " + said + " 2>&1").c_str());
  std::ifstream in(said);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(output);
  CHECK(status == 0);
  CHECK(output.empty());
}

TEST_CASE("a commit the node refuses is counted by reason", "[admin][process][refusal]") {
  AdminFixture f(
      {"--set",
       R"(tokens=[{token="reader-secret", read=["*"]}, {token="writer-secret", write=["*"]}])"});
  Document doc(Kind::kObject);
  f.clients.push_back(std::make_unique<Client>(f.io, f.scheduler, f.node.url(), "writer-secret"));
  REQUIRE(f.clients.back()->link->Share("ro", &doc));
  REQUIRE(f.WaitForHead("ro", 0));
  Client reader(f.io, f.scheduler, f.node.url(), "reader-secret");
  sync::Shared* read = *reader.link->Share("ro", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  REQUIRE(read->document()->Set(read->document()->root(), "x", 1.0));
  REQUIRE(RunUntil(f.io, [&] {
    std::vector<Sample> samples;
    (void)ExpositionProblems(f.Get("/metrics").body, &samples);
    return SampleValue(samples, "aweft_refusals_total", "reason=\"forbidden\",origin=\"local\"") ==
           1;
  }));
}

TEST_CASE("unknown routes, wrong methods and bad bodies are refused as JSON",
          "[admin][process][refusal]") {
  AdminFixture f;
  CHECK(f.GetJson("/nothing", 404).at("reason") == "no-route");
  CHECK(f.GetJson("/v1/nothing", 404).at("reason") == "no-route");
  CHECK(f.GetJson("/v1/documents/x/nothing", 404).at("reason") == "no-route");
  HttpReply post = f.Call("POST", "/v1/links");
  CHECK(post.status == 405);
  CHECK(post.headers.find("Allow: GET") != std::string::npos);
  HttpReply put = f.Call("PUT", "/v1/documents/x", "", "{not json");
  CHECK(put.status == 400);
  CHECK(json::parse(put.body).at("reason") == "bad-parameter");
  HttpReply shape = f.Call("PUT", "/v1/documents/x", "", R"({"name":"x"})");
  CHECK(shape.status == 400);
  CHECK(json::parse(shape.body).at("fix").as_string().size() > 0);
  HttpReply id = f.Call("PUT", "/v1/documents/x", "",
                        R"({"name":"x","root":"short","kind":"object","head":0,"commit":null})");
  CHECK(id.status == 400);
  CHECK(json::parse(id.body).at("reason") == "invalid-id");
  CHECK(f.GetJson("/v1/documents/x/export", 404).at("reason") == "no-document");
}

TEST_CASE("a name no node could hold is refused invalid-name on every document route",
          "[admin][process][refusal]") {
  AdminFixture f;
  const std::string long_name(257, 'n');
  for (const std::string& target :
       {std::string("/v1/documents/%01x"), "/v1/documents/" + long_name + "/commits",
        std::string("/v1/documents/tab%09name/export")}) {
    INFO(target);
    json::value refused = f.GetJson(target, 400);
    CHECK(refused.at("reason") == "invalid-name");
  }
  CHECK(f.GetJson("/v1/documents/fine", 404).at("reason") == "no-document");
}

TEST_CASE("export then import into a fresh node reproduces the document, ids included",
          "[admin][process]") {
  AdminFixture first;
  Document doc(Kind::kObject);
  first.Share("original", doc);
  const uint64_t head = Fill(doc);
  REQUIRE(first.WaitForHead("original", head));
  HttpReply exported = first.Get("/v1/documents/original/export");
  REQUIRE(exported.status == 200);
  json::value body = json::parse(exported.body);
  CHECK(body.at("name") == "original");
  CHECK(body.at("root") == J(codec::IdText(doc.root().id())));
  CHECK(body.at("kind") == "object");
  CHECK(body.at("head") == head);
  CHECK(body.at("commit").is_string());

  AdminFixture second;
  HttpReply imported = second.Call("PUT", "/v1/documents/copy", "", exported.body);
  INFO(imported.body);
  REQUIRE(imported.status == 201);
  CHECK(json::parse(imported.body).at("root") == J(codec::IdText(doc.root().id())));
  CHECK(second.Call("PUT", "/v1/documents/copy", "", exported.body).status == 409);

  json::value a = first.GetJson("/v1/documents/original");
  json::value b = second.GetJson("/v1/documents/copy");
  CHECK(a.at("root") == b.at("root"));
  CHECK(json::serialize(a.at("observables")) == json::serialize(b.at("observables")));
  json::value again = json::parse(second.Get("/v1/documents/copy/export").body);
  CHECK(again.at("commit") == body.at("commit"));  // Every id and position kept.
  // The body's name is optional (the path names the document).
  json::object unnamed = body.as_object();
  unnamed.erase("name");
  CHECK(second.Call("PUT", "/v1/documents/unnamed", "", json::serialize(unnamed)).status == 201);

  // A client reading the copy gets the same document, ids and positions.
  Client reader(second.io, second.scheduler, second.node.url());
  sync::Shared* read = *reader.link->Share("copy", nullptr);
  REQUIRE(RunUntil(second.io, [&] { return read->ready(); }));
  CHECK(sync::TakeSnapshot(*read->document()) == sync::TakeSnapshot(doc));
}

}  // namespace
}  // namespace aweft::admin::testing

// aweftctl's document commands, online against a real node and offline on a
// data directory.

#include <sys/wait.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "codec/commit.h"
#include "codec/id.h"
#include "codec/json.h"
#include "node/json/document_json.h"
#include "sync/snapshot.h"
#include "tests/admin/admin_fixture.h"
#include "tests/codec/doubles.h"

namespace aweft::admin::testing {
namespace {

using codec::Kind;
using sync::Document;

struct Run {
  int status = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs aweftctl with `args` (no shell quoting: test arguments only), stdin
// from /dev/null, bounded by `timeout`.
Run Ctl(const TempDir& dir, const std::vector<std::string>& args) {
  std::string command = "timeout 30 " AWEFTCTL;
  for (const auto& arg : args) command += " '" + arg + "'";
  const std::string out = dir.path() + "/ctl.out", err = dir.path() + "/ctl.err";
  command += " </dev/null >" + out + " 2>" + err;
  Run run;
  const int status = std::system(command.c_str());
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(out);
  run.err = ReadFile(err);
  return run;
}

TEST_CASE("aweftctl lists, shows, pages history, snapshots and reads stats from a node",
          "[admin][aweftctl]") {
  AdminFixture f;
  Document doc(Kind::kObject);
  Client& client = f.Share("notes", doc);
  for (int i = 0; i < 5; ++i) REQUIRE(doc.Set(doc.root(), "n", 1.0 * i));
  REQUIRE(f.WaitForHead("notes", 5));
  (void)client;
  const std::vector<std::string> at{"--node", f.node.admin_url()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), at.begin(), at.end());
    return Ctl(f.dir, args);
  };

  Run docs = with({"docs", "--json"});
  REQUIRE(docs.status == 0);
  json::value listed = json::parse(docs.out);
  CHECK(listed.at("documents").at(0).at("name") == "notes");
  Run human = with({"docs"});
  CHECK(human.out.starts_with("notes\tobject\thead 5"));
  CHECK(human.err.empty());  // No progress bar in a pipe.

  Run show = with({"show", "notes", "--json"});
  REQUIRE(show.status == 0);
  CHECK(json::parse(show.out)
            .at("observables")
            .at(codec::IdText(doc.root().id()))
            .at("value")
            .at("n") == 4);
  CHECK(with({"show", "notes", "--at", "2"}).out.find("n: 1\n") != std::string::npos);

  Run history = with({"history", "notes", "--since", "1", "--limit", "3", "--json"});
  REQUIRE(history.status == 0);
  json::value commits = json::parse(history.out);
  REQUIRE(commits.at("commits").as_array().size() == 3);
  CHECK(commits.at("commits").at(0).at("seq") == 2);
  Run lines = with({"history", "notes"});
  CHECK(std::count(lines.out.begin(), lines.out.end(), '\n') == 5);

  Run snapshot = with({"snapshot", "notes", "--json"});
  REQUIRE(snapshot.status == 0);
  CHECK(json::parse(snapshot.out).at("snapshot") == 5);

  Run stats = with({"stats", "--json"});
  REQUIRE(stats.status == 0);
  CHECK(json::parse(stats.out).at("aweft_documents_stored") == 1);
  CHECK(json::parse(stats.out).at("aweft_store_snapshots_total") == 1);
}

TEST_CASE("aweftctl exports from a node and imports into a data directory and a node",
          "[admin][aweftctl]") {
  AdminFixture f;
  Document doc(Kind::kObject);
  f.Share("source", doc);
  sync::Observable& list = doc.Create(Kind::kArray);
  REQUIRE(doc.Set(doc.root(), "list", sync::Attach(list)));
  REQUIRE(doc.Push(list, std::string("a")));
  REQUIRE(doc.Push(list, std::string("b")));
  REQUIRE(f.WaitForHead("source", 3));
  const std::string file = f.dir.path() + "/source.json";
  Run exported = Ctl(f.dir, {"export", "source", file, "--node", f.node.admin_url()});
  REQUIRE(exported.status == 0);
  CHECK(exported.out.find("exported source at seq 3") != std::string::npos);
  json::value body = json::parse(ReadFile(file));
  CHECK(body.at("root") == J(codec::IdText(doc.root().id())));

  // Offline, into a data directory no node runs on; then a node serves it.
  const std::string data = f.dir.path() + "/offline";
  Run offline = Ctl(f.dir, {"import", file, "--data", data, "--json"});
  INFO(offline.err);
  REQUIRE(offline.status == 3);  // No store there yet.
  {
    NodeProcess once(data);
    once.Start();
  }  // Killed: the directory now holds an empty store.
  offline = Ctl(f.dir, {"import", file, "--data", data, "--json"});
  INFO(offline.out << offline.err);
  REQUIRE(offline.status == 0);
  CHECK(json::parse(offline.out).at("name") == "source");
  CHECK(Ctl(f.dir, {"import", file, "--data", data}).status == 1);  // Exists now.
  // Over the limit the node would apply (its default, or the flag's).
  Run over = Ctl(f.dir, {"import", file, "--data", data, "--name", "small", "--max-document-bytes",
                         "16", "--json"});
  CHECK(over.status == 1);
  CHECK(json::parse(over.out).at("reason") == "limit");
  CHECK_THAT(over.out, Catch::Contains("over 16 (limits.max_document_bytes"));
  CHECK(Ctl(f.dir, {"import", file, "--node", f.node.admin_url(), "--max-document-bytes", "16"})
            .status == 2);
  Run listed = Ctl(f.dir, {"docs", "--data", data, "--json"});
  CHECK(json::parse(listed.out).at("documents").at(0).at("root") == body.at("root"));
  CHECK(Ctl(f.dir, {"stats", "--data", data, "--json"}).status == 0);

  NodeProcess served(data);
  served.Start();
  Client reader(f.io, f.scheduler, served.url());
  sync::Shared* read = *reader.link->Share("source", nullptr);
  REQUIRE(RunUntil(f.io, [&] { return read->ready(); }));
  CHECK(sync::TakeSnapshot(*read->document()) == sync::TakeSnapshot(doc));
  // The directory is in use now: offline access is refused, not risked.
  CHECK(Ctl(f.dir, {"docs", "--data", data}).status == 3);

  // Online, under another name.
  Run online = Ctl(f.dir, {"import", file, "--name", "copy", "--node", served.admin_url()});
  INFO(online.err);
  REQUIRE(online.status == 0);
  CHECK(online.out.find("imported copy: object " + codec::IdText(doc.root().id())) !=
        std::string::npos);
}

using aweft::testing::ModelBits;

// An export (docs/admin.md) of an object whose slots k0, k1, ... hold `values`.
json::object ExportOf(const std::string& name, const codec::Id& root,
                      std::span<const double> values) {
  codec::Commit commit;
  for (size_t i = 0; i < values.size(); ++i) {
    commit.deltas.push_back({codec::DeltaType::kAdd,
                             root,
                             {Kind::kObject, "k" + std::to_string(i)},
                             codec::Value(values[i])});
  }
  return {{"name", name},
          {"root", codec::IdText(root)},
          {"kind", "object"},
          {"head", 1},
          {"commit", codec::Hex(*codec::EncodeCommit(commit))}};
}

// How many of the root's slots k0, k1, ... in the export in `file` differ
// from `values` (a missing slot counts as a difference).
size_t Differences(const std::string& file, std::span<const double> values) {
  boost::system::error_code ec;
  const json::value text = codec::ParseJson(ReadFile(file), ec);
  INFO(file << ": " << ec.message());
  REQUIRE_FALSE(ec);
  auto exported = node::ExportFromJson(text);
  REQUIRE(exported);
  auto document = node::BuildExported(*exported);
  REQUIRE(document);
  size_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const codec::Value* value = (*document)->root().Get("k" + std::to_string(i));
    const double* number = value ? std::get_if<double>(value) : nullptr;
    if (!number || ModelBits(*number) != ModelBits(values[i])) ++wrong;
  }
  return wrong;
}

// The same, for the state `aweftctl show --json` printed.
size_t ShownDifferences(const std::string& shown, const codec::Id& root,
                        std::span<const double> values) {
  boost::system::error_code ec;
  const json::value state = codec::ParseJson(shown, ec);
  REQUIRE_FALSE(ec);
  const json::object& slots =
      state.at("observables").at(codec::IdText(root)).at("value").as_object();
  size_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const json::value* number = slots.if_contains("k" + std::to_string(i));
    if (!number || !number->is_number() ||
        ModelBits(number->to_number<double>()) != ModelBits(values[i])) {
      ++wrong;
    }
  }
  return wrong;
}

TEST_CASE(
    "a million random doubles (a fiftieth under sanitizers) keep their bits through admin and "
    "aweftctl export and import",
    "[admin][aweftctl][json]") {
  const uint64_t seed = aweft::testing::SweepSeed();
  INFO("AWEFT_SEED=" << seed);
  const std::vector<double> all =
      aweft::testing::RandomDoubles(aweft::testing::kSweepDoubles, seed);
  AdminFixture f;
  const std::string offline = f.dir.path() + "/offline";
  {
    NodeProcess once(offline);
    once.Start();
  }  // Killed: the directory now holds an empty store.
  const std::vector<std::string> at{"--node", f.node.admin_url()};
  // Eight documents of an eighth each: a million make 32 MB of state, and a
  // document is at most limits.max_document_bytes (8 MiB).
  const size_t eighth = all.size() / 8;
  for (size_t part = 0; part < 8; ++part) {
    const std::span<const double> values(all.data() + part * eighth, eighth);
    const std::string name = "doubles-" + std::to_string(part);
    const codec::Id root = *codec::IdFromText("AAAAAAAAAAAAAAA" + std::to_string(part + 1));
    const std::string written = f.dir.path() + "/" + name + ".json";
    {
      std::ofstream out(written, std::ios::binary);
      out << codec::WriteJson(ExportOf(name, root, values));
    }
    // Into the node through the admin endpoint, and out again.
    REQUIRE(Ctl(f.dir, {"import", written, "--node", at[1]}).status == 0);
    const std::string online = f.dir.path() + "/" + name + ".online.json";
    REQUIRE(Ctl(f.dir, {"export", name, online, "--node", at[1]}).status == 0);
    CHECK(Differences(online, values) == 0);
    Run shown = Ctl(f.dir, {"show", name, "--json", "--node", at[1]});
    REQUIRE(shown.status == 0);
    CHECK(ShownDifferences(shown.out, root, values) == 0);
    // What the node exported, into a data directory and out again.
    REQUIRE(Ctl(f.dir, {"import", online, "--data", offline}).status == 0);
    const std::string local = f.dir.path() + "/" + name + ".offline.json";
    REQUIRE(Ctl(f.dir, {"export", name, local, "--data", offline}).status == 0);
    CHECK(Differences(local, values) == 0);
  }
}

TEST_CASE("aweftctl's exit codes: refused 1, usage 2, unreachable 3",
          "[admin][aweftctl][refusal]") {
  AdminFixture f({"--admin-token", "admin-secret-1"});
  const std::string url = f.node.admin_url();
  Run missing = Ctl(f.dir, {"show", "nothing", "--node", url, "--token", "admin-secret-1"});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("no-document") != std::string::npos);
  Run json_missing =
      Ctl(f.dir, {"show", "nothing", "--node", url, "--token", "admin-secret-1", "--json"});
  CHECK(json_missing.status == 1);
  CHECK(json::parse(json_missing.out).at("reason") == "no-document");
  CHECK(Ctl(f.dir, {"docs", "--node", url}).status == 1);  // No token: unauthorized.
  CHECK(Ctl(f.dir, {"docs", "--node", url, "--token", "wrong-secret"}).err.find("forbidden") !=
        std::string::npos);
  CHECK(Ctl(f.dir, {"docs", "--node", url, "--token", "admin-secret-1"}).status == 0);

  CHECK(Ctl(f.dir, {"show"}).status == 2);
  CHECK(Ctl(f.dir, {"docs", "--frobnicate"}).status == 2);
  CHECK(Ctl(f.dir, {"history", "x", "--limit", "ten"}).status == 2);
  CHECK(Ctl(f.dir, {"docs", "--node", url, "--data", "x"}).status == 2);
  Run usage = Ctl(f.dir, {"export", "x"});
  CHECK(usage.err.starts_with("aweftctl: bad-usage: "));

  CHECK(Ctl(f.dir, {"docs", "--node", "http://127.0.0.1:1"}).status == 3);
  CHECK(Ctl(f.dir, {"docs", "--data", f.dir.path() + "/none"}).status == 3);
  // A node without its scheme is a usage error, not an unreachable one.
  Run schemeless =
      Ctl(f.dir, {"docs", "--node", "127.0.0.1:" + std::to_string(f.node.admin_port())});
  CHECK(schemeless.status == 2);
  CHECK(schemeless.err.find("http://HOST:PORT") != std::string::npos);
  CHECK(Ctl(f.dir, {"links", "--data", f.dir.path()}).status == 2);
}

TEST_CASE("aweftctl deletes, lists links, shows the node and says whether it is ready",
          "[admin][aweftctl]") {
  AdminFixture f;
  Document doc(Kind::kObject);
  Client& client = f.Share("notes", doc);
  const std::string url = f.node.admin_url();

  Run links = Ctl(f.dir, {"links", "--node", url, "--json"});
  REQUIRE(links.status == 0);
  CHECK(json::parse(links.out).at("links").as_array().size() == 1);
  Run text = Ctl(f.dir, {"links", "--node", url});
  CHECK(text.out.find("client") != std::string::npos);
  CHECK(text.out.find("1 topic(s)") != std::string::npos);
  Run node = Ctl(f.dir, {"node", "--node", url});
  REQUIRE(node.status == 0);
  CHECK(node.out.find("serving ws://127.0.0.1:") != std::string::npos);
  Run health = Ctl(f.dir, {"health", "--node", url});
  CHECK(health.status == 0);
  CHECK(health.out == "ready\n");
  Run alone = Ctl(f.dir, {"cluster", "--node", url});  // No peers: it orders all it loads.
  CHECK(alone.status == 0);
  CHECK(alone.out.find(": 1 loaded document(s) homed here, 0 behind\n") != std::string::npos);

  // Shared now: the node refuses to delete it; once the link is gone, it does.
  Run in_use = Ctl(f.dir, {"delete", "notes", "--node", url});
  CHECK(in_use.status == 1);
  CHECK(in_use.err.find("in-use") != std::string::npos);
  client.channel->Close();
  RunUntil(
      f.io, [] { return false; }, std::chrono::milliseconds(200));
  Run deleted = Ctl(f.dir, {"delete", "notes", "--node", url});
  CHECK(deleted.status == 0);
  CHECK(deleted.out == "deleted notes\n");
  CHECK(Ctl(f.dir, {"show", "notes", "--node", url}).status == 1);

  // A peer never reached: down, and the node serves (ready) all the same.
  AdminFixture peered({"--node-id", "solo", "--peer", "ws://127.0.0.1:1/"});
  Run cluster = Ctl(f.dir, {"cluster", "--node", peered.node.admin_url()});
  CHECK(cluster.status == 0);
  CHECK(cluster.out.find("solo") == 0);
  CHECK(cluster.out.find("\tws://127.0.0.1:1/\tdown for ") != std::string::npos);
  CHECK(Ctl(f.dir, {"health", "--node", peered.node.admin_url()}).status == 0);

  AdminFixture unready({"--upstream", "ws://127.0.0.1:1/"});  // Never up: not ready.
  Run not_ready = Ctl(f.dir, {"health", "--node", unready.node.admin_url()});
  CHECK(not_ready.status == 1);
  CHECK(not_ready.err.find("not-ready") != std::string::npos);
  CHECK(not_ready.err.find("ws://127.0.0.1:1/") != std::string::npos);
}

TEST_CASE("aweftctl deletes offline from a data directory, never from one a node holds",
          "[admin][aweftctl]") {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  {
    AdminFixture f;  // A document to put there: exported from a node.
    Document doc(Kind::kObject);
    f.Share("gone", doc);
    REQUIRE(doc.Set(doc.root(), "k", 1.0));
    REQUIRE(f.WaitForHead("gone", 1));
    REQUIRE(Ctl(dir, {"export", "gone", dir.path() + "/gone.json", "--node", f.node.admin_url()})
                .status == 0);
  }
  NodeProcess node(data);
  node.Start();
  node.Kill();  // An empty store, and no node on it.
  REQUIRE(Ctl(dir, {"import", dir.path() + "/gone.json", "--data", data}).status == 0);

  node.Start();  // Held by a running node: refused, not opened twice.
  Run held = Ctl(dir, {"delete", "gone", "--data", data});
  CHECK(held.status == 3);
  CHECK(held.err.find("a running node holds it") != std::string::npos);
  node.Kill();
  Run listed = Ctl(dir, {"docs", "--data", data, "--json"});
  CHECK(json::parse(listed.out).at("documents").as_array().size() == 1);

  Run deleted = Ctl(dir, {"delete", "gone", "--data", data});
  INFO(deleted.err);
  CHECK(deleted.status == 0);
  CHECK(deleted.out == "deleted gone\n");
  listed = Ctl(dir, {"docs", "--data", data, "--json"});
  CHECK(json::parse(listed.out).at("documents").as_array().empty());
  Run again = Ctl(dir, {"delete", "gone", "--data", data});
  CHECK(again.status == 1);
  CHECK(again.err.find("no-document") != std::string::npos);
  // A node started on it finds it gone.
  node.Start();
  CHECK(HttpRequest(node.admin_url(), "GET", "/v1/documents/gone", "", "", std::chrono::seconds(5))
            .status == 404);
}

}  // namespace
}  // namespace aweft::admin::testing

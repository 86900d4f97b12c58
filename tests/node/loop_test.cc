// A loop in-process: the home thread's loop over a real hub and store, its
// connections over in-process text channels (frames and requests), with no
// socket, no port and no process. What a connection may open, create and
// write, and the node's answers to has, hello and durable.

#include "node/loop.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "node/catch_up.h"
#include "node/messages.h"
#include "node/quorum.h"
#include "node/shard.h"
#include "sync/asio_scheduler.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/requests.h"
#include "tests/node/hub_fixture.h"

namespace aweft::node {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using codec::Reason;

// The home thread's loop 0 over a hub fixture's hub, store and upstreams.
class LoopFixture : public testing::HubFixture {
 public:
  explicit LoopFixture(Config config = {}) : HubFixture(std::move(config)) {
    quorum_ = std::make_unique<Quorum>(config_, io_, *upstreams_);
    catch_up_ = std::make_unique<CatchUp>(config_, io_, *hub_, *upstreams_, *store_);
    context_ = std::make_unique<LoopContext>(
        LoopContext{config_, access_, meters_, io_.get_executor(), *hub_, *upstreams_, *quorum_,
                    *catch_up_, *store_, stopping_, ids_});
    loop_ = std::make_unique<Loop>(0, *context_, io_.get_executor(), *durable_, nullptr);
    loop_->set_documents(*hub_);
  }
  ~LoopFixture() {
    clients_.clear();
    shard_.reset();
    loop_.reset();
    hub_->Stop();
  }

  // A client end: a link and requests over one in-process text channel,
  // whose other end the loop accepted.
  struct Client {
    std::unique_ptr<sync::TextChannel> channel;
    std::unique_ptr<sync::Link> link;
    std::optional<sync::Requests> requests;
  };

  Client& Connect(std::string bearer = "", std::string origin = "") {
    auto [mine, theirs] = sync::InProcessPair(scheduler_);
    theirs->set_handshake(
        {"/", bearer.empty() ? "" : "Bearer " + bearer, "10.0.0.1:4000", std::move(origin)});
    loop_->Accept(std::move(theirs));
    auto client = std::make_unique<Client>();
    client->channel = std::move(mine);
    client->link = std::make_unique<sync::Link>(*client->channel, scheduler_);
    auto requests = sync::Requests::Open(*client->channel, io_.get_executor());
    REQUIRE(requests);
    client->requests.emplace(std::move(*requests));
    clients_.push_back(std::move(client));
    return *clients_.back();
  }

  // A client of a shard (one thread beside this one, made on first use):
  // its end lives on this thread, the shard's on the shard's.
  Client& ConnectToShard() {
    if (!shard_) shard_ = std::make_unique<Shard>(0, *context_, scheduler_, *durable_);
    auto [mine, theirs] = sync::CrossThreadPair(scheduler_, shard_->scheduler());
    theirs->set_handshake({"/", "", "10.0.0.2:4000", ""});
    asio::post(shard_->io(), [&loop = shard_->loop(), end = std::move(theirs)]() mutable {
      loop.Accept(std::move(end));
    });
    auto client = std::make_unique<Client>();
    client->channel = std::move(mine);
    client->link = std::make_unique<sync::Link>(*client->channel, scheduler_);
    clients_.push_back(std::move(client));
    return *clients_.back();
  }

  // Runs the loop until `done`, or fails after 5 s.
  template <class Pred>
  bool RunUntil(Pred done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      io_.run_for(std::chrono::milliseconds(1));
    }
    return true;
  }

  sync::AskResult Ask(Client& client, const std::string& name, json::value args) {
    std::optional<sync::AskResult> result;
    client.requests->Ask(name, std::move(args), [&](sync::AskResult r) { result.emplace(r); });
    REQUIRE(RunUntil([&] { return result.has_value(); }));
    return *result;
  }

  // Shares `document` (a new one) under `name` and waits for the loop's
  // answer.
  sync::Shared* ShareLive(Client& client, const std::string& name, sync::Document& document) {
    auto shared = client.link->Share(name, &document);
    REQUIRE(shared);
    REQUIRE(RunUntil([&] { return (*shared)->live(); }));
    return *shared;
  }

  Loop& loop() { return *loop_; }

 private:
  sync::AsioScheduler scheduler_{io_.get_executor()};
  Access access_{config_.tokens, config_.allowed_origins,
                 config_.limits.max_connections_per_address};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> ids_{1};
  std::unique_ptr<Quorum> quorum_;
  std::unique_ptr<CatchUp> catch_up_;
  std::unique_ptr<LoopContext> context_;
  std::unique_ptr<Loop> loop_;
  std::unique_ptr<Shard> shard_;
  std::vector<std::unique_ptr<Client>> clients_;
};

TEST_CASE("a loop creates what a client shares, stores its commits, and serves it to another",
          "[node][loop]") {
  LoopFixture f;
  auto& writer = f.Connect();
  sync::Document mine(codec::Kind::kObject);
  f.ShareLive(writer, "board", mine);
  REQUIRE(mine.Set(mine.root(), "title", std::string("plan")));
  // durable: answered once all the connection sent before it is stored.
  auto durable = f.Ask(writer, "durable", nullptr);
  REQUIRE(durable);
  CHECK(ParseDurableAnswer(*durable));
  auto stored = f.store().Info("board");
  REQUIRE(stored);
  CHECK(stored->root == mine.root().id());
  CHECK(stored->head == 1);  // The share's state was stored, then the commit.

  // Another connection opens it without a document of its own, and gets ours.
  auto& reader = f.Connect();
  auto joined = reader.link->Share("board");
  REQUIRE(joined);
  REQUIRE(f.RunUntil([&] { return (*joined)->ready(); }));
  CHECK((*joined)->document()->root().id() == mine.root().id());
  CHECK(f.hub().Find("board")->shares == 2);
  REQUIRE(mine.Set(mine.root(), "title", std::string("done")));
  CHECK(f.RunUntil([&] {
    const codec::Value* title = (*joined)->document()->root().Get("title");
    return title && *title == codec::Value(std::string("done"));
  }));
  CHECK(f.loop().connections().size() == 2);
}

TEST_CASE("a loop declines what a connection may not open, and keeps the link",
          "[node][loop][refusal]") {
  Config config;
  config.tokens = {Token{"reader", {"*"}, {}}, Token{"writer", {}, {"team/*"}}};
  config.limits.max_topics_per_link = 2;
  LoopFixture f(config);
  std::string reason;
  sync::ShareHandlers handlers;
  handlers.fault = [&](const std::string& r, const std::string&) { reason = r; };
  auto share = [&](LoopFixture::Client& c, const std::string& name, sync::Document* document) {
    reason.clear();
    auto shared = c.link->Share(name, document, handlers);
    REQUIRE(shared);
    // Answered: live (and, for an end that shared none, ready), or ended.
    REQUIRE(f.RunUntil(
        [&] { return (*shared)->ended() || ((*shared)->live() && (*shared)->ready()); }));
    return (*shared)->ended() ? reason : std::string("shared");
  };

  SECTION("no token, or a wrong one: the connection is refused at once") {
    auto& stranger = f.Connect("guess");
    CHECK(f.RunUntil([&] { return stranger.channel->ended(); }));
    CHECK(f.RunUntil([&] { return f.loop().connections().empty(); }));
  }
  SECTION("a reader cannot create; a writer creates only under its patterns") {
    auto& reader = f.Connect("reader");
    sync::Document a(codec::Kind::kObject), b(codec::Kind::kObject), c(codec::Kind::kObject);
    CHECK(share(reader, "team/x", &a) == "no-document");
    auto& writer = f.Connect("writer");
    CHECK(share(writer, "other", &b) == "forbidden");
    CHECK(share(writer, "team/x", &c) == "shared");
    CHECK_FALSE(writer.channel->ended());
  }
  SECTION("a name that is not one, and topics past the limit") {
    auto& writer = f.Connect("writer");
    sync::Document a(codec::Kind::kObject), b(codec::Kind::kObject), c(codec::Kind::kObject);
    CHECK(share(writer, "team/\x01x", &a) == "invalid-name");
    CHECK(share(writer, "team/a", &b) == "shared");
    auto& reader = f.Connect("reader");
    CHECK(share(reader, "team/a", nullptr) == "shared");
    CHECK(share(writer, "team/c", &c) == "shared");
    sync::Document d(codec::Kind::kObject);
    CHECK(share(writer, "team/d", &d) == "limit");
  }
  SECTION("a reader's commit is refused forbidden; the document keeps the writer's state") {
    auto& writer = f.Connect("writer");
    sync::Document w(codec::Kind::kObject);
    REQUIRE(share(writer, "team/a", &w) == "shared");
    auto& reader = f.Connect("reader");
    std::vector<std::string> refused;
    sync::ShareHandlers told;
    told.refused = [&](const sync::Refused& r) { refused.push_back(r.reasons.at(0).code); };
    auto joined = reader.link->Share("team/a", nullptr, told);
    REQUIRE(joined);
    REQUIRE(f.RunUntil([&] { return (*joined)->ready(); }));
    sync::Document& copy = *(*joined)->document();
    REQUIRE(copy.Set(copy.root(), "k", 1.0));
    REQUIRE(f.RunUntil([&] { return !refused.empty(); }));
    CHECK(refused == std::vector<std::string>{"forbidden"});
    CHECK(f.hub().Find("team/a")->document->root().Get("k") == nullptr);
  }
}

TEST_CASE("a page in a browser opens links only as allowed_origins says", "[node][loop][refusal]") {
  auto opens = [](Config config, const std::string& bearer, const std::string& origin) {
    LoopFixture f(std::move(config));
    auto& page = f.Connect(bearer, origin);
    std::string reason;
    sync::ShareHandlers handlers;
    handlers.fault = [&](const std::string& r, const std::string&) { reason = r; };
    sync::Document document(codec::Kind::kObject);
    auto shared = page.link->Share("board", &document, handlers);
    REQUIRE(shared);
    REQUIRE(f.RunUntil([&] { return (*shared)->ended() || (*shared)->live(); }));
    return (*shared)->ended() ? reason : std::string("shared");
  };
  const std::string evil = "http://evil.example";
  Config open;
  CHECK(opens(open, "", "") == "shared");  // No Origin: not a browser.
  CHECK(opens(open, "", evil) == "forbidden");
  Config listed;
  listed.allowed_origins = {"https://app.example"};
  CHECK(opens(listed, "", "https://App.Example") == "shared");
  CHECK(opens(listed, "", evil) == "forbidden");
  Config any;
  any.allowed_origins = {"*"};
  CHECK(opens(any, "", evil) == "shared");
  // With tokens, any page may try: the token decides.
  Config tokens;
  tokens.tokens = {Token{"writer-token", {}, {"*"}}};
  CHECK(opens(tokens, "writer-token", evil) == "shared");
  CHECK(opens(tokens, "", evil) == "forbidden");
  tokens.allowed_origins = {"https://app.example"};
  CHECK(opens(tokens, "writer-token", evil) == "forbidden");
}

TEST_CASE("a loop answers has, hello and durable, and names what is malformed",
          "[node][loop][refusal]") {
  LoopFixture f;
  auto& c = f.Connect();
  sync::Document mine(codec::Kind::kMap);
  f.ShareLive(c, "held", mine);
  REQUIRE(f.Ask(c, "durable", nullptr));

  auto held = f.Ask(c, "has", ToJson(HasAsk{"held"}));
  REQUIRE(held);
  auto answer = ParseHasAnswer(*held);
  REQUIRE(answer);
  REQUIRE(answer->has_value());
  CHECK((*answer)->root == mine.root().id());
  CHECK((*answer)->kind == codec::Kind::kMap);
  auto missing = f.Ask(c, "has", ToJson(HasAsk{"nowhere"}));
  REQUIRE(missing);
  REQUIRE(ParseHasAnswer(*missing));
  CHECK_FALSE(ParseHasAnswer(*missing)->has_value());

  // What a peer sends that has not the shape is answered with a reason;
  // the link and the loop carry on.
  for (json::value args : {json::value(nullptr), json::value(json::object{{"name", 7}}),
                           json::value(json::array{1, 2})}) {
    auto bad = f.Ask(c, "has", args);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().reason == codec::Spelled(Reason::kInvalidName));
  }
  for (json::value args : {json::value(json::object{{"level", "everywhere"}}),
                           json::value(json::object{{"level", 2}})}) {
    auto bad = f.Ask(c, "durable", args);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().reason == codec::Spelled(Reason::kInvalidValue));
  }
  auto unkept = f.Ask(c, "keep", json::object{{"name", "x"}});
  REQUIRE_FALSE(unkept);
  CHECK(unkept.error().reason == codec::Spelled(Reason::kInvalidName));
  // Without peers, `replicas` is `local`: this node is all there is.
  for (Level level : {Level::kLocal, Level::kReplicas}) {
    auto durable = f.Ask(c, "durable", DurableAskJson(level));
    REQUIRE(durable);
    CHECK(ParseDurableAnswer(*durable));
  }
  auto unknown = f.Ask(c, "teleport", nullptr);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().reason == codec::Spelled(Reason::kMissing));

  // hello: this node's path; a node already on it is a cycle.
  auto hello = f.Ask(c, "hello", ToJson(HelloAsk{"node-below"}));
  REQUIRE(hello);
  auto path = ParseHelloAnswer(*hello);
  REQUIRE(path);
  CHECK(path->path == std::vector<std::string>{"node-home"});
  auto cycle = f.Ask(c, "hello", ToJson(HelloAsk{"node-home"}));
  REQUIRE_FALSE(cycle);
  CHECK(cycle.error().reason == codec::Spelled(Reason::kCycle));
  auto odd = f.Ask(c, "hello", json::value(json::array{"x"}));
  CHECK(odd);  // A hello without an id is a node that does not say who it is.

  CHECK_FALSE(c.channel->ended());
  CHECK(f.loop().connections().size() == 1);
}

TEST_CASE("home orders a shard's replica: after same-slot races its readers hold home's state",
          "[node][loop][shard]") {
  LoopFixture f;
  auto& home_writer = f.Connect();
  sync::Document mine(codec::Kind::kObject);
  f.ShareLive(home_writer, "race", mine);
  auto& shard_writer = f.ConnectToShard();
  auto& shard_reader = f.ConnectToShard();
  auto theirs = shard_writer.link->Share("race");
  auto watched = shard_reader.link->Share("race");
  REQUIRE(theirs);
  REQUIRE(watched);
  REQUIRE(f.RunUntil([&] { return (*theirs)->ready() && (*watched)->ready(); }));
  sync::Document& other = *(*theirs)->document();
  sync::Document& reader = *(*watched)->document();
  const sync::Document& home = *f.hub().Find("race")->document;
  auto text = [](const sync::Document& d, const std::string& key) {
    const codec::Value* v = d.root().Get(key);
    const std::string* written = v ? std::get_if<std::string>(v) : nullptr;
    return written ? *written : std::string("absent");
  };
  // Each round, both writers replace the same two keys in the same turn:
  // one commit enters at home, the other at the shard's replica.
  for (int round = 0; round < 50; ++round) {
    for (const char* key : {"k", "l"}) {
      REQUIRE(mine.Set(mine.root(), key, "home-" + std::to_string(round)));
      REQUIRE(other.Set(other.root(), key, "shard-" + std::to_string(round)));
    }
    f.io().run_for(std::chrono::milliseconds(round % 3));
  }
  const bool agreed = f.RunUntil(
      [&] { return text(reader, "k") == text(home, "k") && text(reader, "l") == text(home, "l"); });
  INFO("home k=" << text(home, "k") << " l=" << text(home, "l")
                 << "; shard reader k=" << text(reader, "k") << " l=" << text(reader, "l"));
  CHECK(agreed);
  CHECK(text(home, "k") != "absent");
}

TEST_CASE("a loop drops a connection whose bytes are not frames, and only that one",
          "[node][loop][refusal]") {
  LoopFixture f;
  auto& good = f.Connect();
  auto& bad = f.Connect();
  REQUIRE(f.loop().connections().size() == 2);
  // Text that is not a request ends that connection's requests and channel.
  bad.channel->SendText("not json");
  CHECK(f.RunUntil([&] { return f.loop().connections().size() == 1; }));
  CHECK(f.RunUntil([&] { return bad.channel->ended(); }));
  CHECK_FALSE(good.channel->ended());
  CHECK(f.Ask(good, "durable", nullptr));
}

TEST_CASE("the messages a peer sends never throw when read, whatever their shape",
          "[node][loop][refusal]") {
  const json::value shapes[] = {nullptr,
                                true,
                                7,
                                "text",
                                json::array{1, "x"},
                                json::object{},
                                json::object{{"held", "yes"}},
                                json::object{{"held", true}, {"root", 5}, {"kind", "object"}},
                                json::object{{"held", true}, {"root", "zz"}, {"kind", "nope"}},
                                json::object{{"path", "node-a"}},
                                json::object{{"path", json::array{1}}},
                                json::object{{"durable", false}}};
  for (const json::value& shape : shapes) {
    INFO(json::serialize(shape));
    CHECK_NOTHROW(ParseHasAsk(shape));
    CHECK_NOTHROW(ParseHelloAsk(shape));
    CHECK_FALSE(ParseHasAnswer(shape));
    CHECK_FALSE(ParseHelloAnswer(shape));
    CHECK_FALSE(ParseDurableAnswer(shape));
  }
}

}  // namespace
}  // namespace aweft::node

// The dashboard in a real browser: headless Chromium (Debian's chromium,
// installed by scripts/deps.sh) loads the page from a running node, and the
// document a client created must be in the DOM its script rendered. A
// screenshot is kept as a test artifact. The login is driven as a user
// would, over Chromium's DevTools protocol.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

#include "admin/http_client.h"
#include "sync/asio_scheduler.h"
#include "sync/websocket.h"
#include "tests/admin/admin_fixture.h"

namespace aweft::admin::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// Debian's chromium: the test fails without it, never skips.
std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  FAIL("chromium is not installed: run scripts/deps.sh (Debian's chromium package)");
  return "";
}

// Runs chromium headless on `url` with `mode` (--dump-dom or --screenshot=),
// output to `out`; returns its exit status. Bounded by `timeout`.
int Browse(const std::string& chromium, const TempDir& dir, const std::string& mode,
           const std::string& url, const std::string& out) {
  const std::string command =
      "timeout 90 " + chromium +
      " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --no-first-run --hide-scrollbars --window-size=1280,900"
      " --user-data-dir=" +
      dir.path() + "/chromium --virtual-time-budget=5000 " + mode + " '" + url + "' >" + out +
      " 2>" + dir.path() + "/chromium.log";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Headless Chromium with a page open on `url`, driven over the DevTools
// protocol (a WebSocket to the page): script runs in the page as a user's
// typing and clicking would, and what it rendered is read back.
class DevTools {
 public:
  DevTools(const std::string& chromium, const TempDir& dir, const std::string& url) {
    const std::string log = dir.path() + "/devtools.log";
    pid_ = fork();
    if (pid_ == 0) {
      freopen(log.c_str(), "w", stderr);
      freopen("/dev/null", "w", stdout);
      const std::string profile = "--user-data-dir=" + dir.path() + "/devtools-profile";
      execl(chromium.c_str(), chromium.c_str(), "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--remote-debugging-port=0",
            profile.c_str(), url.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/..."
    const std::regex listening(R"(DevTools listening on ws://127\.0\.0\.1:(\d+)/)");
    std::smatch found;
    std::string said;
    for (int i = 0; i < 300 && !std::regex_search(said, found, listening); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      said = ReadAll(log);
    }
    INFO(said);
    REQUIRE(!found.empty());
    const std::string base = "http://127.0.0.1:" + found[1].str();
    // The page's own socket, from the list of targets.
    std::string socket;
    for (int i = 0; i < 100 && socket.empty(); ++i) {
      const json::value targets = json::parse(HttpRequest(base, "GET", "/json/list").body);
      for (const auto& target : targets.as_array()) {
        if (target.at("type") == "page" && target.at("url").as_string().starts_with(url)) {
          socket = std::string(target.at("webSocketDebuggerUrl").as_string());
        }
      }
      if (socket.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE(!socket.empty());
    channel_ = sync::WebSocketChannel::Dial(io_.get_executor(), scheduler_, socket);
    channel_->OnText([this](const std::string& text) { answers_.push_back(text); });
  }
  ~DevTools() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  // The value of `expression` in the page (a promise awaited); null when
  // it threw or the page was between documents.
  json::value Eval(const std::string& expression) {
    const uint64_t id = ++last_id_;
    const json::object ask{
        {"id", id},
        {"method", "Runtime.evaluate"},
        {"params", {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}}}};
    channel_->SendText(json::serialize(ask));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until && !channel_->ended()) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
      while (!answers_.empty()) {
        const json::value answer = json::parse(answers_.front());
        answers_.pop_front();
        if (!answer.is_object() || !answer.as_object().contains("id") || answer.at("id") != id) {
          continue;  // An event, or an answer to an earlier question.
        }
        const json::value* result = answer.find_pointer("/result/result/value", ignored_);
        return result ? *result : json::value(nullptr);
      }
    }
    FAIL("no answer from Chromium's DevTools to " << expression);
    return nullptr;
  }
  // Whether `expression` comes to be true within `limit`.
  bool WaitFor(const std::string& expression,
               std::chrono::milliseconds limit = std::chrono::seconds(15)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (Eval(expression) == json::value(true)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  asio::io_context io_;
  sync::AsioScheduler scheduler_{io_.get_executor()};
  std::unique_ptr<sync::WebSocketChannel> channel_;
  std::deque<std::string> answers_;  // Text messages not yet read.
  uint64_t last_id_ = 0;
  boost::system::error_code ignored_;
};

TEST_CASE("with admin_token set, the dashboard asks for the token and keeps it in the tab",
          "[admin][dashboard]") {
  const std::string chromium = Chromium();
  AdminFixture f({"--admin-token", "dashboard-secret"});
  f.admin_token = "dashboard-secret";
  sync::Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "title", std::string("locked")));
  f.Share("locked-doc", doc, 1);
  const std::string page = f.node.admin_url() + "/";
  DevTools browser(chromium, f.dir, page);
  const std::string listed =
      "[...document.querySelectorAll('td.doc-name')].some(e => e.textContent === 'locked-doc')";

  // The page is served without the token, shows no data, and asks for it.
  REQUIRE(browser.WaitFor(
      "document.getElementById('problem').textContent.includes('enter the admin token')"));
  CHECK(browser.Eval("document.querySelectorAll('td.doc-name').length") == json::value(0));
  CHECK(browser.Eval("document.activeElement.id") == json::value("token"));
  // A wrong token is refused, and said.
  browser.Eval(
      "document.getElementById('token').value = 'not-the-secret';"
      "document.querySelector('#login button').click(); true");
  CHECK(browser.WaitFor("document.getElementById('problem').textContent.includes('forbidden')"));
  // Typed and submitted, as a user does: the documents appear.
  browser.Eval(
      "document.getElementById('token').value = 'dashboard-secret';"
      "document.querySelector('#login button').click(); true");
  CHECK(browser.WaitFor(listed));
  CHECK(browser.Eval("document.getElementById('problem').textContent") == json::value(""));
  // Kept for the tab, never in the URL.
  CHECK(browser.Eval("sessionStorage.getItem('aweft-admin-token')") ==
        json::value("dashboard-secret"));
  CHECK(browser.Eval("location.href") == json::value(page));
  // Reloaded, the tab still has it.
  browser.Eval("location.reload(); true");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(browser.WaitFor(listed));
  // An old link with ?token=: taken into the tab's session, dropped from the URL.
  browser.Eval("sessionStorage.clear(); location.href = '/?token=dashboard-secret&doc=locked-doc'");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(browser.WaitFor(listed));
  CHECK(browser.Eval("location.search") == json::value("?doc=locked-doc"));
}

TEST_CASE("the dashboard pages past 200, searches names, shows history, and acts",
          "[admin][dashboard]") {
  const std::string chromium = Chromium();
  AdminFixture f;
  sync::Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "title", std::string("first")));
  f.Share("history-doc", doc, 1);
  for (const char* title : {"second", "third", "fourth"}) {
    REQUIRE(doc.Set(doc.root(), "title", std::string(title)));
  }
  REQUIRE(f.WaitForHead("history-doc", 4));
  // 205 more, imported: 206 in all, more than a page.
  const std::string exported = f.Get("/v1/documents/history-doc/export").body;
  for (int i = 0; i < 205; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "bulk%%2F%03d", i);
    REQUIRE(f.Call("PUT", std::string("/v1/documents/") + name, "", exported).status == 201);
  }
  DevTools browser(chromium, f.dir, f.node.admin_url() + "/?doc=history-doc");
  const std::string rows = "document.querySelectorAll('td.doc-name').length";
  auto click = [&](const std::string& id) {
    browser.Eval("document.getElementById('" + id + "').click(); true");
  };
  auto search = [&](const std::string& text) {
    browser.Eval("(() => { const s = document.getElementById('search'); s.value = '" + text +
                 "'; s.dispatchEvent(new Event('input')); return true; })()");
  };
  auto said = [&](const std::string& text) {
    return browser.WaitFor("document.getElementById('acted').textContent.includes('" + text + "')");
  };

  // Pages of 200, and the rest.
  CHECK(browser.WaitFor(rows + " === 200"));
  click("page-next");
  CHECK(browser.WaitFor(rows + " === 6"));
  CHECK(
      browser.Eval("document.getElementById('documents-more').textContent.startsWith('page 2')") ==
      json::value(true));
  click("page-back");
  CHECK(browser.WaitFor(rows + " === 200"));
  // Anywhere in the name.
  search("007");
  CHECK(browser.WaitFor(rows + " === 1 && document.querySelector('td.doc-name').textContent === "
                               "'bulk/007'"));
  search("");
  CHECK(browser.WaitFor(rows + " === 200"));

  // History, newest first; a click shows the state after that commit.
  CHECK(browser.WaitFor(
      "[...document.querySelectorAll('.history-seq')].map(e => e.textContent).join() === "
      "'4,3,2,1'"));
  browser.Eval("document.querySelectorAll('.history-seq')[2].click(); true");  // seq 2
  CHECK(
      browser.WaitFor("document.getElementById('at').value === '2' && "
                      "document.getElementById('inspector').textContent.includes('second')"));
  CHECK(browser.Eval("document.getElementById('inspector').textContent.includes('fourth')") ==
        json::value(false));

  // Actions on the inspected document.
  click("snapshot");
  CHECK(said("snapshot of history-doc at seq 4"));
  CHECK(f.GetJson("/v1/documents?prefix=history").at("documents").at(0).at("snapshot") == 4);
  click("export");
  CHECK(said("exported history-doc at seq 4"));
  // Shared by the fixture's client: the node refuses. (confirm() is answered
  // here: a real dialog would block the page.)
  browser.Eval("window.confirm = () => true; document.getElementById('delete').click(); true");
  CHECK(said("in-use"));
  search("bulk/003");
  CHECK(browser.WaitFor(rows + " === 1"));
  browser.Eval("document.querySelector('td.doc-name').click(); true");
  CHECK(browser.WaitFor("document.getElementById('inspected').textContent === 'bulk/003'"));
  browser.Eval("window.confirm = () => false; document.getElementById('delete').click(); true");
  CHECK(said("not deleted"));
  browser.Eval("window.confirm = () => true; document.getElementById('delete').click(); true");
  CHECK(said("deleted bulk/003"));
  CHECK(f.Get("/v1/documents/bulk%2F003").status == 404);

  // The storage panel and the chart's axis, from the metrics.
  CHECK(
      browser.WaitFor("document.querySelector('.storage-documents').textContent.startsWith("
                      "'205 / ')"));
  CHECK(browser.WaitFor("document.querySelector('.storage-snapshots').textContent === '1'"));
  CHECK(browser.Eval("document.getElementById('spark-max').textContent.endsWith('/s')") ==
        json::value(true));
}

TEST_CASE("the dashboard shows a document a client created, in headless Chromium",
          "[admin][dashboard]") {
  const std::string chromium = Chromium();
  AdminFixture f({"--admin-token", "dashboard-secret"});
  f.admin_token = "dashboard-secret";
  sync::Document doc(codec::Kind::kObject);
  REQUIRE(doc.Set(doc.root(), "title", std::string("shown")));
  f.Share("dashboard-doc", doc, 1);
  sync::Observable& items = doc.Create(codec::Kind::kArray);
  REQUIRE(doc.Set(doc.root(), "items", sync::Attach(items)));
  REQUIRE(doc.Push(items, std::string("first")));
  REQUIRE(doc.Push(items, 2.0));
  REQUIRE(f.WaitForHead("dashboard-doc", 4));
  // Chromium runs while the node (another process) answers; the client's
  // link stays open, so the page lists one link too.
  const std::string url = f.node.admin_url() + "/?token=dashboard-secret";
  const std::string dom = f.dir.path() + "/dom.html";
  REQUIRE(Browse(chromium, f.dir, "--dump-dom", url, dom) == 0);
  std::ifstream in(dom);
  const std::string rendered(std::istreambuf_iterator<char>(in), {});
  INFO(rendered);
  CHECK(rendered.find("<td class=\"doc-name\">dashboard-doc</td>") != std::string::npos);
  CHECK(rendered.find(">ready<") != std::string::npos);
  // The inspector opened the first document and rendered its tree.
  CHECK(rendered.find("<span class=\"key\">title</span>: <span>\"shown\"</span>") !=
        std::string::npos);

  const std::filesystem::path artifacts = AWEFT_ARTIFACTS;
  std::filesystem::create_directories(artifacts);
  const std::string png = (artifacts / "dashboard.png").string();
  std::filesystem::remove(png);
  REQUIRE(Browse(chromium, f.dir, "--screenshot=" + png, url, "/dev/null") == 0);
  CHECK(std::filesystem::file_size(png) > 1000);
}

}  // namespace
}  // namespace aweft::admin::testing

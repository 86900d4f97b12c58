// The dashboard in a real browser: headless Chromium (Debian's chromium,
// installed by scripts/deps.sh) loads the page from a running node, and the
// document a client created must be in the DOM its script rendered. A
// screenshot is kept as a test artifact.

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/admin/admin_fixture.h"

namespace aweft::admin::testing {
namespace {

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
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

TEST_CASE("the dashboard shows a document a client created, in headless Chromium",
          "[admin][dashboard]") {
  const std::string chromium = Chromium();
  if (chromium.empty()) {
    FAIL("chromium is not installed: run scripts/deps.sh (Debian's chromium package)");
  }
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

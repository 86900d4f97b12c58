// The shape node/ keeps (issue: a hub and identical loops): checks anyone
// can run, over the source tree.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Every .cc and .h file under `module` of the source tree.
std::vector<fs::path> Sources(const std::string& module) {
  std::vector<fs::path> out;
  const fs::path root = fs::path(AWEFT_SOURCE_DIR) / module;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension();
    if (ext == ".cc" || ext == ".h") out.push_back(entry.path());
  }
  return out;
}

TEST_CASE("node/ has no file over 450 lines, no thread_local and no friend", "[node][layout]") {
  std::vector<std::string> found;
  for (const fs::path& path : Sources("node")) {
    std::ifstream in(path);
    std::string line;
    int lines = 0;
    for (; std::getline(in, line); ++lines) {
      for (const char* word : {"thread_local", "friend "}) {
        if (line.find(word) != std::string::npos) found.push_back(path.string() + ": " + word);
      }
    }
    if (lines > 450) found.push_back(path.string() + ": " + std::to_string(lines) + " lines");
  }
  INFO([&] {
    std::string all;
    for (const auto& f : found) all += f + "\n";
    return all;
  }());
  CHECK(found.empty());
}

TEST_CASE("the socket-thread mode is gone from sync/ and node/", "[node][layout]") {
  for (const char* module : {"sync", "node"}) {
    for (const fs::path& path : Sources(module)) {
      std::ifstream in(path);
      const std::string text{std::istreambuf_iterator<char>(in), {}};
      INFO(path.string());
      CHECK(text.find("socket_executor") == std::string::npos);
      CHECK(text.find("SocketCourier") == std::string::npos);
    }
  }
}

}  // namespace

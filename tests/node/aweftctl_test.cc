// Runs the real aweftctl binary over every conformance fixture.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "codec/commit.h"
#include "codec/id.h"
#include "codec/json.h"
#include "node/json/commit_json.h"
#include "tests/codec/doubles.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

const fs::path kFixtures = fs::path(AWEFT_CONFORMANCE_DIR) / "fixtures";
const fs::path kFrames = fs::path(AWEFT_CONFORMANCE_DIR) / "frames";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

json::value Load(const fs::path& path) { return json::parse(ReadFile(path)); }

// The *.json files directly in `dir` whose names start with `prefix` (or,
// with `prefix` empty, that do not start with "invalid"), in name order.
std::vector<fs::path> Files(const fs::path& dir, std::string_view prefix) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    bool invalid = name.rfind("invalid", 0) == 0;
    if (prefix.empty() ? !invalid : name.rfind(prefix, 0) == 0) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// A directory for this process's scratch files, removed at exit.
class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / ("aweftctl_test." + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

fs::path ScratchDir() {
  static const Scratch scratch;
  return scratch.dir();
}

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Run {
  int status;
  std::string out;
  std::string err;
};

// Runs `aweftctl <args>` with `input` on standard input.
Run Aweftctl(const std::string& args, std::string_view input = "") {
  const fs::path in = ScratchDir() / "stdin";
  const fs::path err = ScratchDir() / "stderr";
  WriteFile(in, input);
  std::string command = Quote(AWEFTCTL) + " " + args + " < " + Quote(in) + " 2> " + Quote(err);
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Run run{-1, "", ""};
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  int status = ::pclose(pipe);
  REQUIRE(WIFEXITED(status));
  run.status = WEXITSTATUS(status);
  run.err = ReadFile(err);
  return run;
}

// Equal as JSON values: object key order ignored, every number compared as
// a double (the fixtures spell 2^55 as 36028797018963970).
bool SameJson(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) {
    return a.to_number<double>() == b.to_number<double>();
  }
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const json::array& x = a.get_array();
    const json::array& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!SameJson(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    const json::object& x = a.get_object();
    const json::object& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& entry : x) {
      const json::value* other = y.if_contains(entry.key());
      if (other == nullptr || !SameJson(entry.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

// A fixture commit without its "bytes": the shape decode prints.
json::object CommitShape(const json::object& fixture_commit) {
  json::object shape = fixture_commit;
  shape.erase("bytes");
  return shape;
}

struct Case {
  std::string name;
  std::string hex;
  json::value json;
};

std::vector<Case> ValidCommits() {
  std::vector<Case> cases;
  for (const fs::path& file : Files(kFixtures, "")) {
    json::value fixture = Load(file);
    const json::array& commits = fixture.at("commits").as_array();
    for (size_t i = 0; i < commits.size(); ++i) {
      const json::object& commit = commits[i].as_object();
      cases.push_back({file.filename().string() + "#" + std::to_string(i),
                       std::string(commit.at("bytes").as_string()), CommitShape(commit)});
    }
  }
  return cases;
}

std::vector<Case> ValidFrames() {
  std::vector<Case> cases;
  for (const fs::path& file : Files(kFrames, "")) {
    json::value fixture = Load(file);
    cases.push_back({file.filename().string(), std::string(fixture.at("bytes").as_string()),
                     fixture.at("frame")});
  }
  return cases;
}

std::string HexOf(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string BytesOf(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

void CheckRefusal(const Run& run, std::string_view reason) {
  CHECK(run.status == 1);
  json::value out = json::parse(run.out);
  CHECK(out.at("reason").as_string() == reason);
  CHECK(!out.at("message").as_string().empty());
  CHECK(!out.at("fix").as_string().empty());
  CHECK(out.as_object().size() == 3);
}

TEST_CASE("the fixture set is complete", "[node][aweftctl]") {
  CHECK(Files(kFixtures, "").size() == 16);
  CHECK(Files(kFixtures / "invalid", "").size() == 38);
  CHECK(Files(kFrames, "").size() == 10);
  CHECK(Files(kFrames, "invalid").size() == 20);
}

TEST_CASE("decode prints each valid commit fixture's deltas and tag", "[node][aweftctl]") {
  for (const Case& c : ValidCommits()) {
    CAPTURE(c.name);
    Run run = Aweftctl("decode", c.hex + "\n");
    REQUIRE(run.status == 0);
    CHECK(run.err.empty());
    CHECK(run.out.back() == '\n');
    CHECK(SameJson(json::parse(run.out), c.json));
  }
}

TEST_CASE("encode writes each valid commit fixture's bytes", "[node][aweftctl]") {
  for (const Case& c : ValidCommits()) {
    CAPTURE(c.name);
    Run run = Aweftctl("encode", json::serialize(c.json));
    REQUIRE(run.status == 0);
    CHECK(run.out == c.hex + "\n");
  }
}

TEST_CASE("encode sorts deltas given in any order", "[node][aweftctl]") {
  for (Case c : ValidCommits()) {
    CAPTURE(c.name);
    json::array& deltas = c.json.as_object().at("deltas").as_array();
    std::reverse(deltas.begin(), deltas.end());
    Run run = Aweftctl("encode", json::serialize(c.json));
    REQUIRE(run.status == 0);
    CHECK(run.out == c.hex + "\n");
  }
}

TEST_CASE("decode --frame prints each valid frame fixture's frame", "[node][aweftctl]") {
  for (const Case& c : ValidFrames()) {
    CAPTURE(c.name);
    Run run = Aweftctl("decode --frame", c.hex);
    REQUIRE(run.status == 0);
    CHECK(SameJson(json::parse(run.out), c.json));
  }
}

TEST_CASE("encode --frame writes each valid frame fixture's bytes", "[node][aweftctl]") {
  for (const Case& c : ValidFrames()) {
    CAPTURE(c.name);
    Run run = Aweftctl("encode --frame", json::serialize(c.json));
    REQUIRE(run.status == 0);
    CHECK(run.out == c.hex + "\n");
  }
}

TEST_CASE("decode refuses each decode-stage invalid commit with its reason",
          "[node][aweftctl][refusal]") {
  for (const fs::path& file : Files(kFixtures / "invalid", "")) {
    CAPTURE(file.filename().string());
    json::value fixture = Load(file);
    Run run = Aweftctl("decode", fixture.at("bytes").as_string());
    if (fixture.at("stage").as_string() == "apply") {
      CHECK(run.status == 0);  // Well formed; only applying it fails.
    } else {
      CheckRefusal(run, fixture.at("reason").as_string());
    }
  }
}

TEST_CASE("decode --frame refuses each invalid frame with its reason",
          "[node][aweftctl][refusal]") {
  for (const fs::path& file : Files(kFrames, "invalid")) {
    CAPTURE(file.filename().string());
    json::value fixture = Load(file);
    Run run = Aweftctl("decode --frame", fixture.at("bytes").as_string());
    CheckRefusal(run, fixture.at("reason").as_string());
  }
}

TEST_CASE("aweftctl --lines answers each input line with one output line", "[node][aweftctl]") {
  std::vector<Case> cases = ValidCommits();
  std::string hex_lines;
  std::string json_lines;
  for (const Case& c : cases) {
    hex_lines += c.hex + "\n";
    json_lines += json::serialize(c.json) + "\n";
  }

  SECTION("decode, all accepted") {
    Run run = Aweftctl("decode --lines", hex_lines);
    CHECK(run.status == 0);
    std::istringstream out(run.out);
    std::string line;
    for (const Case& c : cases) {
      CAPTURE(c.name);
      REQUIRE(std::getline(out, line));
      CHECK(SameJson(json::parse(line), c.json));
    }
    CHECK_FALSE(std::getline(out, line));
  }
  SECTION("encode, all accepted") {
    Run run = Aweftctl("encode --lines", json_lines);
    CHECK(run.status == 0);
    CHECK(run.out == hex_lines);
  }
  SECTION("a refused line is a refusal line, and the exit status is 1") {
    Run run = Aweftctl("decode --lines", cases[0].hex + "\nzz\n" + cases[1].hex);
    CHECK(run.status == 1);
    std::istringstream out(run.out);
    std::string first, second, third, extra;
    REQUIRE(std::getline(out, first));
    REQUIRE(std::getline(out, second));
    REQUIRE(std::getline(out, third));
    CHECK_FALSE(std::getline(out, extra));
    CHECK(SameJson(json::parse(first), cases[0].json));
    CHECK(json::parse(second).at("reason").as_string() == "invalid-hex");
    CHECK(SameJson(json::parse(third), cases[1].json));
  }
  SECTION("frames") {
    std::string frames;
    for (const Case& c : ValidFrames()) frames += c.hex + "\r\n";
    Run run = Aweftctl("decode --frame --lines", frames);
    CHECK(run.status == 0);
    CHECK(std::count(run.out.begin(), run.out.end(), '\n') == 10);
  }
}

TEST_CASE("aweftctl --binary reads and writes raw bytes", "[node][aweftctl]") {
  const Case c = ValidFrames()[2];  // 003-state
  const std::string bytes = BytesOf(c.hex);
  Run decoded = Aweftctl("decode --frame --binary", bytes);
  REQUIRE(decoded.status == 0);
  CHECK(SameJson(json::parse(decoded.out), c.json));
  Run encoded = Aweftctl("encode --frame --binary", json::serialize(c.json));
  REQUIRE(encoded.status == 0);
  CHECK(HexOf(encoded.out) == c.hex);
}

TEST_CASE("a FILE argument is read instead of standard input", "[node][aweftctl]") {
  const Case c = ValidCommits()[0];
  const fs::path file = ScratchDir() / "commit.hex";
  WriteFile(file, c.hex);
  Run run = Aweftctl(Quote(file.string()), "");
  CHECK(run.status == 2);  // No command.
  run = Aweftctl("decode " + Quote(file.string()), "not read");
  REQUIRE(run.status == 0);
  CHECK(SameJson(json::parse(run.out), c.json));
}

TEST_CASE("decode ignores whitespace in hex and refuses what is not hex",
          "[node][aweftctl][refusal]") {
  const Case c = ValidCommits()[0];
  std::string spaced;
  for (size_t i = 0; i < c.hex.size(); i += 2) spaced += c.hex.substr(i, 2) + " ";
  Run run = Aweftctl("decode", spaced);
  REQUIRE(run.status == 0);
  CHECK(SameJson(json::parse(run.out), c.json));

  CheckRefusal(Aweftctl("decode", "8"), "invalid-hex");
  CheckRefusal(Aweftctl("decode", "xyz1"), "invalid-hex");
  CheckRefusal(Aweftctl("decode", ""), "truncated");
}

TEST_CASE("encode refuses JSON that is not a commit or frame", "[node][aweftctl][refusal]") {
  CheckRefusal(Aweftctl("encode", "{"), "invalid-commit");
  CheckRefusal(Aweftctl("encode", "[]"), "invalid-commit");
  CheckRefusal(Aweftctl("encode", R"({"deltas":[],"tags":"00"})"), "invalid-commit");
  CheckRefusal(Aweftctl("encode", R"({"deltas":[]})"), "empty-commit");
  CheckRefusal(Aweftctl("encode --frame", R"({"kind":"join","topic":1})"), "bad-frame");
  CheckRefusal(Aweftctl("encode --frame", R"({"kind":"leave","topic":0})"), "bad-frame");
  CheckRefusal(Aweftctl("encode --frame", R"({"kind":"leave","topic":-1})"), "bad-frame");
  const std::string delta =
      R"({"deltas":[{"type":"add","id":"AAAAAAAAAAAAAAAB","ref":{"kind":"object","key":"k"},)";
  CheckRefusal(Aweftctl("encode", delta + R"("value":"\udc00"}]})"), "lone-surrogate");
  CheckRefusal(Aweftctl("encode", delta + R"("value":"\ud800\u0041"}]})"), "lone-surrogate");
  CheckRefusal(Aweftctl("encode", delta + R"("value":[1]}]})"), "invalid-value");
  CheckRefusal(Aweftctl("encode", delta + R"("value":{"bytes":"0"}}]})"), "invalid-hex");
  CheckRefusal(Aweftctl("encode", delta + R"("vaule":1}]})"), "invalid-delta");
  CheckRefusal(Aweftctl("encode", delta.substr(0, delta.size() - 1) + R"(}]})"), "missing-value");
}

TEST_CASE("bad usage exits 2 with a reason and a fix on stderr", "[node][aweftctl]") {
  const char* bad[] = {
      "",
      "frobnicate",
      "decode --frames",
      "decode --binary --lines",
      "decode a b",
      "decode /nonexistent/aweftctl-input",
  };
  for (const char* args : bad) {
    CAPTURE(args);
    Run run = Aweftctl(args, "81");
    CHECK(run.status == 2);
    CHECK(run.out.empty());
    CHECK(run.err.rfind("aweftctl: ", 0) == 0);
    CHECK(run.err.find(". ") != std::string::npos);
  }
}

TEST_CASE("a mistyped command or flag is refused with the nearest one", "[node][aweftctl]") {
  const std::pair<const char*, const char*> cases[] = {
      {"decod", "unknown command 'decod' (did you mean decode?)"},
      {"shw x", "unknown command 'shw' (did you mean show?)"},
      {"decode --frme", "'--frme' is not a flag (did you mean --frame?)"},
      {"docs --prefx a", "'--prefx' is not a flag (did you mean --prefix?)"},
      {"history x --limit", "--limit"},             // No value.
      {"zzzzzz", "unknown command 'zzzzzz'. Run"},  // Nothing near.
  };
  for (const auto& [args, says] : cases) {
    CAPTURE(args);
    Run run = Aweftctl(args, "");
    CHECK(run.status == 2);
    CHECK(run.err.find(says) != std::string::npos);
  }
}

TEST_CASE("aweftctl --help and --version exit 0", "[node][aweftctl]") {
  Run help = Aweftctl("--help");
  CHECK(help.status == 0);
  CHECK(help.out.find("aweftctl decode") != std::string::npos);
  CHECK(Aweftctl("decode --help").status == 0);
  Run version = Aweftctl("--version");
  CHECK(version.status == 0);
  CHECK(version.out.rfind("aweftctl ", 0) == 0);
}

}  // namespace

namespace {

using aweft::testing::ModelBits;

TEST_CASE(
    "a million random doubles (a fiftieth under sanitizers) keep their bits through aweftctl "
    "encode "
    "and decode",
    "[node][aweftctl][json]") {
  const uint64_t seed = aweft::testing::SweepSeed();
  INFO("AWEFT_SEED=" << seed);
  constexpr size_t kPerCommit = 1000;
  const std::vector<double> doubles =
      aweft::testing::RandomDoubles(aweft::testing::kSweepDoubles, seed);
  const aweft::codec::Id root = *aweft::codec::IdFromText("AAAAAAAAAAAAAAAB");
  // Each line a commit of kPerCommit adds, its numbers written as
  // JavaScript writes them (shortest round-trip text); beside it the bytes
  // the codec makes of the same doubles.
  std::string json_lines, hex_lines;
  for (size_t first = 0; first < doubles.size(); first += kPerCommit) {
    aweft::codec::Commit commit;
    for (size_t i = first; i < first + kPerCommit; ++i) {
      commit.deltas.push_back({aweft::codec::DeltaType::kAdd,
                               root,
                               {aweft::codec::Kind::kObject, "k" + std::to_string(i - first)},
                               aweft::codec::Value(doubles[i])});
    }
    json_lines +=
        aweft::codec::WriteJson(aweft::node::CommitToJson(commit, aweft::node::IdForm::kText)) +
        "\n";
    hex_lines += HexOf(*aweft::codec::EncodeCommit(commit)) + "\n";
  }

  Run encoded = Aweftctl("encode --lines", json_lines);
  REQUIRE(encoded.status == 0);
  // Line by line: a diff of 30 MB helps no one.
  std::istringstream got(encoded.out), want(hex_lines);
  size_t lines = 0, differ = 0;
  for (std::string a, b; std::getline(want, b); ++lines) {
    if (!std::getline(got, a) || a != b) ++differ;
  }
  CHECK(lines == doubles.size() / kPerCommit);
  CHECK(differ == 0);

  Run decoded = Aweftctl("decode --lines", hex_lines);
  REQUIRE(decoded.status == 0);
  std::istringstream out(decoded.out);
  std::string line;
  size_t at = 0, wrong = 0;
  while (std::getline(out, line)) {
    boost::system::error_code ec;
    const json::value commit = aweft::codec::ParseJson(line, ec);
    REQUIRE_FALSE(ec);
    for (const json::value& delta : commit.at("deltas").as_array()) {
      if (at == doubles.size()) break;  // More than written: the count below fails.
      const double read = delta.at("value").to_number<double>();
      if (ModelBits(read) != ModelBits(doubles[at]) && ++wrong <= 5) {
        UNSCOPED_INFO("double " << at << " came back as " << read);
      }
      ++at;
    }
  }
  CHECK(at == doubles.size());
  CHECK(wrong == 0);
}

}  // namespace

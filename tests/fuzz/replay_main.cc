// Runs a fuzz target without libFuzzer: LLVMFuzzerTestOneInput on every file
// in the directories named on the command line, in name order. The target
// aborts on a failed check, so a kept input that breaks again fails the test.
// A directory that is missing or empty fails too: a test that runs nothing
// should not pass.
//   <target>_replay DIR...

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The regular files in `dir`, sorted; empty if there are none or no `dir`.
std::vector<fs::path> Inputs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file()) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR...\n", argv[0]);
    return 2;
  }
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<fs::path> inputs = Inputs(argv[i]);
    if (inputs.empty()) {
      std::fprintf(stderr, "%s: %s is missing or holds no inputs\n", argv[0], argv[i]);
      return 1;
    }
    for (const fs::path& path : inputs) {
      const std::string bytes = Read(path);
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++ran;
    }
  }
  std::printf("ran %zu inputs\n", ran);
  return 0;
}

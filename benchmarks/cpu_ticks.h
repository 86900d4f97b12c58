#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

// CPU time from /proc, for the benchmarks that drive node processes.
namespace aweft::bench {

// utime + stime, in clock ticks, of a /proc stat file (a process's or a
// thread's); with `name`, the thread's name too.
inline uint64_t CpuTicks(const std::string& stat, std::string* name = nullptr) {
  std::ifstream in(stat);
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return 0;
  if (name) *name = line.substr(open + 1, close - open - 1);
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return utime + stime;
}

inline uint64_t CpuTicks(int pid) { return CpuTicks("/proc/" + std::to_string(pid) + "/stat"); }

}  // namespace aweft::bench

#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>

namespace aweft::node::ctl {

// A progress bar on standard error when it is a terminal; nothing in pipes
// and with --json.
class Progress {
 public:
  Progress(std::string label, bool quiet)
      : label_(std::move(label)), on_(!quiet && isatty(STDERR_FILENO)) {}
  ~Progress() { Done(); }
  // Clears the bar: call before printing the result.
  void Done() {
    if (drawn_) std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }
  // `total` 0: unknown.
  void Update(uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (!on_ || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    std::cerr << "\r\033[K" << label_ << " ";
    if (total == 0) {
      std::cerr << done << std::flush;
      return;
    }
    const uint64_t filled = std::min<uint64_t>(30, done * 30 / total);
    std::cerr << "[" << std::string(filled, '#') << std::string(30 - filled, ' ') << "] " << done
              << "/" << total << std::flush;
  }

 private:
  std::string label_;
  bool on_, drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace aweft::node::ctl

#pragma once

#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace aweft::testing {

// A small tmpfs of `size` ("8m") at `path`, unmounted at the end: a disk
// that fills. Mounting needs root (CAP_SYS_ADMIN); where it fails, the
// test is told why and `mounted` is false.
struct Tmpfs {
  Tmpfs(std::string path, const std::string& size) : path(std::move(path)) {
    std::filesystem::create_directories(this->path);
    mounted = mount("tmpfs", this->path.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (!mounted) WARN("skipped: cannot mount a tmpfs here (" << std::strerror(errno) << ")");
  }
  ~Tmpfs() {
    if (mounted) umount2(path.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;

  std::string path;
  bool mounted = false;
};

}  // namespace aweft::testing

#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>

#include "sync/link.h"

namespace aweft::node {

// Sends the node's log to standard output at `level` (log_level) in
// `format` (log_format: "text", logfmt lines, or "json", an object per
// line), each line with an ISO 8601 time and its zone (docs/node.md "Logs").
void SetUpLogging(const std::string& level, const std::string& format);

// A link's frame hook (sync::Link::OnFrameSeen) that writes a trace line
// per frame sent or received over the connection to `peer`; empty (no
// hook, no cost) unless the log level is trace.
std::function<void(const sync::Link::FrameSeen&)> FrameTracer(std::string peer);

// A value in a log line (docs/node.md "Logs"): written in double quotes, with
// `"`, `\` and control characters escaped, so that no name, reason or message
// a peer sends can end the value, or the line, and pass for keys of its own.
struct Quoted {
  std::string_view text;
};

}  // namespace aweft::node

template <>
struct fmt::formatter<aweft::node::Quoted> : fmt::formatter<std::string_view> {
  auto format(const aweft::node::Quoted& quoted, fmt::format_context& ctx) const {
    auto out = ctx.out();
    *out++ = '"';
    for (const char ch : quoted.text) {
      const auto byte = static_cast<unsigned char>(ch);
      if (ch == '"' || ch == '\\') {
        *out++ = '\\';
        *out++ = ch;
      } else if (ch == '\n') {
        out = fmt::format_to(out, "\\n");
      } else if (byte < 0x20 || byte == 0x7f) {
        out = fmt::format_to(out, "\\x{:02x}", byte);
      } else {
        *out++ = ch;
      }
    }
    *out++ = '"';
    return out;
  }
};

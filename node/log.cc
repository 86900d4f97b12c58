#include "node/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <memory>
#include <string>

namespace aweft::node {
namespace {

namespace json = boost::json;

// The names log_level takes; critical, which the node does not use, is
// written as error.
std::string_view LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    default:
      return "error";
  }
}

// %L in the text pattern: the level as log_level spells it.
class LevelFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string_view name = LevelName(msg.level);
    dest.append(name.data(), name.data() + name.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelFlag>();
  }
};

// The time of `msg` as ISO 8601 with milliseconds and the zone's offset.
std::string Timestamp(const spdlog::details::log_msg& msg) {
  const auto since = msg.time.time_since_epoch();
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since).count();
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[40], zone[8];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  std::strftime(zone, sizeof zone, "%z", &local);  // +hhmm
  return fmt::format("{}.{:03}{}:{}", text, millis, std::string_view(zone, 3),
                     std::string_view(zone + 3, 2));
}

// One value of a line: a Quoted one unescaped, true and false as booleans,
// a whole number as a number, anything else as text.
json::value Value(std::string_view line, size_t& at) {
  if (at < line.size() && line[at] == '"') {
    std::string text;
    for (++at; at < line.size() && line[at] != '"'; ++at) {
      if (line[at] != '\\' || at + 1 >= line.size()) {
        text.push_back(line[at]);
        continue;
      }
      const char escaped = line[++at];
      if (escaped == 'n') {
        text.push_back('\n');
      } else if (escaped == 'x' && at + 2 < line.size()) {
        unsigned byte = 0;
        std::from_chars(line.data() + at + 1, line.data() + at + 3, byte, 16);
        text.push_back(static_cast<char>(byte));
        at += 2;
      } else {
        text.push_back(escaped);
      }
    }
    ++at;  // The closing quote.
    return json::value(text);
  }
  const size_t end = std::min(line.find(' ', at), line.size());
  const std::string_view word = line.substr(at, end - at);
  at = end;
  if (word == "true" || word == "false") return json::value(word == "true");
  int64_t number = 0;
  auto [stop, ec] = std::from_chars(word.data(), word.data() + word.size(), number);
  if (ec == std::errc() && stop == word.data() + word.size() && !word.empty()) {
    return json::value(number);
  }
  return json::value(word);
}

// log_format = "json": one object per line, {"time", "level", then each
// key=value of the line}; values from outside are Quoted in the line, so
// they come out whole, as one string each.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view line(msg.payload.data(), msg.payload.size());
    json::object object{{"time", Timestamp(msg)}, {"level", LevelName(msg.level)}};
    size_t at = 0;
    while (at < line.size()) {
      if (line[at] == ' ') {
        ++at;
        continue;
      }
      const size_t eq = line.find('=', at);
      const size_t space = line.find(' ', at);
      if (eq == std::string_view::npos || (space != std::string_view::npos && space < eq)) {
        // Not key=value: kept whole, as the message.
        object["message"] = std::string(line.substr(at));
        break;
      }
      const std::string key(line.substr(at, eq - at));
      at = eq + 1;
      object[key] = Value(line, at);
    }
    const std::string text = json::serialize(object);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::function<void(const sync::Link::FrameSeen&)> FrameTracer(std::string peer) {
  if (!spdlog::should_log(spdlog::level::trace)) return {};
  return [peer = std::move(peer)](const sync::Link::FrameSeen& frame) {
    spdlog::trace("event=frame peer={} direction={} kind={} topic={} commits={}", peer,
                  frame.out ? "out" : "in", frame.kind, frame.topic, frame.commits);
  };
}

void SetUpLogging(const std::string& level, const std::string& format) {
  if (format == "json") {
    spdlog::set_formatter(std::make_unique<JsonFormatter>());
  } else {
    auto text = std::make_unique<spdlog::pattern_formatter>();
    text->add_flag<LevelFlag>('L').set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %L %v");
    spdlog::set_formatter(std::move(text));
  }
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace aweft::node

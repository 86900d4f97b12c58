#include "node/config.h"

#include <toml++/toml.h>

#include <cstdlib>
#include <iterator>
#include <map>
#include <sstream>

#include "node/cli.h"
#include "node/config_flags.h"

namespace aweft::node {
namespace {

[[noreturn]] void Bad(const std::string& key, const std::string& what) {
  throw ConfigError("config: '" + key + "' " + what + ". See docs/node.md for the keys.");
}

// Every key outside [[tokens]] and [[upstreams]], for "did you mean".
std::vector<std::string> Keys() {
  std::istringstream all(
      "data listen admin admin_token admin_hosts allowed_origins log_level log_format node_id "
      "threads storage.durability storage.snapshot_every_commits storage.snapshot_every_bytes "
      "storage.history_commits limits.max_commit_bytes limits.max_document_bytes "
      "limits.max_deltas_per_commit limits.max_topics_per_link limits.max_documents "
      "limits.max_requests_in_flight limits.max_text_bytes limits.max_http_body_bytes "
      "limits.max_connections_per_address limits.max_connections limits.send_queue_bytes "
      "limits.idle_timeout_seconds limits.memory_bytes limits.message_timeout_seconds "
      "tls.cert_file tls.key_file tls.ca_file documents.idle_evict_seconds documents.create "
      "documents.max_frame_bytes cluster.replicas cluster.failover_ms tokens upstreams peers");
  return {std::istream_iterator<std::string>(all), {}};
}

// A key no setting has, named with the nearest of `known`.
[[noreturn]] void Unknown(const std::string& key, const std::vector<std::string>& known = Keys()) {
  Bad(key, "is not a setting" + cli::DidYouMean(key, known));
}

std::string Text(const toml::node& node, const std::string& key) {
  if (auto value = node.value<std::string>()) return *value;
  Bad(key, "must be text");
}

uint64_t Count(const toml::node& node, const std::string& key) {
  auto value = node.value<int64_t>();
  if (!value || *value < 0) Bad(key, "must be a whole number of at least 0");
  return static_cast<uint64_t>(*value);
}

std::vector<std::string> Texts(const toml::node& node, const std::string& key) {
  const toml::array* array = node.as_array();
  if (!array) Bad(key, "must be a list of text");
  std::vector<std::string> out;
  for (const toml::node& item : *array) out.push_back(Text(item, key));
  return out;
}

template <typename F>
void EachKey(const toml::table& table, const std::string& prefix, F&& on) {
  for (const auto& [key, value] : table) {
    on(prefix + std::string(key.str()), value);
  }
}

void ApplyStorage(const toml::table& table, storage::Options& out) {
  EachKey(table, "storage.", [&](const std::string& key, const toml::node& value) {
    if (key == "storage.durability") {
      const std::string mode = Text(value, key);
      if (mode == "sync")
        out.durability = storage::Durability::kSync;
      else if (mode == "wal")
        out.durability = storage::Durability::kWal;
      else if (mode == "none")
        out.durability = storage::Durability::kNone;
      else
        Bad(key, "must be one of sync, wal, none (not \"" + mode + "\")");
    } else if (key == "storage.snapshot_every_commits") {
      out.snapshot_every_commits = Count(value, key);
    } else if (key == "storage.snapshot_every_bytes") {
      out.snapshot_every_bytes = Count(value, key);
    } else if (key == "storage.history_commits") {
      out.history_commits = Count(value, key);
    } else {
      Unknown(key);
    }
  });
}

void ApplyLimits(const toml::table& table, Limits& out) {
  EachKey(table, "limits.", [&](const std::string& key, const toml::node& value) {
    struct Known {
      const char* key;
      uint64_t* field;
      uint64_t least;
    };
    uint64_t idle = static_cast<uint64_t>(out.idle_timeout.count());
    uint64_t message = static_cast<uint64_t>(out.message_timeout.count());
    const Known known[] = {
        {"limits.max_commit_bytes", &out.max_commit_bytes, 64},
        {"limits.max_document_bytes", &out.max_document_bytes, 1024},
        {"limits.max_deltas_per_commit", &out.max_deltas_per_commit, 1},
        {"limits.max_topics_per_link", &out.max_topics_per_link, 1},
        {"limits.max_documents", &out.max_documents, 1},
        {"limits.max_requests_in_flight", &out.max_requests_in_flight, 1},
        {"limits.max_text_bytes", &out.max_text_bytes, 256},
        {"limits.max_http_body_bytes", &out.max_http_body_bytes, 1024},
        {"limits.max_connections_per_address", &out.max_connections_per_address, 1},
        {"limits.max_connections", &out.max_connections, 0},
        {"limits.send_queue_bytes", &out.send_queue_bytes, 64 << 10},
        {"limits.idle_timeout_seconds", &idle, 0},
        {"limits.memory_bytes", &out.memory_bytes, 0},
        {"limits.message_timeout_seconds", &message, 0},
    };
    for (const Known& k : known) {
      if (key != k.key) continue;
      *k.field = Count(value, key);
      if (*k.field < k.least) Bad(key, "must be at least " + std::to_string(k.least));
      out.idle_timeout = std::chrono::seconds(idle);
      out.message_timeout = std::chrono::seconds(message);
      return;
    }
    Unknown(key);
  });
}

void Apply(const toml::table& root, Config& config) {
  EachKey(root, "", [&](const std::string& key, const toml::node& value) {
    if (key == "data") {
      config.data = Text(value, key);
    } else if (key == "listen") {
      config.listen = Text(value, key);
      HostPort(config.listen, key);
    } else if (key == "admin") {
      config.admin = Text(value, key);
      if (config.admin != "off") HostPort(config.admin, key);
    } else if (key == "admin_token") {
      config.admin_token = Text(value, key);
      if (config.admin_token.size() < 8) Bad(key, "must be at least 8 characters");
    } else if (key == "admin_hosts") {
      config.admin_hosts = Texts(value, key);
    } else if (key == "allowed_origins") {
      config.allowed_origins = Texts(value, key);
    } else if (key == "log_level") {
      config.log_level = Text(value, key);
      static const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
      bool known = false;
      for (const char* level : kLevels) known = known || config.log_level == level;
      if (!known) Bad(key, "must be one of trace, debug, info, warn, error");
    } else if (key == "log_format") {
      config.log_format = Text(value, key);
      if (config.log_format != "text" && config.log_format != "json") {
        Bad(key, "must be text or json (not \"" + config.log_format + "\")");
      }
    } else if (key == "node_id") {
      config.node_id = Text(value, key);
    } else if (key == "threads") {
      auto threads = value.value<int64_t>();
      if (!threads || *threads < 1 || *threads > 256)
        Bad(key, "must be a whole number from 1 to 256");
      config.threads = static_cast<uint64_t>(*threads);
    } else if (key == "storage") {
      if (!value.is_table()) Bad(key, "must be a table");
      ApplyStorage(*value.as_table(), config.storage);
    } else if (key == "limits") {
      if (!value.is_table()) Bad(key, "must be a table");
      ApplyLimits(*value.as_table(), config.limits);
    } else if (key == "tls") {
      if (!value.is_table()) Bad(key, "must be a table");
      EachKey(*value.as_table(), "tls.", [&](const std::string& k, const toml::node& v) {
        if (k == "tls.cert_file")
          config.tls.cert_file = Text(v, k);
        else if (k == "tls.key_file")
          config.tls.key_file = Text(v, k);
        else if (k == "tls.ca_file")
          config.tls.ca_file = Text(v, k);
        else
          Unknown(k);
      });
    } else if (key == "documents") {
      if (!value.is_table()) Bad(key, "must be a table");
      EachKey(*value.as_table(), "documents.", [&](const std::string& k, const toml::node& v) {
        if (k == "documents.idle_evict_seconds") {
          config.idle_evict = std::chrono::seconds(Count(v, k));
        } else if (k == "documents.create") {
          config.create = Texts(v, k);
        } else if (k == "documents.max_frame_bytes") {
          config.max_frame_bytes = Count(v, k);
          if (config.max_frame_bytes < 1024) Bad(k, "must be at least 1024");
        } else {
          Unknown(k);
        }
      });
    } else if (key == "cluster") {
      if (!value.is_table()) Bad(key, "must be a table");
      EachKey(*value.as_table(), "cluster.", [&](const std::string& k, const toml::node& v) {
        if (k == "cluster.replicas") {
          config.cluster.replicas = Count(v, k);
          if (config.cluster.replicas < 1) Bad(k, "must be at least 1");
        } else if (k == "cluster.failover_ms") {
          config.cluster.failover = std::chrono::milliseconds(Count(v, k));
          if (config.cluster.failover.count() < 100) Bad(k, "must be at least 100");
        } else {
          Unknown(k);
        }
      });
    } else if (key == "tokens" || key == "upstreams" || key == "peers") {
      const toml::array* array = value.as_array();
      if (!array) Bad(key, "must be a list of tables ([[" + key + "]])");
      for (size_t i = 0; i < array->size(); ++i) {
        const toml::table* entry = (*array)[i].as_table();
        const std::string at = key + "[" + std::to_string(i) + "]";
        if (!entry) Bad(at, "must be a table");
        if (key == "tokens") {
          Token token;
          EachKey(*entry, at + ".", [&](const std::string& k, const toml::node& v) {
            if (k == at + ".token")
              token.secret = Text(v, k);
            else if (k == at + ".read")
              token.read = Texts(v, k);
            else if (k == at + ".write")
              token.write = Texts(v, k);
            else
              Unknown(k, {at + ".token", at + ".read", at + ".write"});
          });
          if (token.secret.size() < 8) Bad(at + ".token", "must be at least 8 characters");
          config.tokens.push_back(std::move(token));
        } else {
          Upstream upstream;
          EachKey(*entry, at + ".", [&](const std::string& k, const toml::node& v) {
            if (k == at + ".url")
              upstream.url = Text(v, k);
            else if (k == at + ".names" && key == "upstreams")
              upstream.names = Texts(v, k);
            else if (k == at + ".token")
              upstream.token = Text(v, k);
            else if (k == at + ".digest_seconds")
              upstream.digest_every = std::chrono::seconds(Count(v, k));
            else
              Unknown(k, {at + ".url", at + ".names", at + ".token", at + ".digest_seconds"});
          });
          if (upstream.url.rfind("ws://", 0) != 0 && upstream.url.rfind("wss://", 0) != 0)
            Bad(at + ".url", "must be a ws:// or wss:// URL");
          (key == "peers" ? config.peers : config.upstreams).push_back(std::move(upstream));
        }
      }
    } else {
      Unknown(key);
    }
  });
}

toml::table Parse(const std::string& text, const std::string& where) {
  try {
    return toml::parse(text, where);
  } catch (const toml::parse_error& e) {
    std::ostringstream out;
    out << "config: " << where << " line " << e.source().begin.line << ": " << e.description()
        << ". Fix the TOML syntax there.";
    throw ConfigError(out.str());
  }
}

}  // namespace

std::pair<std::string, uint16_t> HostPort(const std::string& value, const std::string& key) {
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0) Bad(key, "must be host:port");
  const std::string port = value.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535) {
    Bad(key, "must be host:port with a port from 0 to 65535");
  }
  return {value.substr(0, colon), static_cast<uint16_t>(std::stoul(port))};
}

bool NameMatches(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p, ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Config LoadConfig(int argc, const char* const* argv, bool& help, bool& version) {
  Config config;
  help = version = false;
  const cli::Parsed parsed = ReadFlags(argc, argv);
  // The file first, wherever --config stands; then every flag in order.
  for (const auto& [flag, file] : parsed.flags) {
    if (flag != "config") continue;
    toml::table table;
    try {
      table = toml::parse_file(file);
    } catch (const toml::parse_error& e) {
      std::ostringstream out;
      out << "config: " << file << " line " << e.source().begin.line << ": " << e.description()
          << ". Fix the file (docs/node.md).";
      throw ConfigError(out.str());
    }
    Apply(table, config);
  }
  // Secrets from the environment, after the file and before the flags: so
  // they need be in neither, and do not show in ps (docs/node.md "Settings").
  struct FromEnvironment {
    const char* variable;
    const char* key;
    bool toml;  // The value is TOML (a list of tables), not text.
  };
  for (const auto& [variable, key, toml] :
       {FromEnvironment{"AWEFT_ADMIN_TOKEN", "admin_token", false},
        FromEnvironment{"AWEFT_TOKENS", "tokens", true},
        FromEnvironment{"AWEFT_TLS_KEY_FILE", "tls.key_file", false}}) {
    const char* value = std::getenv(variable);
    if (!value || !*value) continue;
    Apply(
        Parse(std::string(key) + " = " + (toml ? std::string(value) : TomlQuote(value)), variable),
        config);
  }
  for (const auto& [flag, value] : parsed.flags) {
    if (flag == "help") {
      help = true;
    } else if (flag == "version") {
      version = true;
    } else if (flag != "config") {
      Apply(Parse(Snippet(flag, value), "--" + flag), config);
    }
  }
  // 4096: a state frame's bytes around its document's (docs/reliability.md).
  if (config.limits.max_document_bytes + 4096 > config.max_frame_bytes) {
    Bad("limits.max_document_bytes",
        "is " + std::to_string(config.limits.max_document_bytes) +
            ": a document's state travels in one message, so it must be at most "
            "documents.max_frame_bytes (" +
            std::to_string(config.max_frame_bytes) + ") less 4096");
  }
  if (config.limits.memory_bytes > 0 && config.limits.memory_bytes < 2 * config.max_frame_bytes) {
    Bad("limits.memory_bytes", "is " + std::to_string(config.limits.memory_bytes) +
                                   ": it must hold two messages of documents.max_frame_bytes (" +
                                   std::to_string(config.max_frame_bytes) + ") at least, or be 0");
  }
  if (!config.peers.empty() && !config.upstreams.empty()) {
    throw ConfigError(
        "config: [[peers]] and [[upstreams]] go apart: a cluster's peers place documents among "
        "themselves, and a node outside it names one of them as its upstream. Give one of the "
        "two (docs/node.md \"Clusters\")");
  }
  if (config.tls.cert_file.empty() != config.tls.key_file.empty()) {
    throw ConfigError(
        "config: tls.cert_file and tls.key_file go together: give both (to serve TLS) or "
        "neither");
  }
  return config;
}

}  // namespace aweft::node

#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/store.h"

namespace aweft::node {

// A bad setting: main() prints it and exits 2. The message names the key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a token may do with the documents whose names match its patterns.
struct Token {
  std::string secret;
  std::vector<std::string> read;   // Name patterns it may read.
  std::vector<std::string> write;  // Name patterns it may read and write.
};

// A node this one dials and shares its documents with.
struct Upstream {
  std::string url;                      // ws://host:port/ or wss://
  std::vector<std::string> names{"*"};  // Which documents go there.
  std::string token;                    // Sent as a bearer token.
  // How often the node compares each shared document's digest with the
  // upstream's (docs/node.md "Anti-entropy"); 0: never. Default: 10 s.
  std::chrono::seconds digest_every{10};  // digest_seconds
};

// How a cluster of peers keeps its documents (docs/node.md "Clusters").
struct Cluster {
  uint64_t replicas = 3;  // cluster.replicas: nodes that keep each document
  // cluster.failover_ms: how long a peer's link may be down before the
  // documents it is home for move to the next peer in their ranking.
  std::chrono::milliseconds failover{3000};
};

// What one peer may ask of the node (docs/reliability.md). Each is refused
// with the reason `limit`, naming the limit and its setting.
struct Limits {
  uint64_t max_commit_bytes = 1 << 20;  // limits.max_commit_bytes
  // limits.max_document_bytes: one document's state, encoded (it travels in
  // one message, so at most documents.max_frame_bytes less 4 KiB).
  uint64_t max_document_bytes = 8 << 20;
  uint64_t max_deltas_per_commit = 10000;       // limits.max_deltas_per_commit
  uint64_t max_topics_per_link = 1000;          // limits.max_topics_per_link
  uint64_t max_documents = 1000000;             // limits.max_documents: stored on this node
  uint64_t max_requests_in_flight = 64;         // limits.max_requests_in_flight: per link
  uint64_t max_text_bytes = 64 << 10;           // limits.max_text_bytes: one requests message
  uint64_t max_http_body_bytes = 64 << 20;      // limits.max_http_body_bytes: admin requests
  uint64_t max_connections_per_address = 4096;  // limits.max_connections_per_address
  // limits.max_connections: open at once, in all (0: three quarters of the
  // descriptor limit, which the node raises to its hard limit at start).
  uint64_t max_connections = 0;
  uint64_t send_queue_bytes = 8 << 20;  // limits.send_queue_bytes: per link, unsent
  // limits.memory_bytes: messages partly read and waiting to be sent, over
  // all connections (0: a quarter of the machine's memory).
  uint64_t memory_bytes = 0;
  std::chrono::seconds message_timeout{60};  // limits.message_timeout_seconds: one message
  std::chrono::seconds idle_timeout{60};     // limits.idle_timeout_seconds: ping at half
};

// TLS for the WebSocket port and the admin endpoint (docs/node.md "TLS").
struct Tls {
  std::string cert_file;  // tls.cert_file: PEM chain; with key_file, serve wss:// and https://
  std::string key_file;   // tls.key_file: PEM private key of cert_file
  std::string ca_file;    // tls.ca_file: PEM, trusted for wss:// upstreams (empty: system's)
  bool serving() const { return !cert_file.empty(); }
};

// Every setting of aweft-node, with its default: the node runs with none
// given. docs/node.md documents each key; the TOML file and the flags use
// the same names.
struct Config {
  std::string data = "./aweft-data";      // data
  std::string listen = "127.0.0.1:7420";  // listen: links and requests
  std::string admin = "127.0.0.1:7421";   // admin: the admin HTTP endpoint ("off": none)
  std::string admin_token;                // admin_token: guards it (empty: no token)
  // admin_hosts: names (beside localhost and addresses) a request may give
  // as Host on the admin endpoint; any other name is refused (DNS rebinding).
  std::vector<std::string> admin_hosts;
  // allowed_origins: browser pages (Origin, e.g. "https://app.example"; "*":
  // any) that may open links. Empty: none when no tokens are configured,
  // any when they are (the token still decides). docs/node.md "Browsers".
  std::vector<std::string> allowed_origins;
  std::string log_level = "info";   // log_level
  std::string log_format = "text";  // log_format: text (logfmt) or json
  std::string node_id;              // node_id: made once, kept in data
  uint64_t threads = 1;             // threads: home + threads-1 shards (docs/node.md)

  storage::Options storage;  // [storage]

  std::chrono::seconds idle_evict{60};   // documents.idle_evict_seconds
  std::vector<std::string> create{"*"};  // documents.create
  uint64_t max_frame_bytes = 16 << 20;   // documents.max_frame_bytes

  Limits limits;  // [limits]
  Tls tls;        // [tls]

  std::vector<Token> tokens;        // [[tokens]]
  std::vector<Upstream> upstreams;  // [[upstreams]]
  // [[peers]] (url, token, digest_seconds): the cluster this node is one of;
  // it may name the node itself.
  std::vector<Upstream> peers;
  Cluster cluster;  // [cluster]
};

// Reads the settings: the defaults, then the TOML file named by --config (if
// any), then the flags in order. Throws ConfigError naming the key or flag
// that is wrong. Sets `help` or `version` when those flags are given.
Config LoadConfig(int argc, const char* const* argv, bool& help, bool& version);

// The flags, for --help.
std::string Usage();

// True when `name` matches `pattern`: `*` matches any run of characters, `?`
// one character, anything else itself.
bool NameMatches(std::string_view pattern, std::string_view name);

// Splits "host:port"; throws ConfigError naming `key` if it is not one.
std::pair<std::string, uint16_t> HostPort(const std::string& value, const std::string& key);

}  // namespace aweft::node

#include "node/config_flags.h"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <map>

#include "node/config.h"

namespace aweft::node {

std::string Usage() {
  return R"(usage: aweft-node [flags]

Runs a replication node. With no flags and no config file it keeps its data in
./aweft-data, serves links at ws://127.0.0.1:7420/ and the admin endpoint at
http://127.0.0.1:7421/.

  --config FILE        read settings from a TOML file (docs/node.md)
  --data DIR           data directory                     (data)
  --listen HOST:PORT   WebSocket links and requests       (listen)
  --admin HOST:PORT    admin HTTP endpoint, or off        (admin)
  --admin-token TOKEN  bearer token the admin endpoint wants (admin_token)
  --log-level LEVEL    trace, debug, info, warn, error    (log_level)
  --log-format FORMAT  text (logfmt) or json              (log_format)
  --node-id ID         this node's id                     (node_id)
  --durability MODE    sync, wal or none                  (storage.durability)
  --threads N          threads: 1, or 1 + N-1 for sockets (threads)
  --upstream URL       a node to dial and share with      ([[upstreams]] url)
  --peer URL           a peer of this node's cluster      ([[peers]] url)
  --tls-cert FILE      serve wss:// and https:// with it  (tls.cert_file)
  --tls-key FILE       the certificate's private key      (tls.key_file)
  --tls-ca FILE        trusted for wss:// upstreams       (tls.ca_file)
  --set KEY=VALUE      any setting, as in the file: --set storage.history_commits=500
  --help, --version

Flags apply after the file, in order. A bad key or value exits 2 naming it.
Secrets may come from the environment instead, between the file and the
flags: AWEFT_ADMIN_TOKEN (admin_token), AWEFT_TOKENS (tokens, as TOML:
[{token="...", write=["*"]}]), AWEFT_TLS_KEY_FILE (tls.key_file).
)";
}

namespace {

// The flags that set one key each, as the file would (Usage() lists them).
const std::map<std::string, std::string> kFlagKeys{{"data", "data"},
                                                   {"listen", "listen"},
                                                   {"admin", "admin"},
                                                   {"admin-token", "admin_token"},
                                                   {"log-level", "log_level"},
                                                   {"log-format", "log_format"},
                                                   {"node-id", "node_id"},
                                                   {"durability", "storage.durability"},
                                                   {"threads", "threads"},
                                                   {"tls-cert", "tls.cert_file"},
                                                   {"tls-key", "tls.key_file"},
                                                   {"tls-ca", "tls.ca_file"}};

}  // namespace

cli::Parsed ReadFlags(int argc, const char* const* argv) {
  namespace po = boost::program_options;
  po::options_description flags;
  flags.add_options()("help,h", "")("version", "");
  for (const char* flag : {"config", "upstream", "peer", "set"}) {
    flags.add_options()(flag, po::value<std::string>());
  }
  for (const auto& [flag, key] : kFlagKeys)
    flags.add_options()(flag.c_str(), po::value<std::string>());
  try {
    cli::Parsed parsed = cli::Parse(std::vector<std::string>(argv + 1, argv + argc), flags);
    if (!parsed.positional.empty()) {
      throw cli::UsageError("'" + parsed.positional.front() +
                            "' is not a flag: aweft-node takes flags only");
    }
    return parsed;
  } catch (const cli::UsageError& e) {
    throw ConfigError(std::string("config: ") + e.what() + ". See --help.");
  }
}

std::string TomlQuote(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// The TOML a flag stands for: `--data D` is `data = "D"`.
std::string Snippet(const std::string& flag, const std::string& value) {
  if (flag == "upstream" || flag == "peer") return "[[" + flag + "s]]\nurl = " + TomlQuote(value);
  if (flag == "threads") {
    // Not a number: quoted, so the error is the key's, not TOML's.
    const bool digits =
        !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    return "threads = " + (digits ? value : TomlQuote(value));
  }
  if (flag == "set") {
    const size_t eq = value.find('=');
    if (eq == std::string::npos)
      throw ConfigError("config: --set takes KEY=VALUE, not '" + value + "'. See --help.");
    std::string raw = value.substr(eq + 1);
    // A bare word is text: --set log_level=debug.
    const bool bare = !raw.empty() && raw.find_first_of("\"'[{") != 0 &&
                      raw.find_first_not_of("0123456789-_.") != std::string::npos &&
                      raw != "true" && raw != "false";
    return value.substr(0, eq) + " = " + (bare ? TomlQuote(raw) : raw);
  }
  return kFlagKeys.at(flag) + " = " + TomlQuote(value);
}

}  // namespace aweft::node

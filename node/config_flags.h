#pragma once

#include <string>

#include "node/cli.h"

// aweft-node's command line (Usage() in node/config.h lists it): each flag
// stands for the TOML it would be in the file, which LoadConfig applies.
namespace aweft::node {

// Reads the flags; throws ConfigError for one that does not parse.
cli::Parsed ReadFlags(int argc, const char* const* argv);

// The TOML a flag stands for: `--data D` is `data = "D"`. Throws
// ConfigError for a --set without KEY=VALUE.
std::string Snippet(const std::string& flag, const std::string& value);

// `text` as a TOML string, quoted.
std::string TomlQuote(const std::string& text);

}  // namespace aweft::node

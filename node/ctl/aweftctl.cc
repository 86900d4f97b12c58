// aweftctl: decodes commit and frame bytes to the fixtures' JSON, and encodes
// that JSON back to canonical bytes; lists, shows, exports and imports the
// documents of a node or a data directory (node/ctl_commands.cc).
// docs/aweftctl.md describes every flag and exit code.

#include <boost/json/error.hpp>
#include <boost/json/value.hpp>
#include <boost/program_options/options_description.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "codec/commit.h"
#include "codec/frame.h"
#include "codec/id.h"
#include "codec/json.h"
#include "node/cli.h"
#include "node/ctl/ctl_commands.h"
#include "node/json/commit_json.h"

namespace {

namespace codec = aweft::codec;
namespace json = boost::json;
using aweft::node::IdForm;

constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;

constexpr std::string_view kHelp =
    R"(aweftctl: decode and encode aweft commits and frames; inspect, export and
import the documents of a node or a data directory.

Usage:
  aweftctl decode [--frame] [--binary] [--lines] [FILE]
  aweftctl encode [--frame] [--binary] [--lines] [FILE]
  aweftctl docs [--prefix P]                 list documents
  aweftctl show NAME [--at SEQ]              a document's state, as a tree
  aweftctl history NAME [--since N] [--limit M]
                                             decoded commits after seq N
  aweftctl export NAME FILE                  the document as one commit plus
                                             metadata, to FILE ("-": stdout)
  aweftctl import FILE [--name NAME]         create a document from an export
           [--max-document-bytes N]          (with --data: the node's limit,
                                             default 8 MiB)
  aweftctl snapshot NAME                     write a snapshot now
  aweftctl delete NAME                       delete a document (a node
                                             refuses one a link shares)
  aweftctl stats                             the node's metrics (or the
                                             store's figures, offline)
  aweftctl links                             a node's links (--node only)
  aweftctl cluster                           a node's peers: state, since
                                             when, documents homed (--node
                                             only)
  aweftctl node                              a node's id, version, uptime
                                             and upstreams (--node only)
  aweftctl health                            exit 0 when the node is ready,
                                             1 saying which check fails
  aweftctl --help | --version

Where the documents are (document commands):
  --node URL     a running node's admin endpoint (default
                 http://127.0.0.1:7421)
  --token TOKEN  its admin_token (or $AWEFT_ADMIN_TOKEN)
  --data DIR     offline: the node's data directory, opened directly (the
                 node must not be running on it)
  --json         one JSON value on standard output, for scripts

decode  reads commit bytes as hex (whitespace is ignored) and prints the
        commit as JSON, in the shape of the conformance fixtures:
        {"deltas":[{"type","id","ref":{"kind","key"},"value"?}],"tag"?}
encode  reads that JSON and prints the commit's one canonical encoding as
        lowercase hex.

Flags:
  --frame   a link frame instead of a commit (the frame fixtures' "frame"
            object; ids and byte strings in it are hex)
  --binary  decode reads raw bytes; encode writes raw bytes
  --lines   one input per line, one output line per input
            (not with --binary)
  FILE      read FILE instead of standard input ("-" is standard input)

Refusals are printed to standard output as
  {"reason":"...","message":"...","fix":"..."}

Exit status: 0 all accepted, 1 an input was refused (or the node or store
refused the request), 2 bad usage or unreadable input, 3 no node answers
at --node, or the data directory cannot be opened.
)";

// Bad flags or an unreadable FILE: main() prints it and exits 2.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Command { kDecode, kEncode };

struct Options {
  Command command = Command::kDecode;
  bool frame = false;
  bool binary = false;
  bool lines = false;
  std::string file;  // Empty: standard input.
};

UsageError BadUsage(const std::string& detail) {
  return UsageError("bad-usage: " + detail + ". Run 'aweftctl --help' for the commands and flags");
}

Options ParseArgs(const std::vector<std::string>& args) {
  Options options;
  if (args.empty()) throw BadUsage("no command given");
  if (args[0] == "decode") {
    options.command = Command::kDecode;
  } else if (args[0] == "encode") {
    options.command = Command::kEncode;
  } else {
    std::vector<std::string> commands = aweft::node::ctl::DocumentCommands();
    commands.insert(commands.end(), {"decode", "encode", "help"});
    throw BadUsage("unknown command '" + args[0] + "'" + aweft::cli::DidYouMean(args[0], commands));
  }
  namespace po = boost::program_options;
  po::options_description flags;
  flags.add_options()("frame", "")("binary", "")("lines", "");
  aweft::cli::Parsed parsed;
  try {
    parsed = aweft::cli::Parse({args.begin() + 1, args.end()}, flags);
  } catch (const aweft::cli::UsageError& e) {
    throw BadUsage(e.what());
  }
  for (const auto& [flag, value] : parsed.flags) {
    options.frame |= flag == "frame";
    options.binary |= flag == "binary";
    options.lines |= flag == "lines";
  }
  if (parsed.positional.size() > 1) {
    throw BadUsage("more than one FILE given ('" + parsed.positional[1] + "')");
  }
  if (!parsed.positional.empty() && parsed.positional[0] != "-")
    options.file = parsed.positional[0];
  if (options.binary && options.lines) {
    throw BadUsage("--binary and --lines cannot be combined");
  }
  return options;
}

std::string ReadAll(const std::string& file) {
  if (file.empty()) {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw UsageError("unreadable-input: cannot open '" + file + "': " + std::strerror(errno) +
                     ". Check the path");
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string WithoutSpace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') {
      out.push_back(c);
    }
  }
  return out;
}

// What one input became: the text to print, and whether it was refused.
struct Outcome {
  std::string text;
  bool refused;
};

Outcome Refused(const codec::Refusal& refusal) {
  return {aweft::codec::WriteJson(aweft::node::RefusalToJson(refusal)) + "\n", true};
}

Outcome Decode(std::string_view input, const Options& options) {
  std::string bytes(input);
  if (!options.binary) {
    codec::Result<std::string> hex = codec::FromHex(WithoutSpace(input));
    if (!hex) return Refused(hex.error());
    bytes = std::move(*hex);
  }
  json::value out;
  if (options.frame) {
    codec::Result<codec::Frame> frame = codec::DecodeFrame(bytes);
    if (!frame) return Refused(frame.error());
    out = aweft::node::FrameToJson(*frame);
  } else {
    codec::Result<codec::Commit> commit = codec::DecodeCommit(bytes);
    if (!commit) return Refused(commit.error());
    out = aweft::node::CommitToJson(*commit, IdForm::kText);
  }
  return {aweft::codec::WriteJson(out) + "\n", false};
}

// Input that is not JSON at all is refused with the reason for "not a
// commit" (or "not a frame"), except a \uDC00-style escape outside a
// surrogate pair, which is the encoder's lone-surrogate. (Boost.JSON reports
// a high surrogate followed by anything but \u as a plain syntax error.)
codec::Result<json::value> ReadJson(std::string_view input, bool frame) {
  boost::system::error_code error;
  size_t parsed = 0;
  json::value value = codec::ParseJson(input, error, {}, &parsed);
  if (!error) return value;
  codec::Reason reason = frame ? codec::Reason::kBadFrame : codec::Reason::kInvalidCommit;
  if (error == json::error::illegal_leading_surrogate ||
      error == json::error::illegal_trailing_surrogate) {
    reason = codec::Reason::kLoneSurrogate;
  }
  return codec::Refusal{
      reason, "the input is not JSON: " + error.message() + " at byte " + std::to_string(parsed)};
}

codec::Result<std::string> EncodeJson(const json::value& value, bool frame) {
  if (frame) {
    codec::Result<codec::Frame> parsed = aweft::node::FrameFromJson(value);
    if (!parsed) return parsed.error();
    return codec::EncodeFrame(*parsed);
  }
  codec::Result<codec::Commit> parsed = aweft::node::CommitFromJson(value, IdForm::kText);
  if (!parsed) return parsed.error();
  return codec::EncodeCommit(*parsed);
}

Outcome Encode(std::string_view input, const Options& options) {
  codec::Result<json::value> value = ReadJson(input, options.frame);
  if (!value) return Refused(value.error());
  codec::Result<std::string> bytes = EncodeJson(*value, options.frame);
  if (!bytes) return Refused(bytes.error());
  if (options.binary) return {std::move(*bytes), false};
  return {codec::Hex(*bytes) + "\n", false};
}

Outcome RunOne(std::string_view input, const Options& options) {
  return options.command == Command::kDecode ? Decode(input, options) : Encode(input, options);
}

// Splits at '\n' (dropping a '\r' before it); a final newline does not start
// another, empty, input.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

int Run(const Options& options) {
  std::string input = ReadAll(options.file);
  std::vector<std::string_view> inputs;
  if (options.lines) {
    inputs = Lines(input);
  } else {
    inputs.push_back(input);
  }
  bool refused = false;
  for (std::string_view one : inputs) {
    Outcome outcome = RunOne(one, options);
    std::cout.write(outcome.text.data(), static_cast<std::streamsize>(outcome.text.size()));
    refused = refused || outcome.refused;
  }
  std::cout.flush();
  return refused ? kExitRefused : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "help") args[0] = "--help";
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout << kHelp;
      return kExitOk;
    }
    if (arg == "--version") {
      std::cout << "aweftctl " AWEFT_VERSION "\n";
      return kExitOk;
    }
  }
  if (!args.empty() && aweft::node::ctl::IsDocumentCommand(args[0])) {
    return aweft::node::ctl::RunDocumentCommand(args);
  }
  try {
    return Run(ParseArgs(args));
  } catch (const UsageError& e) {
    std::cerr << "aweftctl: " << e.what() << ".\n";
    return kExitUsage;
  }
}

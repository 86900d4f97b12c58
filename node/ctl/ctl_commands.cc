#include "node/ctl/ctl_commands.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "codec/json.h"
#include "node/cli.h"
#include "node/config.h"
#include "node/ctl/ctl_backend.h"
#include "node/ctl/progress.h"
#include "node/json/commit_json.h"

namespace aweft::node::ctl {
namespace {

namespace json = boost::json;

constexpr size_t kPage = 1000;  // The admin endpoint's largest page.

using UsageError = cli::UsageError;

struct Options {
  std::string command;
  std::vector<std::string> positional;
  std::string node, token, data;
  bool json = false;
  std::map<std::string, std::string> values;  // --at, --since, --limit, --prefix, --name
};

// How many positional arguments each command takes.
const std::map<std::string, size_t, std::less<>> kArity{
    {"docs", 0},  {"show", 1},   {"history", 1}, {"export", 2}, {"import", 1}, {"snapshot", 1},
    {"stats", 0}, {"delete", 1}, {"links", 0},   {"node", 0},   {"health", 0}, {"cluster", 0}};

// The commands only a running node answers.
bool NodeOnly(std::string_view command) {
  return command == "links" || command == "node" || command == "health" || command == "cluster";
}

Options Parse(const std::vector<std::string>& args) {
  Options options;
  options.command = args[0];
  if (const char* token = std::getenv("AWEFT_ADMIN_TOKEN")) options.token = token;
  boost::program_options::options_description flags;
  flags.add_options()("json", "");
  const char* const value_flags[] = {"node",
                                     "token",
                                     "data",
                                     "at",
                                     "since",
                                     "prefix",
                                     "name",
                                     "limit",  // not a reason: a flag
                                     "max-document-bytes"};
  for (const char* flag : value_flags) {
    flags.add_options()(flag, boost::program_options::value<std::string>());
  }
  cli::Parsed parsed = cli::Parse({args.begin() + 1, args.end()}, flags);
  const std::map<std::string, std::string*> fields{
      {"node", &options.node}, {"token", &options.token}, {"data", &options.data}};
  for (const auto& [flag, value] : parsed.flags) {
    if (flag == "json") {
      options.json = true;
    } else if (auto it = fields.find(flag); it != fields.end()) {
      *it->second = value;
    } else {
      options.values[flag] = value;
    }
  }
  options.positional = std::move(parsed.positional);
  const size_t arity = kArity.find(options.command)->second;
  if (options.positional.size() != arity) {
    throw UsageError("'" + options.command + "' takes " + std::to_string(arity) +
                     " argument(s), not " + std::to_string(options.positional.size()));
  }
  if (!options.node.empty() && !options.data.empty()) {
    throw UsageError("--node and --data cannot be combined");
  }
  if (options.node.empty() && options.data.empty()) options.node = "http://127.0.0.1:7421";
  if (!options.node.empty() && options.node.rfind("http://", 0) != 0 &&
      options.node.rfind("https://", 0) != 0) {
    throw UsageError(
        "--node takes the admin endpoint's URL, http://HOST:PORT or https://..., "
        "not '" +
        options.node + "'");
  }
  if (options.values.count("max-document-bytes") &&
      (options.command != "import" || options.data.empty())) {
    throw UsageError(
        "--max-document-bytes is for 'import' with --data (a running node applies its own "
        "limits.max_document_bytes)");
  }
  if (NodeOnly(options.command) && !options.data.empty()) {
    throw UsageError("'" + options.command + "' asks a running node: give --node, not --data");
  }
  return options;
}

std::optional<uint64_t> Number(const Options& options, const std::string& key) {
  auto it = options.values.find(key);
  if (it == options.values.end()) return std::nullopt;
  const std::string& text = it->second;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 19) {
    throw UsageError("--" + key + " takes a whole number, not '" + text + "'");
  }
  return std::stoull(text);
}

std::string Value(const Options& options, const std::string& key) {
  auto it = options.values.find(key);
  return it == options.values.end() ? "" : it->second;
}

// A refusal from the node or the store: on stdout as JSON with --json, on
// stderr as "reason: message. fix" otherwise.
int Refused(const admin::Problem& problem, const Options& options) {
  if (options.json) {
    std::cout << codec::WriteJson(problem.ToJson()) << "\n";
  } else {
    std::cerr << "aweftctl: " << problem.reason << ": " << problem.message << ". " << problem.fix
              << "\n";
  }
  return kExitRefused;
}

std::string Text(const json::value& value) {
  return value.is_string() ? std::string(value.as_string()) : codec::WriteJson(value);
}

// The state as an indented tree, following attach edges from the root.
void PrintObservable(const json::object& state, const std::string& id, const std::string& indent) {
  const json::object& observables = state.at("observables").as_object();
  const json::value* found = observables.if_contains(id);
  if (!found) return;
  const json::object& observable = found->as_object();
  const json::value& value = observable.at("value");
  auto line = [&](const std::string& key, const json::value& slot) {
    std::cout << indent << key << ": ";
    const json::object* ref = slot.if_object();
    if (ref && ref->contains("ref") && ref->at("edge") == "attach") {
      const std::string child(ref->at("ref").as_string());
      std::cout << Text(ref->at("kind")) << " " << child << "\n";
      PrintObservable(state, child, indent + "  ");
    } else {
      std::cout << codec::WriteJson(slot) << "\n";
    }
  };
  if (const json::array* items = value.if_array()) {
    for (size_t i = 0; i < items->size(); ++i) line(std::to_string(i), (*items)[i]);
  } else {
    for (const auto& [key, slot] : value.as_object()) line(std::string(key), slot);
  }
}

int Docs(Backend& backend, const Options& options) {
  json::array all;
  std::string after;
  Progress progress("listing", options.json);
  for (;;) {
    admin::Answer page = backend.Documents(Value(options, "prefix"), after, kPage);
    if (!page) return Refused(page.error(), options);
    for (const auto& doc : page->at("documents").as_array()) all.push_back(doc);
    progress.Update(all.size(), 0);
    const json::value& next = page->at("next");
    if (next.is_null()) break;
    after = std::string(next.as_string());
  }
  progress.Done();
  if (options.json) {
    std::cout << codec::WriteJson(json::object{{"documents", std::move(all)}}) << "\n";
    return kExitOk;
  }
  for (const auto& doc : all) {
    const json::object& d = doc.as_object();
    std::cout << Text(d.at("name")) << "\t" << Text(d.at("kind")) << "\thead " << Text(d.at("head"))
              << "\tsnapshot " << Text(d.at("snapshot")) << "\t" << Text(d.at("bytes")) << " bytes"
              << (d.at("loaded").as_bool() ? "\tloaded" : "") << "\n";
  }
  return kExitOk;
}

int Show(Backend& backend, const Options& options) {
  admin::Answer state = backend.State(options.positional[0], Number(options, "at"));
  if (!state) return Refused(state.error(), options);
  if (options.json) {
    std::cout << codec::WriteJson(*state) << "\n";
    return kExitOk;
  }
  const json::object& s = state->as_object();
  const std::string root(s.at("root").as_string());
  std::cout << options.positional[0] << ": " << Text(s.at("kind")) << " " << root << " at seq "
            << Text(s.at("seq")) << "\n";
  PrintObservable(s, root, "  ");
  return kExitOk;
}

int History(Backend& backend, const Options& options) {
  const std::string& name = options.positional[0];
  const uint64_t first = Number(options, "since").value_or(0);
  const std::optional<uint64_t> limit = Number(options, "limit");  // not a reason: a flag
  uint64_t since = first, head = 0, count = 0;
  json::array commits;
  Progress progress("history", options.json);
  for (;;) {
    const uint64_t want = limit ? std::min<uint64_t>(kPage, *limit - count) : kPage;
    if (want == 0) break;
    admin::Answer page = backend.Commits(name, since, want);
    if (!page) return Refused(page.error(), options);
    head = page->at("head").to_number<uint64_t>();
    const json::array& entries = page->at("commits").as_array();
    progress.Done();  // The lines go out between the bar's updates.
    for (const auto& one : entries) {
      if (options.json)
        commits.push_back(one);
      else
        std::cout << Text(one.at("seq")) << "\t" << codec::WriteJson(one.at("commit")) << "\n";
      since = one.at("seq").to_number<uint64_t>();
      ++count;
    }
    std::cout.flush();
    progress.Update(since - first, head > first ? head - first : 0);
    if (page->at("next").is_null() || entries.empty()) break;
  }
  if (options.json) {
    std::cout << codec::WriteJson(json::object{{"name", name},
                                               {"since", first},
                                               {"head", head},
                                               {"commits", std::move(commits)}})
              << "\n";
  }
  return kExitOk;
}

int Export(Backend& backend, const Options& options) {
  const std::string& name = options.positional[0];
  const std::string& file = options.positional[1];
  Progress progress("exporting", options.json);
  progress.Update(0, 2);
  admin::Answer exported = backend.Export(name);
  if (!exported) return Refused(exported.error(), options);
  progress.Done();
  const std::string text = codec::WriteJson(*exported) + "\n";
  if (file == "-") {
    std::cout << text;
    return kExitOk;
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw UsageError("cannot write '" + file + "'");
  json::object summary{
      {"name", name}, {"file", file}, {"head", exported->at("head")}, {"bytes", text.size()}};
  if (options.json)
    std::cout << codec::WriteJson(summary) << "\n";
  else
    std::cout << "exported " << name << " at seq " << Text(exported->at("head")) << " to " << file
              << " (" << text.size() << " bytes)\n";
  return kExitOk;
}

int Import(Backend& backend, const Options& options) {
  const std::string& file = options.positional[0];
  std::string text;
  if (file == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UsageError("cannot open '" + file + "'");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  json::error_code ec;
  json::value exported = codec::ParseJson(text, ec);
  std::string name = Value(options, "name");
  const json::value* named =
      !ec && exported.is_object() ? exported.as_object().if_contains("name") : nullptr;
  if (ec || !exported.is_object() || (name.empty() && (!named || !named->is_string()))) {
    return Refused(
        admin::MakeProblem(codec::Refusal{codec::Reason::kInvalidCommit,
                                          "'" + file +
                                              "' is not an aweftctl export naming its "
                                              "document (give --name for one that does not)"},
                           400),
        options);
  }
  if (name.empty()) name = std::string(named->as_string());
  Progress progress("importing", options.json);
  progress.Update(0, 1);
  admin::Answer imported = backend.Import(name, exported);
  progress.Done();
  if (!imported) return Refused(imported.error(), options);
  if (options.json)
    std::cout << codec::WriteJson(*imported) << "\n";
  else
    std::cout << "imported " << name << ": " << Text(imported->at("kind")) << " "
              << Text(imported->at("root")) << " at seq " << Text(imported->at("head")) << "\n";
  return kExitOk;
}

int Snapshot(Backend& backend, const Options& options) {
  admin::Answer taken = backend.Snapshot(options.positional[0]);
  if (!taken) return Refused(taken.error(), options);
  if (options.json)
    std::cout << codec::WriteJson(*taken) << "\n";
  else
    std::cout << options.positional[0] << ": snapshot at seq " << Text(taken->at("snapshot"))
              << "\n";
  return kExitOk;
}

int Stats(Backend& backend, const Options& options) {
  admin::Answer stats = backend.Stats();
  if (!stats) return Refused(stats.error(), options);
  if (options.json) {
    std::cout << codec::WriteJson(*stats) << "\n";
    return kExitOk;
  }
  for (const auto& [key, value] : stats->as_object()) {
    std::cout << std::string(key) << " " << codec::WriteJson(value) << "\n";
  }
  return kExitOk;
}

int Delete(Backend& backend, const Options& options) {
  const std::string& name = options.positional[0];
  admin::Answer removed = backend.Remove(name);
  if (!removed) return Refused(removed.error(), options);
  if (options.json)
    std::cout << codec::WriteJson(*removed) << "\n";
  else
    std::cout << "deleted " << name << "\n";
  return kExitOk;
}

// links, node, health, cluster: a running node's own answers.
int AskNode(const Options& options) {
  const std::string route = options.command == "links"     ? "/v1/links"
                            : options.command == "node"    ? "/v1/node"
                            : options.command == "cluster" ? "/v1/cluster"
                                                           : "/ready";
  admin::Answer answer = ctl::AskNode(options.node, options.token, route);
  if (!answer) return Refused(answer.error(), options);  // health: not-ready, exit 1.
  if (options.json) {
    std::cout << codec::WriteJson(*answer) << "\n";
    return kExitOk;
  }
  const json::object& o = answer->as_object();
  if (options.command == "health") {
    std::cout << "ready\n";
  } else if (options.command == "node") {
    std::cout << Text(o.at("id")) << " " << Text(o.at("version")) << ", up "
              << Text(o.at("uptime_seconds")) << " s, serving " << Text(o.at("listen")) << "\n";
    for (const auto& up : o.at("upstreams").as_array()) {
      std::cout << "upstream " << Text(up.at("url"))
                << (up.at("connected").as_bool() ? " connected" : " not connected")
                << (up.at("cycle").as_bool() ? " (refused: a cycle)" : "")  // not a reason: a field
                << "\n";
    }
  } else if (options.command == "cluster") {
    std::cout << Text(o.at("id")) << (o.at("home_ready").as_bool() ? "" : " (catching up)") << ": "
              << Text(o.at("documents_homed_here")) << " loaded document(s) homed here, "
              << Text(o.at("documents_behind")) << " behind\n";
    for (const auto& peer : o.at("peers").as_array()) {
      std::cout << Text(peer.at("id")) << "\t" << Text(peer.at("url")) << "\t"
                << Text(peer.at("state")) << " for " << Text(peer.at("since_seconds")) << " s\t"
                << Text(peer.at("documents_homed")) << " homed\n";
    }
  } else {
    for (const auto& link : o.at("links").as_array()) {
      const json::object& l = link.as_object();
      std::cout << Text(l.at("id")) << "\t" << Text(l.at("kind")) << "\t" << Text(l.at("remote"))
                << "\t" << l.at("topics").as_array().size() << " topic(s)\tin "
                << Text(l.at("bytes").at("in")) << " B\tout " << Text(l.at("bytes").at("out"))
                << " B\n";
    }
  }
  return kExitOk;
}

int Dispatch(Backend& backend, const Options& options) {
  const std::string& c = options.command;
  if (c == "delete") return Delete(backend, options);
  if (c == "docs") return Docs(backend, options);
  if (c == "show") return Show(backend, options);
  if (c == "history") return History(backend, options);
  if (c == "export") return Export(backend, options);
  if (c == "import") return Import(backend, options);
  if (c == "snapshot") return Snapshot(backend, options);
  return Stats(backend, options);
}

}  // namespace

bool IsDocumentCommand(std::string_view command) { return kArity.count(command) > 0; }

std::vector<std::string> DocumentCommands() {
  std::vector<std::string> names;
  for (const auto& [name, arity] : kArity) names.push_back(name);
  return names;
}

int RunDocumentCommand(const std::vector<std::string>& args) {
  try {
    const Options options = Parse(args);
    Number(options, "at");  // Checked before anything is reached.
    Number(options, "since");
    Number(options, "limit");  // not a reason: a flag
    if (NodeOnly(options.command)) return AskNode(options);
    // The node's default limits.max_document_bytes (node/config.h).
    const uint64_t max_document_bytes =
        Number(options, "max-document-bytes").value_or(Limits{}.max_document_bytes);
    std::unique_ptr<Backend> backend = options.data.empty()
                                           ? Online(options.node, options.token)
                                           : Offline(options.data, max_document_bytes);
    return Dispatch(*backend, options);
  } catch (const UsageError& e) {
    std::cerr << "aweftctl: bad-usage: " << e.what()
              << ". Run 'aweftctl --help' for the commands and flags.\n";
    return kExitUsage;
  } catch (const Unreachable& e) {
    std::cerr << "aweftctl: unreachable: " << e.what() << ". Check --node or --data.\n";
    return kExitUnreachable;
  }
}

}  // namespace aweft::node::ctl

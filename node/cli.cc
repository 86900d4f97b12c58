#include "node/cli.h"

#include <algorithm>
#include <boost/program_options/errors.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/value_semantic.hpp>

namespace aweft::cli {
namespace {

namespace po = boost::program_options;

// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

constexpr const char* kPositional = "positional-arguments";

}  // namespace

std::string DidYouMean(std::string_view word, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_distance = 3;
  for (const std::string& name : known) {
    const size_t d = Distance(word, name);
    if (d < best_distance && d * 2 < word.size()) {
      best = &name;
      best_distance = d;
    }
  }
  return best ? " (did you mean " + *best + "?)" : "";
}

Parsed Parse(const std::vector<std::string>& args, const po::options_description& flags) {
  po::options_description all;
  all.add(flags);
  all.add_options()(kPositional, po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add(kPositional, -1);
  // Long flags only (--name value, --name=value), never guessed from a
  // prefix; -h alone stays for --help.
  const int style =
      po::command_line_style::allow_long | po::command_line_style::long_allow_adjacent |
      po::command_line_style::long_allow_next | po::command_line_style::allow_short |
      po::command_line_style::short_allow_next | po::command_line_style::allow_dash_for_short;
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::command_line_parser(args).options(all).positional(positional).style(style).run();
  } catch (const po::unknown_option& e) {
    std::vector<std::string> known;
    for (const auto& option : flags.options()) known.push_back("--" + option->long_name());
    const std::string name = e.get_option_name();
    throw UsageError("'" + name + "' is not a flag" + DidYouMean(name, known));
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  Parsed out;
  for (const po::option& option : parsed.options) {
    const std::string value = option.value.empty() ? "" : option.value.front();
    if (option.string_key == kPositional) {
      out.positional.push_back(value);
    } else {
      out.flags.emplace_back(option.string_key, value);
    }
  }
  return out;
}

}  // namespace aweft::cli

#pragma once

#include <boost/program_options/options_description.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Command lines, read the same way by aweft-node, aweftctl and aweft-bench:
// Boost.Program_options does the reading; this adds what it lacks, flags
// kept in the order given, and the nearest known name for a mistyped one.
namespace aweft::cli {

// A command line that does not parse: what is wrong, without a fix (each
// program adds its own, "See --help."). what() is the detail.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Parsed {
  // Each flag given, in order, under its long name without dashes ("data");
  // a switch's value is empty.
  std::vector<std::pair<std::string, std::string>> flags;
  std::vector<std::string> positional;  // The other arguments, in order.
};

// Reads `args` (argv without the program's name) against `flags`. A flag
// may be given more than once; `--name=value` and `--name value` are one;
// no flag is guessed from a prefix. Throws UsageError for an unknown flag
// (naming the nearest known one when there is one), a flag without its
// value, or a switch given one.
Parsed Parse(const std::vector<std::string>& args,
             const boost::program_options::options_description& flags);

// " (did you mean X?)": the one of `known` nearest `word` when it is near
// enough to be a slip (at most 2 edits, and fewer than half its letters);
// else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& known);

}  // namespace aweft::cli

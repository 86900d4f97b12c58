#pragma once

#include <string>
#include <string_view>
#include <vector>

// aweftctl's commands over documents (docs/aweftctl.md): docs, show,
// history, export, import, snapshot, stats; online through a node's admin
// endpoint (--node URL) or offline on a data directory (--data DIR).
namespace aweft::node::ctl {

constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;      // The node or the store refused.
constexpr int kExitUsage = 2;        // Bad flags or arguments.
constexpr int kExitUnreachable = 3;  // No node answers there, or no store opens.

// True for the commands this file runs; and their names.
bool IsDocumentCommand(std::string_view command);
std::vector<std::string> DocumentCommands();

// Runs `args` (the command first) and returns the exit status; prints
// errors itself.
int RunDocumentCommand(const std::vector<std::string>& args);

}  // namespace aweft::node::ctl

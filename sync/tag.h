#pragma once

#include <string>
#include <string_view>

#include "sync/document.h"

// The integrity tag (format spec §3.3) as this project defines it
// (codec/FORMAT.md "Integrity tag"): a digest of the values the slots a
// commit writes held before it, at the end that made the commit.
namespace aweft::sync {

// The algorithm's name, as two ends agree on it (`tags` request).
inline constexpr std::string_view kTagAlgorithm = "prior-sha256-8";

// The tag of `commit` as it would be made on `document` now (before it is
// applied): what a receiver compares.
std::string TagBefore(const Document& document, const Commit& commit);

// The tag of `commit` at the end that made it, from the commit that undoes
// it there (Change::undo): what a sender attaches.
std::string TagOf(const Commit& commit, const Commit& undo);

}  // namespace aweft::sync

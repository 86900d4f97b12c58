#pragma once

#include <functional>
#include <string>

#include "codec/commit.h"
#include "sync/snapshot.h"

namespace aweft::storage::testing {

// A short fingerprint of a document's whole state (ids and positions
// included), for comparing states across processes.
inline std::string Digest(const sync::Document& document) {
  std::string bytes(document.root().id().view());
  if (auto commit = sync::AsCommit(document)) bytes += *codec::EncodeCommit(*commit);
  return std::to_string(std::hash<std::string>()(bytes));
}

}  // namespace aweft::storage::testing

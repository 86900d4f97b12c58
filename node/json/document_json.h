#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codec/result.h"
#include "codec/value.h"
#include "storage/store.h"
#include "sync/document.h"
#include "sync/snapshot.h"

// Documents as JSON, for the admin endpoint and aweftctl (docs/admin.md):
// a state, a stored document's figures, and the export format.
namespace aweft::node {

// {"root": ID, "kind": K, "observables": {ID: {"kind": K, "value": V}}}:
// every observable of the state, by id text. An object's value is a JSON
// object by key, an array's a JSON array in position order, a map's a JSON
// object keyed by id text; a slot holding a reference is {ref, kind, edge}.
boost::json::object StateToJson(const sync::Snapshot& state);

// {"name", "root", "kind", "head", "snapshot", "floor", "created_ms",
//  "bytes", "loaded"} (and "damage" when it is damaged).
boost::json::object InfoToJson(const storage::DocumentInfo& info);

// The export format: {"name", "root", "kind", "head", "commit"}, `commit`
// being the hex of AsCommit(document)'s canonical bytes, or null for a
// document with no slot.
boost::json::object ExportToJson(std::string_view name, const sync::Document& document,
                                 uint64_t head);

// What ExportToJson wrote, read back and checked: the commit decodes and
// builds a document under that root.
struct Exported {
  std::string name;  // Empty when the export names none (it is optional).
  codec::Id root;
  codec::Kind kind = codec::Kind::kObject;
  uint64_t head = 0;
  std::optional<codec::Commit> commit;
};

// Refuses a wrong shape (invalid-commit, naming the field), a bad id
// (invalid-id), bad hex (invalid-hex), a commit that does not decode (its
// decode reason) or does not apply to an empty root (its apply reason).
codec::Result<Exported> ExportFromJson(const boost::json::value& json);

// Refuses `limit` an export whose document is over `max` bytes (its size as
// sync::Document::bytes() counts it once built), naming `setting`, the
// knob that sets `max`.
std::optional<codec::Refusal> OverDocumentLimit(const Exported& exported, uint64_t max,
                                                std::string_view setting);

// Builds the document an export describes: a root with its id and kind,
// then the commit applied. Refuses what Apply refuses.
codec::Result<std::unique_ptr<sync::Document>> BuildExported(const Exported& exported);

}  // namespace aweft::node

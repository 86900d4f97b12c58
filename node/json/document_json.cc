#include "node/json/document_json.h"

#include <boost/json/array.hpp>

#include "codec/commit.h"
#include "codec/id.h"
#include "node/json/commit_json.h"
#include "node/json/detail/json_input.h"

namespace aweft::node {
namespace {

namespace json = boost::json;
using codec::Reason;
using codec::Refusal;

json::value SlotsToJson(const sync::SnapshotObservable& observable) {
  if (observable.kind == codec::Kind::kArray) {
    json::array values;  // Slots iterate in key order: position order.
    for (const auto& [position, value] : observable.slots) {
      values.push_back(ValueToJson(value, IdForm::kText));
    }
    return values;
  }
  json::object values;
  for (const auto& [key, value] : observable.slots) {
    std::string name = key;
    if (observable.kind == codec::Kind::kMap) {
      auto id = codec::IdFromBytes(key);
      name = id ? codec::IdText(*id) : codec::Hex(key);
    }
    values[name] = ValueToJson(value, IdForm::kText);
  }
  return values;
}

}  // namespace

json::object StateToJson(const sync::Snapshot& state) {
  json::object observables;
  for (const auto& [id, observable] : state.observables) {
    observables[codec::IdText(id)] = json::object{{"kind", codec::KindName(observable.kind)},
                                                  {"value", SlotsToJson(observable)}};
  }
  if (!observables.contains(codec::IdText(state.root))) {
    // An empty document: its root still shows.
    observables[codec::IdText(state.root)] = json::object{
        {"kind", codec::KindName(state.root_kind)},
        {"value", state.root_kind == codec::Kind::kArray ? json::value(json::array())
                                                         : json::value(json::object())}};
  }
  return {{"root", codec::IdText(state.root)},
          {"kind", codec::KindName(state.root_kind)},
          {"observables", std::move(observables)}};
}

json::object InfoToJson(const storage::DocumentInfo& info) {
  json::object out{{"name", info.name},
                   {"root", codec::IdText(info.root)},
                   {"kind", codec::KindName(info.kind)},
                   {"head", info.head},
                   {"snapshot", info.snapshot},
                   {"floor", info.floor},
                   {"created_ms", info.created_ms},
                   {"bytes", info.approximate_bytes},
                   {"loaded", info.loaded}};
  if (!info.damage.empty()) out["damage"] = info.damage;
  return out;
}

json::object ExportToJson(std::string_view name, const sync::Document& document, uint64_t head) {
  json::value commit = nullptr;
  if (std::optional<codec::Commit> whole = sync::AsCommit(document)) {
    // AsCommit's commit encodes: it is built from a document's valid state.
    if (auto bytes = codec::EncodeCommit(*whole)) commit = json::string(codec::Hex(*bytes));
  }
  return {{"name", name},
          {"root", codec::IdText(document.root().id())},
          {"kind", codec::KindName(document.root().kind())},
          {"head", head},
          {"commit", std::move(commit)}};
}

codec::Result<Exported> ExportFromJson(const json::value& json) {
  auto object = detail::ObjectAt(json, Reason::kInvalidCommit, "export",
                                 {"name", "root", "kind", "head", "commit"});
  if (!object) return object.error();
  const json::object& in = **object;
  Exported out;
  if (in.contains("name")) {  // Optional: an import names the document itself.
    auto name = detail::TextAt(in, "name", Reason::kInvalidCommit, "export");
    if (!name) return name.error();
    out.name = std::string(*name);
  }
  auto root_text = detail::TextAt(in, "root", Reason::kInvalidId, "export");
  if (!root_text) return root_text.error();
  auto root = codec::IdFromText(*root_text);
  if (!root) return detail::At("export.root", root.error());
  out.root = *root;
  auto kind = detail::NamedAt<codec::Kind>(in, "kind", codec::KindFromName, Reason::kInvalidCommit,
                                           Reason::kUnknownRefKind, "export");
  if (!kind) return kind.error();
  out.kind = *kind;
  if (const json::value* head = in.if_contains("head")) {
    if (!head->is_uint64() && !(head->is_int64() && head->as_int64() >= 0)) {
      return detail::Refuse(Reason::kInvalidCommit, "export.head", "must be a whole number");
    }
    out.head = head->to_number<uint64_t>();
  }
  const json::value* commit = in.if_contains("commit");
  if (commit && !commit->is_null()) {
    auto bytes = detail::HexAt(*commit, Reason::kInvalidCommit, "export.commit");
    if (!bytes) return bytes.error();
    auto decoded = codec::DecodeCommit(*bytes);
    if (!decoded) return detail::At("export.commit", decoded.error());
    out.commit = std::move(*decoded);
  }
  if (auto built = BuildExported(out); !built) return built.error();
  return out;
}

std::optional<codec::Refusal> OverDocumentLimit(const Exported& exported, uint64_t max,
                                                std::string_view setting) {
  uint64_t bytes = 0;
  if (exported.commit) {
    for (const codec::Delta& d : exported.commit->deltas)
      bytes += sync::SlotBytes(d.ref.key, *d.value);
  }
  if (bytes <= max) return std::nullopt;
  return codec::Refusal{codec::Reason::kLimit, "the document is " + std::to_string(bytes) +
                                                   " bytes, over " + std::to_string(max) + " (" +
                                                   std::string(setting) + ")"};
}

codec::Result<std::unique_ptr<sync::Document>> BuildExported(const Exported& exported) {
  auto document = sync::RootFrom(exported.root, static_cast<int>(exported.kind));
  if (!document) return document.error();
  if (exported.commit) {
    if (auto applied = (*document)->Apply(*exported.commit); !applied) {
      return detail::At("export.commit", applied.error());
    }
  }
  return std::move(*document);
}

}  // namespace aweft::node

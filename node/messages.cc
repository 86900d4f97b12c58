#include "node/messages.h"

#include <openssl/sha.h>

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "codec/commit.h"
#include "sync/snapshot.h"
#include "sync/tag.h"

namespace aweft::node {
namespace {

namespace json = boost::json;
using codec::Reason;
using codec::Refusal;

Refusal NotAnAnswer(std::string_view request, std::string_view expected) {
  return Refusal{Reason::kFailed, "the other end answered " + std::string(request) +
                                      " with something else than " + std::string(expected)};
}

// The text at `key` of `object`, or null.
const json::string* TextAt(const json::object* object, std::string_view key) {
  const json::value* value = object ? object->if_contains(key) : nullptr;
  return value ? value->if_string() : nullptr;
}

}  // namespace

json::value ToJson(const HasAsk& ask) { return json::object{{"name", ask.name}}; }

codec::Result<HasAsk> ParseHasAsk(const json::value& args, std::string_view request) {
  const json::string* name = TextAt(args.if_object(), "name");
  if (!name) return Refusal{Reason::kInvalidName, std::string(request) + " takes {\"name\": text}"};
  return HasAsk{std::string(std::string_view(*name))};
}

json::value HasAnswerJson(const std::optional<Held>& held) {
  if (!held) return json::object{{"held", false}};
  return json::object{
      {"held", true}, {"root", codec::IdText(held->root)}, {"kind", codec::KindName(held->kind)}};
}

codec::Result<std::optional<Held>> ParseHasAnswer(const json::value& result) {
  constexpr std::string_view kShape = R"({"held": true, "root": ID, "kind": K} or {"held": false})";
  const json::object* object = result.if_object();
  const json::value* held = object ? object->if_contains("held") : nullptr;
  if (!held || !held->is_bool()) return NotAnAnswer("has", kShape);
  if (!held->get_bool()) return std::optional<Held>();
  const json::string* root = TextAt(object, "root");
  const json::string* kind = TextAt(object, "kind");
  auto id = root ? codec::IdFromText(std::string_view(*root))
                 : codec::Result<codec::Id>(NotAnAnswer("has", kShape));
  auto named = kind ? codec::KindFromName(std::string_view(*kind)) : std::nullopt;
  if (!id || !named) return NotAnAnswer("has", kShape);
  return std::optional<Held>(Held{*id, *named});
}

json::value ToJson(const HelloAsk& ask) {
  json::object out;
  if (ask.id) out["id"] = *ask.id;
  if (ask.peer) out["peer"] = true;
  return out;
}

HelloAsk ParseHelloAsk(const json::value& args) {
  const json::object* object = args.if_object();
  const json::string* id = TextAt(object, "id");
  const json::value* peer = object ? object->if_contains("peer") : nullptr;
  return HelloAsk{id ? std::optional<std::string>(std::string_view(*id)) : std::nullopt,
                  peer && peer->is_bool() && peer->get_bool()};
}

json::value ToJson(const HelloAnswer& answer) {
  json::array ids;
  for (const std::string& id : answer.path) ids.emplace_back(id);
  return json::object{{"path", std::move(ids)}, {"home", answer.home}};
}

codec::Result<HelloAnswer> ParseHelloAnswer(const json::value& result) {
  const json::object* object = result.if_object();
  const json::value* path = object ? object->if_contains("path") : nullptr;
  if (!path || !path->is_array()) return NotAnAnswer("hello", R"({"path": [ids]})");
  HelloAnswer answer;
  for (const json::value& id : path->get_array()) {
    if (!id.is_string()) return NotAnAnswer("hello", R"({"path": [ids]})");
    answer.path.emplace_back(std::string_view(id.get_string()));
  }
  const json::value* home = object->if_contains("home");
  answer.home = !home || !home->is_bool() || home->get_bool();
  return answer;
}

json::value ToJson(const NamesAsk& ask) {
  return json::object{{"after", ask.after}, {"max", ask.limit}};
}

NamesAsk ParseNamesAsk(const json::value& args) {
  const json::object* object = args.if_object();
  NamesAsk ask;
  if (const json::string* after = TextAt(object, "after")) ask.after = std::string_view(*after);
  const json::value* limit = object ? object->if_contains("max") : nullptr;
  if (limit && limit->is_int64()) ask.limit = std::clamp<int64_t>(limit->get_int64(), 1, 1000);
  if (limit && limit->is_uint64()) ask.limit = std::clamp<uint64_t>(limit->get_uint64(), 1, 1000);
  return ask;
}

json::value ToJson(const Listed& listed) {
  json::object entry = HasAnswerJson(listed.held).as_object();
  entry["name"] = listed.name;
  return entry;
}

std::optional<Listed> ParseListed(const json::value& entry) {
  const json::string* name = TextAt(entry.if_object(), "name");
  auto held = ParseHasAnswer(entry);
  if (!name || !held || !*held) return std::nullopt;
  return Listed{std::string(std::string_view(*name)), **held};
}

json::value ToJson(const NamesAnswer& answer) {
  json::array documents;
  for (const Listed& listed : answer.documents) documents.push_back(ToJson(listed));
  return json::object{{"documents", std::move(documents)}, {"more", answer.more}};
}

codec::Result<NamesAnswer> ParseNamesAnswer(const json::value& result) {
  constexpr std::string_view kShape =
      R"({"documents": [{"name": N, "held": true, "root": ID, "kind": K}], "more": bool})";
  const json::object* object = result.if_object();
  const json::value* documents = object ? object->if_contains("documents") : nullptr;
  const json::value* more = object ? object->if_contains("more") : nullptr;
  if (!documents || !documents->is_array() || !more || !more->is_bool()) {
    return NotAnAnswer("names", kShape);
  }
  NamesAnswer answer;
  answer.more = more->get_bool();
  for (const json::value& entry : documents->get_array()) {
    auto listed = ParseListed(entry);
    if (!listed) return NotAnAnswer("names", kShape);
    answer.documents.push_back(std::move(*listed));
  }
  return answer;
}

json::value DigestAnswerJson(const std::optional<std::string>& digest) {
  if (!digest) return json::object{{"shared", false}};
  return json::object{{"shared", true}, {"digest", *digest}};
}

codec::Result<std::optional<std::string>> ParseDigestAnswer(const json::value& result) {
  constexpr std::string_view kShape = R"({"shared": true, "digest": HEX} or {"shared": false})";
  const json::object* object = result.if_object();
  const json::value* shared = object ? object->if_contains("shared") : nullptr;
  if (!shared || !shared->is_bool()) return NotAnAnswer("digest", kShape);
  if (!shared->get_bool()) return std::optional<std::string>();
  const json::string* digest = TextAt(object, "digest");
  if (!digest) return NotAnAnswer("digest", kShape);
  return std::optional<std::string>(std::string_view(*digest));
}

std::string Digest(const sync::Document& document) {
  std::string bytes;
  if (auto state = sync::AsCommit(document)) (void)codec::EncodeCommit(*state, bytes);
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), hash);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 16; ++i) {
    out += kHex[hash[i] >> 4];
    out += kHex[hash[i] & 15];
  }
  return out;
}

std::vector<std::string> ParseTagsAsk(const json::value& args) {
  std::vector<std::string> names;
  const json::object* object = args.if_object();
  const json::value* list = object ? object->if_contains("algorithms") : nullptr;
  if (!list || !list->is_array()) return names;
  for (const json::value& name : list->get_array()) {
    if (name.is_string()) names.emplace_back(std::string_view(name.get_string()));
  }
  return names;
}

json::value TagsAnswerJson(bool agreed) {
  if (!agreed) return json::object{{"algorithm", nullptr}};
  return json::object{{"algorithm", sync::kTagAlgorithm}};
}

void AskTags(sync::Requests& requests, sync::Link& link) {
  json::object args{{"algorithms", json::array{sync::kTagAlgorithm}}};
  requests.Ask("tags", std::move(args), [&link](sync::AskResult answer) {
    const json::object* object = answer ? answer->if_object() : nullptr;
    const json::string* agreed = TextAt(object, "algorithm");
    if (agreed && *agreed == sync::kTagAlgorithm) link.UseTags();
  });
}

std::string_view LevelName(Level level) { return level == Level::kLocal ? "local" : "replicas"; }

json::value DurableAskJson(Level level) {
  if (level == Level::kLocal) return nullptr;  // As every node before levels asks.
  return json::object{{"level", LevelName(level)}};
}

codec::Result<Level> ParseDurableAsk(const json::value& args) {
  const json::object* object = args.if_object();
  const json::value* level = object ? object->if_contains("level") : nullptr;
  if (!level || level->is_null()) return Level::kLocal;
  for (Level known : {Level::kLocal, Level::kReplicas}) {
    if (level->is_string() && level->get_string() == LevelName(known)) return known;
  }
  return Refusal{Reason::kInvalidValue, "durable's level is " + json::serialize(*level) +
                                            R"(. Ask {"level": "local"} or {"level": "replicas"})"};
}

json::value DurableAnswerJson() { return json::object{{"durable", true}}; }

codec::Result<void> ParseDurableAnswer(const json::value& result) {
  const json::object* object = result.if_object();
  const json::value* durable = object ? object->if_contains("durable") : nullptr;
  if (!durable || !durable->is_bool() || !durable->get_bool()) {
    return NotAnAnswer("durable", R"({"durable": true})");
  }
  return {};
}

}  // namespace aweft::node

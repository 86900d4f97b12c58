#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/id.h"
#include "codec/result.h"
#include "codec/value.h"
#include "sync/document.h"
#include "sync/link.h"
#include "sync/requests.h"

// The node's own requests (docs/node.md "Requests"), as types: each is
// written here and read here, and reading never throws. What a peer sent
// that does not have the shape is a Refusal: `invalid-name` for a `has`
// without a name, `failed` for an answer that is not one.
namespace aweft::node {

// has {"name": N}: does the node (or one above it) hold N? Also the
// arguments of digest (`request` names it in the refusal).
struct HasAsk {
  std::string name;
};
boost::json::value ToJson(const HasAsk& ask);
codec::Result<HasAsk> ParseHasAsk(const boost::json::value& args, std::string_view request = "has");

// Its answer: {"held": true, "root": ID, "kind": K} or {"held": false}.
struct Held {
  codec::Id root;
  codec::Kind kind = codec::Kind::kObject;
};
boost::json::value HasAnswerJson(const std::optional<Held>& held);
codec::Result<std::optional<Held>> ParseHasAnswer(const boost::json::value& result);

// names {"after": NAME, "max": N}: the documents a node stores whose
// names sort after NAME (bytewise), at most N (1 to 1000; default 1000),
// that the asker may read. Peers ask it to catch up (docs/node.md "Peers").
struct NamesAsk {
  std::string after;
  uint64_t limit = 1000;
};
boost::json::value ToJson(const NamesAsk& ask);
NamesAsk ParseNamesAsk(const boost::json::value& args);

// Its answer: {"documents": [{"name": N, "held": true, "root": ID, "kind":
// K}], "more": bool}, `more` when a later page may hold more.
struct Listed {
  std::string name;
  Held held;
};
// One of them: {"name": N, "held": true, "root": ID, "kind": K}; also the
// arguments of keep (its home asks each peer that keeps a document to
// bring it in now, answered {}). Nullopt when it is not one.
boost::json::value ToJson(const Listed& listed);
std::optional<Listed> ParseListed(const boost::json::value& entry);
struct NamesAnswer {
  std::vector<Listed> documents;
  bool more = false;
};
boost::json::value ToJson(const NamesAnswer& answer);
codec::Result<NamesAnswer> ParseNamesAnswer(const boost::json::value& result);

// hello {"id": NODE, "peer": true}: a node says who it is (the id may be
// absent), and whether it dials as a peer of a cluster (then no cycle is
// looked for: placement keeps a document's links from making one).
struct HelloAsk {
  std::optional<std::string> id;
  bool peer = false;
};
boost::json::value ToJson(const HelloAsk& ask);
HelloAsk ParseHelloAsk(const boost::json::value& args);

// Its answer: {"path": [ids], "home": bool}, the answering node and the
// nodes above it, and whether it takes its place as home of documents yet
// (false while a peer catches up; absent means true).
struct HelloAnswer {
  std::vector<std::string> path;
  bool home = true;
};
boost::json::value ToJson(const HelloAnswer& answer);
codec::Result<HelloAnswer> ParseHelloAnswer(const boost::json::value& result);

// digest {"name": N}: the digest of N as this link shares it, answered
// {"shared": true, "digest": HEX} or {"shared": false} (not shared on this
// link), once every frame sent before it has left.
boost::json::value DigestAnswerJson(const std::optional<std::string>& digest);
codec::Result<std::optional<std::string>> ParseDigestAnswer(const boost::json::value& result);

// A document's digest: the first 16 bytes of SHA-256 over the canonical
// encoding of its state as one commit (sync::AsCommit; no bytes for an
// empty document), in lowercase hex. Equal states, equal digests.
std::string Digest(const sync::Document& document);

// tags {"algorithms": [names]}: the integrity tags (sync/tag.h) the asker
// makes and checks; answered {"algorithm": NAME}, the one both ends use on
// the link from then on, or {"algorithm": null}. Names that are not text
// are passed over.
std::vector<std::string> ParseTagsAsk(const boost::json::value& args);
boost::json::value TagsAnswerJson(bool agreed);
// Asks `tags` on `requests` and, once the other end agrees, turns tags on
// for `link`. `requests` must be destroyed before `link` (it drops the
// answer then).
void AskTags(sync::Requests& requests, sync::Link& link);

// durable {"level": L}: {"durable": true} once all sent before is stored
// at that level (docs/node.md "Requests"): `local`, this node's disk and
// the upstream's that orders each document (no arguments: local);
// `replicas`, also a majority of the cluster.replicas peers that keep it.
enum class Level { kLocal, kReplicas };
std::string_view LevelName(Level level);
boost::json::value DurableAskJson(Level level);
codec::Result<Level> ParseDurableAsk(const boost::json::value& args);
boost::json::value DurableAnswerJson();
codec::Result<void> ParseDurableAnswer(const boost::json::value& result);

}  // namespace aweft::node

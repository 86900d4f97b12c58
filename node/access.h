#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "codec/result.h"
#include "node/config.h"
#include "sync/channel.h"

namespace aweft::node {

// True when a pattern of `patterns` matches `name` (NameMatches).
bool AnyMatches(const std::vector<std::string>& patterns, std::string_view name);

// True for a host only this machine reaches: localhost, 127.x, ::1.
bool Loopback(const std::string& host);

// Who may use the node's links and for what (docs/node.md "Auth"): the
// configured tokens and the names each may read or write, and how many
// connections each address has open. Authenticate and the rights are
// const; Arrive and Leave may be called from any thread.
class Access {
 public:
  Access(const std::vector<Token>& tokens, const std::vector<std::string>& origins,
         uint64_t max_per_address);

  // The token a connection presented (Authorization: Bearer, or ?token=);
  // null when no tokens are configured. Refuses `forbidden` when tokens are
  // configured and none matches.
  codec::Result<const Token*> Authenticate(const sync::TextChannel::Handshake& handshake) const;
  // Refuses `forbidden` a page in a browser (an Origin header) that
  // allowed_origins does not name; with none named, any page when tokens
  // are configured and none when not (docs/node.md "Browsers").
  codec::Result<void> CheckOrigin(const sync::TextChannel::Handshake& handshake) const;
  // What `token` (null: no tokens configured) may do with `name`.
  static bool CanRead(const Token* token, std::string_view name);
  static bool CanWrite(const Token* token, std::string_view name);

  // Counts a connection from `remote` ("address:port"); refuses `limit`
  // past limits.max_connections_per_address. Counted either way: each
  // Arrive is matched by one Leave.
  codec::Result<void> Arrive(const std::string& remote);
  void Leave(const std::string& remote);

 private:
  const std::vector<Token>& tokens_;
  const std::vector<std::string>& origins_;
  const uint64_t max_per_address_;
  std::mutex mutex_;
  std::map<std::string, uint64_t, std::less<>> per_address_;  // Guarded by mutex_.
};

}  // namespace aweft::node

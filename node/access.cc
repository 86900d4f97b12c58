#include "node/access.h"

#include <boost/algorithm/string/predicate.hpp>
#include <boost/url/parse_query.hpp>

#include "admin/secret.h"

namespace aweft::node {
namespace {

using codec::Reason;
using codec::Refusal;

std::string_view AddressOf(std::string_view remote) { return remote.substr(0, remote.rfind(':')); }

// The value of `?token=` in a request target, decoded; empty when none.
std::string QueryToken(std::string_view target) {
  const size_t query = target.find('?');
  if (query == std::string_view::npos) return {};
  auto params = boost::urls::parse_query(target.substr(query + 1));
  if (!params) return {};
  for (const auto& param : *params) {
    if (param.key == "token") return param.value.decode();
  }
  return {};
}

}  // namespace

bool AnyMatches(const std::vector<std::string>& patterns, std::string_view name) {
  for (const auto& pattern : patterns) {
    if (NameMatches(pattern, name)) return true;
  }
  return false;
}

bool Loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

Access::Access(const std::vector<Token>& tokens, const std::vector<std::string>& origins,
               uint64_t max_per_address)
    : tokens_(tokens), origins_(origins), max_per_address_(max_per_address) {}

codec::Result<const Token*> Access::Authenticate(
    const sync::TextChannel::Handshake& handshake) const {
  if (tokens_.empty()) return static_cast<const Token*>(nullptr);
  const std::string query_token = QueryToken(handshake.target);
  const std::string_view bearer = admin::BearerToken(handshake.authorization, query_token);
  for (const Token& token : tokens_) {
    if (admin::SameSecret(bearer, token.secret)) return &token;
  }
  return Refusal{Reason::kForbidden,
                 "a valid bearer token is needed (Authorization header or ?token=)"};
}

codec::Result<void> Access::CheckOrigin(const sync::TextChannel::Handshake& handshake) const {
  const std::string& origin = handshake.origin;
  if (origin.empty()) return {};  // Not a browser: nothing to check.
  auto named = [&](const std::string& o) { return o == "*" || boost::iequals(o, origin); };
  if (origins_.empty() ? !tokens_.empty() : std::any_of(origins_.begin(), origins_.end(), named)) {
    return {};
  }
  return Refusal{Reason::kForbidden, "a page from \"" + origin +
                                         "\" may not open links here; allowed_origins names "
                                         "the pages that may"};
}

bool Access::CanRead(const Token* token, std::string_view name) {
  return !token || AnyMatches(token->read, name) || AnyMatches(token->write, name);
}

bool Access::CanWrite(const Token* token, std::string_view name) {
  return !token || AnyMatches(token->write, name);
}

codec::Result<void> Access::Arrive(const std::string& remote) {
  const std::string_view address = AddressOf(remote);
  uint64_t open;
  {
    std::lock_guard lock(mutex_);
    auto it = per_address_.find(address);
    if (it == per_address_.end()) it = per_address_.emplace(std::string(address), 0).first;
    open = ++it->second;
  }
  if (open <= max_per_address_) return {};
  return Refusal{Reason::kLimit, std::to_string(max_per_address_) + " connections from " +
                                     std::string(address) +
                                     " are open already (limits.max_connections_per_address)"};
}

void Access::Leave(const std::string& remote) {
  std::lock_guard lock(mutex_);
  auto it = per_address_.find(AddressOf(remote));
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
}

}  // namespace aweft::node

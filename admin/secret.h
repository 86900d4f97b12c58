#pragma once

#include <string_view>

// Secrets as both the admin endpoint and the node's links take them.
namespace aweft::admin {

// True when `given` equals the configured `secret` (never an empty one), in
// time that depends only on the lengths (OpenSSL's CRYPTO_memcmp).
bool SameSecret(std::string_view given, std::string_view secret);

// The token a request presents: the Authorization header's `Bearer TOKEN`,
// else `query_token` (from ?token=), else empty.
std::string_view BearerToken(std::string_view authorization, std::string_view query_token);

}  // namespace aweft::admin

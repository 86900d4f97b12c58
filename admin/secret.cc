#include "admin/secret.h"

#include <openssl/crypto.h>

namespace aweft::admin {

bool SameSecret(std::string_view given, std::string_view secret) {
  return !secret.empty() && given.size() == secret.size() &&
         CRYPTO_memcmp(given.data(), secret.data(), secret.size()) == 0;
}

std::string_view BearerToken(std::string_view authorization, std::string_view query_token) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.starts_with(kBearer)) return authorization.substr(kBearer.size());
  return query_token;
}

}  // namespace aweft::admin

#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "codec/refusal.h"
#include "codec/result.h"

// Error answers of the admin endpoint: JSON {reason, message, fix} with an
// HTTP status (docs/admin.md, "Errors").
namespace aweft::admin {

// The endpoint's own reasons, beside the codec's (no-document, truncated,
// invalid-name, corrupt, ...). ReasonName() is the one place each is spelled.
enum class Why {
  kUnauthorized,   // 401: no token given, and one is configured.
  kForbidden,      // 403: a token that is not the admin token.
  kNoRoute,        // 404: no such path.
  kMethod,         // 405: the path exists, not with this method.
  kBadParameter,   // 400: a query parameter or body that does not parse.
  kUnconfirmed,    // 400: DELETE without ?confirm=NAME.
  kExists,         // 409: import over a document that exists.
  kInUse,          // 409: delete of a document a link shares now.
  kTooLarge,       // 413: a request body over the limit.
  kNotReady,       // 503: /ready while a check fails.
  kUnknownHost,    // 421: a Host header naming none of the endpoint's names.
  kSimpleRequest,  // 415: a POST a page could send cross-site (no token, not JSON).
};

std::string_view ReasonName(Why why);

// One error answer.
struct Problem {
  int status = 500;
  std::string reason;
  std::string message;  // The detail, without the reason or the fix.
  std::string fix;      // One sentence saying what to do.

  boost::json::value ToJson() const;
};

Problem MakeProblem(Why why, std::string message);
// A codec refusal keeps its reason and fix; the status follows the reason
// (no-document 404, truncated 410, corrupt 500, forbidden 403, else 400).
Problem MakeProblem(const codec::Refusal& refusal);
// The same with a status of the caller's choosing (a decode reason such as
// truncated in a request body is the client's fault: 400).
Problem MakeProblem(const codec::Refusal& refusal, int status);

// What a route answers: a JSON body, or a Problem (a codec refusal becomes
// one by MakeProblem).
class [[nodiscard]] Answer : public codec::Result<boost::json::value, Problem> {
 public:
  using Result::Result;
  Answer(const codec::Refusal& refusal) : Result(MakeProblem(refusal)) {}  // NOLINT
};

}  // namespace aweft::admin

#include "admin/problem.h"

#include <boost/json/object.hpp>

namespace aweft::admin {
namespace {

struct Spelling {
  int status;
  std::string_view reason;
  std::string_view fix;
};

Spelling Spell(Why why) {
  switch (why) {
    case Why::kUnauthorized:
      return {401, "unauthorized",
              "Send the admin token as 'Authorization: Bearer TOKEN' (or ?token=TOKEN)."};
    case Why::kForbidden:
      return {403, codec::Name(codec::Reason::kForbidden),
              "Use the node's admin_token; link tokens do not open the admin "
              "endpoint."};
    case Why::kNoRoute:
      return {404, "no-route", "See docs/admin.md for the routes."};
    case Why::kMethod:
      return {405, "method-not-allowed", "Use a method the Allow header lists."};
    case Why::kBadParameter:
      return {400, "bad-parameter", "Correct the parameter as docs/admin.md describes it."};
    case Why::kUnconfirmed:
      return {400, "unconfirmed", "Repeat the document's name as ?confirm=NAME to delete it."};
    case Why::kExists:
      return {409, "exists", "Import under another name, or delete the document first."};
    case Why::kInUse:
      return {409, "in-use",
              "Wait until no link shares the document (see /v1/links), then "
              "retry."};
    case Why::kTooLarge:
      return {413, "too-large", "Send a smaller body."};
    case Why::kNotReady:
      return {503, "not-ready", "Wait, or see which check fails and why."};
    case Why::kUnknownHost:
      return {421, "unknown-host",
              "Reach the admin endpoint by IP address or localhost, or add this name to "
              "admin_hosts."};
    case Why::kSimpleRequest:
      return {415, "unsupported-media-type",
              "Send 'Content-Type: application/json', or configure admin_token and send it."};
  }
  return {500, "internal", "Report this as a bug."};
}

int StatusOf(codec::Reason reason) {
  switch (reason) {
    case codec::Reason::kNoDocument:
      return 404;
    case codec::Reason::kTruncated:
      return 410;
    case codec::Reason::kCorrupt:
      return 500;
    case codec::Reason::kForbidden:
      return 403;
    case codec::Reason::kLimit:
      return 429;
    case codec::Reason::kUnavailable:
      return 503;
    default:
      return 400;
  }
}

}  // namespace

std::string_view ReasonName(Why why) { return Spell(why).reason; }

boost::json::value Problem::ToJson() const {
  return boost::json::object{{"reason", reason}, {"message", message}, {"fix", fix}};
}

Problem MakeProblem(Why why, std::string message) {
  const Spelling spelling = Spell(why);
  return {spelling.status, std::string(spelling.reason), std::move(message),
          std::string(spelling.fix)};
}

Problem MakeProblem(const codec::Refusal& refusal) {
  // The codec's fix for no-document speaks of links; here a name was typed.
  const std::string fix = refusal.reason == codec::Reason::kNoDocument
                              ? "Check the name; GET /v1/documents lists the documents held."
                              : std::string(codec::Fix(refusal.reason));
  return {StatusOf(refusal.reason), std::string(codec::Name(refusal.reason)), refusal.message, fix};
}

Problem MakeProblem(const codec::Refusal& refusal, int status) {
  Problem problem = MakeProblem(refusal);
  problem.status = status;
  return problem;
}

}  // namespace aweft::admin

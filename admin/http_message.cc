#include "admin/detail/http_message.h"

#include <string>

namespace aweft::admin::detail {

void Bound(RequestParser& parser, size_t max_body) {
  parser.header_limit(64 << 10);
  parser.body_limit(max_body);
}

Request FromBeast(const BeastRequest& in) {
  return {std::string(in.method_string()),
          std::string(in.target()),
          std::string(in[http::field::authorization]),
          in.body(),
          std::string(in[http::field::host]),
          std::string(in[http::field::content_type])};
}

BeastResponse ToBeast(Response out, unsigned version, bool head) {
  BeastResponse response{static_cast<http::status>(out.status), version};
  response.set(http::field::server, "aweft-node");
  response.set(http::field::content_type, out.content_type);
  for (const auto& [name, value] : out.headers) response.set(name, value);
  response.body() = std::move(out.body);
  response.prepare_payload();
  if (head) response.body().clear();  // Content-Length stays that of the GET.
  return response;
}

Response TooLarge(size_t max_body) {
  return ProblemResponse(
      MakeProblem(Why::kTooLarge, "the body is over " + std::to_string(max_body) + " bytes"));
}

}  // namespace aweft::admin::detail

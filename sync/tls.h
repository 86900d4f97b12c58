#pragma once

#include <memory>
#include <stdexcept>
#include <string>

namespace boost::asio::ssl {
class context;
}

// TLS settings for the WebSocket channels and the admin endpoint (OpenSSL
// through Boost.Asio). A context is made once and shared by every
// connection that uses it.
namespace aweft::sync {

// A certificate or key that cannot be read or used; what() says which file
// and why, and how to fix it.
class TlsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// For accepting: the certificate chain and the private key, both PEM
// files. Throws TlsError when either cannot be read or they do not match.
std::shared_ptr<boost::asio::ssl::context> ServerTls(const std::string& cert_file,
                                                     const std::string& key_file);

// For dialing: verifies the peer's certificate against `ca_file` (PEM), or
// the system's store when it is empty (OpenSSL honours SSL_CERT_FILE).
// Throws TlsError when `ca_file` cannot be read.
std::shared_ptr<boost::asio::ssl::context> ClientTls(const std::string& ca_file);

}  // namespace aweft::sync

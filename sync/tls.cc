#include "sync/tls.h"

#include <boost/asio/ssl/context.hpp>

namespace aweft::sync {
namespace {

namespace ssl = boost::asio::ssl;

// TLS 1.2 and later only.
std::shared_ptr<ssl::context> Context(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  return context;
}

}  // namespace

std::shared_ptr<ssl::context> ServerTls(const std::string& cert_file, const std::string& key_file) {
  auto context = Context(ssl::context::tls_server);
  boost::system::error_code ec;
  context->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    throw TlsError("tls: cannot use certificate " + cert_file + ": " + ec.message() +
                   ". Give tls.cert_file a PEM certificate chain");
  }
  context->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    throw TlsError("tls: cannot use private key " + key_file + " with " + cert_file + ": " +
                   ec.message() + ". Give tls.key_file the PEM key of that certificate");
  }
  return context;
}

std::shared_ptr<ssl::context> ClientTls(const std::string& ca_file) {
  auto context = Context(ssl::context::tls_client);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    context->set_default_verify_paths(ec);
  } else {
    context->load_verify_file(ca_file, ec);
  }
  if (ec) {
    throw TlsError("tls: cannot load the certificates to trust from " +
                   (ca_file.empty() ? std::string("the system's store") : ca_file) + ": " +
                   ec.message() + ". Give tls.ca_file a PEM file of trusted certificates");
  }
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

}  // namespace aweft::sync

#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <string>

// What every listener of the project does the same way (the WebSocket and
// TCP listeners, the admin endpoint): bind a port, and accept on it.
namespace aweft::sync {

// An acceptor listening on `address`:`port` (0 picks a port). `address` is
// an IPv4 or IPv6 address, bracketed or not, or "localhost" (127.0.0.1).
// Throws boost::system::system_error when it cannot (an address in use, one
// this machine does not have).
boost::asio::ip::tcp::acceptor Listen(boost::asio::any_io_executor executor,
                                      const std::string& address, uint16_t port);

// Starts accepting connections on `acceptor`, on its executor, handing
// each socket to `take` there, until `stopped()` says so (asked after each
// accept: a socket accepted as the listener stops is dropped) or the
// acceptor is closed. A failed accept does not end it. Out of descriptors
// (EMFILE, ENFILE), it lets go of a spare one it keeps, accepts and closes
// the connections waiting, so they are told at once rather than left
// hanging, and takes the spare back; any other failure, or no spare, and it
// waits 100 ms and tries again, rather than spin. `shed`, when set, is told
// how many it closed unserved. `acceptor` must outlive the loop: let `take`
// hold what owns it.
void AcceptLoop(boost::asio::ip::tcp::acceptor& acceptor, std::function<bool()> stopped,
                std::function<void(boost::asio::ip::tcp::socket)> take,
                std::function<void(size_t)> shed = {});

}  // namespace aweft::sync

// aweft-node: the replication node. Not built yet; this placeholder says so
// rather than pretending to serve.

#include <cstdlib>
#include <iostream>

int main() {
  std::cout << "aweft-node " AWEFT_VERSION
               ": the replication node is not implemented yet; this build "
               "ships the codec and aweftctl\n";
  return EXIT_SUCCESS;
}

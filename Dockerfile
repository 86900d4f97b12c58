# aweft-node in a container: built on Debian 12 with the project's own scripts
# (scripts/deps.sh, scripts/build.sh), run from Debian 12 slim with only the
# libraries it loads (tests/docker/runtime_libraries.sh checks that list
# against ldd of the built binaries).
#   docker build -t aweft-node .
#   docker run -p 7420:7420 -v aweft-data:/var/lib/aweft aweft-node \
#     --set 'tokens=[{token="a-long-random-secret", write=["*"]}]'
# It listens on 0.0.0.0:7420, which requires [[tokens]] (docs/node.md, "Auth"):
# without one it exits 2 saying so. Arguments are aweft-node flags.
# docker-compose.yml runs three of these as the peers of one cluster.
FROM debian:12 AS build
WORKDIR /src
COPY scripts/deps.sh scripts/
RUN scripts/deps.sh run && rm -rf /var/lib/apt/lists/*
COPY . .
RUN AWEFT_BUILD_DIR=/build scripts/build.sh -DAWEFT_TESTS=OFF -DAWEFT_BENCHMARKS=OFF \
 && cmake --install /build --prefix /opt/aweft --strip

FROM debian:12-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libboost-json1.81.0 libboost-program-options1.81.0 libboost-url1.81.0 libbz2-1.0 libfmt9 \
      liblz4-1 libsnappy1v5 libspdlog1.10 libssl3 libtomlplusplus3 libzstd1 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/aweft/bin/aweft-node /opt/aweft/bin/aweftctl /usr/local/bin/
RUN useradd --system --home-dir /var/lib/aweft aweft \
 && mkdir -p /var/lib/aweft && chown aweft:aweft /var/lib/aweft
USER aweft
VOLUME /var/lib/aweft
EXPOSE 7420
# SIGTERM (docker stop) syncs the store and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["aweft-node", "--data", "/var/lib/aweft", "--listen", "0.0.0.0:7420"]

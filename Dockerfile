# syntax=docker/dockerfile:1
#
# turnout's container image: built with the Rust toolchain, run on distroless (glibc and
# CA certificates, no shell, no package manager) as a non-root user; nothing is written to the
# root filesystem, so it runs with --read-only (Kubernetes: readOnlyRootFilesystem: true).
#
#   docker build -t turnout:0.1.0 .
#   openssl rand -hex 32 > token
#   docker run --rm --read-only -p 8080:8080 \
#     -v "$PWD/token:/run/secrets/turnout/token:ro" turnout:0.1.0
#
# The shipped rule pack is baked in at /etc/turnout/rules; mount a directory (or, on
# Kubernetes, a ConfigMap) over it to serve other rules, watched and applied live. The service
# listens on 0.0.0.0:8080 and requires the bearer token read from /run/secrets/turnout/token
# on /v1/* and /metrics. Probes, open without the token: GET /healthz (alive) and GET /readyz
# (200 "ready VERSION" once a valid ruleset is loaded). There is no HEALTHCHECK: the image has
# no shell or HTTP client to run one, and Kubernetes uses its own probes
# (deploy/kubernetes/deployment.yaml).

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# Only what the binary is built from (see .dockerignore); benches/ because Cargo.toml names them.
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY assets assets
COPY benches benches
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin turnout \
    && install -D -m 0755 target/release/turnout /out/turnout

# Debian 12, as the build stage: the same glibc. The :nonroot tag runs as uid 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/turnout /usr/local/bin/turnout
COPY rules /etc/turnout/rules
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/turnout", "serve", "--listen", "0.0.0.0:8080", "--rules", "/etc/turnout/rules", "--token-file", "/run/secrets/turnout/token"]

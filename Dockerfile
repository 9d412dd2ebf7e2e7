# The server in a small image: built in a Rust image, run in Debian slim.
#   docker build -t mahjong-server .
#   docker run -p 8080:8080 -v mahjong:/var/lib/mahjong mahjong-server
# Without DATABASE_URL it keeps its games in SQLite on the volume; see
# docker-compose.yml for Postgres.

FROM rust:1.95-bookworm AS build
WORKDIR /src
# No debug information in the image's binary (the release profile keeps some
# for profiling).
ENV CARGO_PROFILE_RELEASE_DEBUG=0
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY crates crates
COPY migrations migrations
COPY benches benches
RUN cargo build --release --locked --bin mahjong-server

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /var/lib/mahjong mahjong
COPY --from=build /src/target/release/mahjong-server /usr/local/bin/mahjong-server
USER mahjong
WORKDIR /var/lib/mahjong
ENV MAHJONG_LISTEN=0.0.0.0:8080 \
    DATABASE_URL=sqlite:///var/lib/mahjong/mahjong.db \
    RUST_LOG=info
EXPOSE 8080
VOLUME ["/var/lib/mahjong"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
# SIGTERM (docker stop) shuts the server down gracefully; unfinished games
# resume when it starts again.
ENTRYPOINT ["mahjong-server"]
CMD ["serve"]

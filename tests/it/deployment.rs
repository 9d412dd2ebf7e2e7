//! The Dockerfile and docker-compose.yml cannot be run here (no Docker
//! engine), so what can be checked without one is checked: every setting
//! they pass is one the server reads, with a value it accepts, and the image
//! is built from every file the build needs.

use std::collections::BTreeSet;

use clap::Args;
use mahjong_server::serve::ServeArgs;

fn read(name: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
}

/// The environment variables `serve` reads (each flag's fallback), and the log filter.
fn known_variables() -> BTreeSet<String> {
    let command = ServeArgs::augment_args(clap::Command::new("serve"));
    let mut names: BTreeSet<String> =
        command.get_arguments().filter_map(|a| a.get_env()).map(|e| e.to_string_lossy().into_owned()).collect();
    names.insert("RUST_LOG".into());
    names
}

/// `NAME=value` and `NAME: value` settings of the server in a file.
fn settings(text: &str, names: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches("ENV ").trim_end_matches('\\').trim();
        // `NAME=value` (Dockerfile) or `NAME: value` (compose): whichever comes first.
        if let Some(at) = line.find(['=', ':']) {
            let (name, value) = (line[..at].trim(), line[at + 1..].trim());
            if names(name) && !name.contains(' ') {
                out.push((name.to_string(), value.trim_matches('"').to_string()));
            }
        }
    }
    out
}

fn is_server_variable(name: &str) -> bool {
    name.starts_with("MAHJONG_") || name == "DATABASE_URL" || name == "RUST_LOG"
}

#[test]
fn the_image_and_the_compose_file_set_only_settings_the_server_reads() {
    let known = known_variables();
    assert!(known.contains("DATABASE_URL") && known.contains("MAHJONG_LISTEN"), "{known:?}");
    for file in ["Dockerfile", "docker-compose.yml"] {
        let found = settings(&read(file), is_server_variable);
        assert!(found.iter().any(|(n, _)| n == "DATABASE_URL"), "{file} names the database");
        for (name, value) in found {
            assert!(known.contains(&name), "{file} sets {name}, which the server does not read");
            // The values must be ones `serve` accepts.
            let args = match name.as_str() {
                "MAHJONG_LISTEN" => vec!["--listen".to_string(), value.clone()],
                "MAHJONG_PRESET" => vec!["--preset".to_string(), value.clone()],
                "MAHJONG_TRUSTED_PROXY" => vec!["--trusted-proxy".to_string(), value.clone()],
                "MAHJONG_WAIT_FOR_SERVICES" => vec!["--wait-for-services".to_string(), value.clone()],
                "MAHJONG_CLASSIC_LISTEN" => vec!["--classic-listen".to_string(), value.clone()],
                "DATABASE_URL" => {
                    let scheme = if file == "Dockerfile" { "sqlite://" } else { "postgres://" };
                    assert!(value.starts_with(scheme), "{file}: DATABASE_URL {value} should start with {scheme}");
                    vec!["--database".to_string(), value.clone()]
                }
                _ => continue,
            };
            let command = ServeArgs::augment_args(clap::Command::new("serve").no_binary_name(true));
            command.try_get_matches_from(&args).unwrap_or_else(|e| panic!("{file}: {name}={value}: {e}"));
            if name == "MAHJONG_PRESET" {
                mahjong::rules::presets::preset(&value).unwrap_or_else(|e| panic!("{file}: {e}"));
            }
        }
    }
}

#[test]
fn the_image_is_built_from_everything_the_build_needs() {
    let dockerfile = read("Dockerfile");
    // Cargo reads the manifest's every target; the store embeds its migrations.
    for needed in ["Cargo.toml", "Cargo.lock", "src", "migrations", "benches"] {
        assert!(
            dockerfile.lines().any(|l| l.starts_with("COPY") && l.split_whitespace().any(|w| w == needed)),
            "the Dockerfile does not copy {needed}"
        );
    }
    // The serve listens where the healthcheck and the published port look.
    assert!(dockerfile.contains("MAHJONG_LISTEN=0.0.0.0:8080") && dockerfile.contains("EXPOSE 8080"));
    assert!(dockerfile.contains("http://127.0.0.1:8080/healthz"));
    let compose = read("docker-compose.yml");
    assert!(compose.contains("\"8080:8080\"") && compose.contains("condition: service_healthy"));
    // Only the nodes get into NATS: it asks for a password, which they give.
    assert!(compose.contains("authorization {") && compose.contains("password: $$NATS_PASSWORD"), "{compose}");
    assert!(compose.contains("MAHJONG_NATS_USER: mahjong") && compose.contains("MAHJONG_NATS_PASSWORD:"));
    assert!(!compose.contains("4222:4222"), "NATS is published nowhere");
    // Any password works: Postgres's is passed apart (PGPASSWORD, which sqlx
    // reads), NATS's as its own variable; the nodes start once both are healthy,
    // and wait for them besides.
    let urls = settings(&compose, |n| n == "DATABASE_URL");
    assert!(urls.iter().all(|(_, url)| !url.contains(":${")), "no password in DATABASE_URL: {urls:?}");
    assert!(compose.contains("PGPASSWORD: ${POSTGRES_PASSWORD"), "{compose}");
    assert!(compose.contains("8222/healthz") && !compose.contains("condition: service_started"), "{compose}");
    assert!(compose.contains("MAHJONG_WAIT_FOR_SERVICES"));
    // The classic port: published by each node (Caddy carries HTTP only).
    for port in ["5001:5000", "5002:5000", "5003:5000"] {
        assert!(compose.contains(&format!("\"{port}\"")), "the classic port {port}");
    }
    // The nodes believe the client's address from Caddy alone, at its fixed address.
    let trusted = settings(&compose, |n| n == "MAHJONG_TRUSTED_PROXY");
    assert!(!trusted.is_empty(), "the nodes trust the proxy's X-Forwarded-For");
    for (_, proxy) in trusted {
        assert!(compose.contains(&format!("ipv4_address: {proxy}")), "the proxy is at {proxy}");
    }
}

//! Requests are traced (one `answered` line per request, in a span with the
//! method, the path and the client's address, the one a trusted proxy
//! forwards) without their query strings, headers or tokens, through a real
//! server on a random port.

use crate::common;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mahjong_tools::client::{Answer, http, http_raw};
use serde_json::json;
use tokio::net::TcpListener;

/// A server storing its games in a scratch database, behind a proxy at
/// 127.0.0.1 that it trusts.
async fn server() -> SocketAddr {
    use mahjong::http::forwarded::{AddressHeader, TrustedProxies};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = mahjong::store::Store::open("sqlite::memory:").await.unwrap();
    let proxy = TrustedProxies::new(vec!["127.0.0.1/32".parse().unwrap()], AddressHeader::XForwardedFor);
    let serving = mahjong::server::Serving { trusted_proxies: proxy, ..Default::default() };
    let config = mahjong::server::ServerConfig { serving, ..mahjong::server::ServerConfig::new(listener, store) };
    tokio::spawn(common::app::serve(config, std::future::pending()));
    addr
}

async fn get(addr: SocketAddr, target: &str) -> Answer {
    let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    http_raw(addr, request.as_bytes()).await.unwrap()
}

/// A `Write` into a shared buffer, for the logs.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The subscriber is the process's global one, set before any server runs,
/// and this file holds this test alone: a subscriber set for one test while
/// other tests' servers registered their callsites (tracing-core computes a
/// callsite's interest once) lost the request span now and then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_traced_without_tokens() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let addr = server().await;
    let table = http(addr, "POST", "/api/v1/tables", Some(&json!({"name": "Traced"})), None).await.unwrap();
    let id = table.body["id"].as_str().unwrap().to_string();
    let a = http(addr, "POST", &format!("/api/v1/tables/{id}/start"), None, Some("SECRET-BEARER-TOKEN")).await.unwrap();
    assert_eq!(a.status, 401);
    let a = get(addr, &format!("/api/v1/tables/{id}/ws?token=SECRET-QUERY-TOKEN")).await;
    assert_eq!(a.status, 400);
    let a = get(addr, "/api/v1/games?player=SECRET-NAME").await;
    assert_eq!(a.status, 200);
    let forwarded = "GET /api/v1/options HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9, 198.51.100.7\r\n\
                     Connection: close\r\n\r\n";
    assert_eq!(http_raw(addr, forwarded.as_bytes()).await.unwrap().status, 200);
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(!text.contains("SECRET"), "the logs show a token or a query:\n{text}");
    assert!(text.contains(&format!("table opened table={id} name=Traced")), "{text}");
    for (path, status) in [
        ("POST path=/api/v1/tables client=127.0.0.1", 201),
        (&*format!("POST path=/api/v1/tables/{id}/start client=127.0.0.1"), 401),
        ("GET path=/api/v1/games client=127.0.0.1", 200),
        ("GET path=/api/v1/options client=198.51.100.7", 200),
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("request{{method={path}}}")) && l.contains("answered"))
            .unwrap_or_else(|| panic!("no trace of {path}:\n{text}"));
        assert!(line.contains(&format!("status={status}")) && line.contains("latency="), "{line}");
    }
}

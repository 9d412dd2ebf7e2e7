//! The browser client: the files of `src/web/` (an HTML page, its style
//! sheets and plain ES modules), built into the binary and served at `/`.
//! Nothing is bundled or generated: what is in `src/web/` is what the
//! browser gets.
//!
//! Every file is revalidated on each load (`Cache-Control: no-cache` with an
//! `ETag` from its content hash), so a new server version is picked up by the
//! next reload and an unchanged file costs a `304` only; a browser that
//! accepts gzip gets them compressed. The page may load
//! nothing from elsewhere (a Content-Security-Policy says so).

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::AppState;

/// The client's files, from `src/web/` (read from disk in debug builds, so
/// an edit shows on reload; built in with `--release`).
#[derive(rust_embed::RustEmbed)]
#[folder = "src/web/"]
struct Client;

/// What the page may load and connect to: only this server.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
     script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// A route for each of the client's files, and `/` for its page.
pub fn routes() -> Router<AppState> {
    let mut router = Router::new().route("/", get(|h| file(h, "index.html")));
    for path in Client::iter() {
        let path: &'static str = match path {
            std::borrow::Cow::Borrowed(path) => path,
            // Debug builds list the folder at run time.
            std::borrow::Cow::Owned(path) => Box::leak(path.into_boxed_str()),
        };
        router = router.route(&format!("/{path}"), get(move |h| file(h, path)));
    }
    // The client's files are text: gzip makes the first load several times lighter.
    router.layer(tower_http::compression::CompressionLayer::new())
}

/// The paths the client is served at: `/` and each of its files'. They are
/// the page's, not the API's, and are not in the OpenAPI document.
pub fn client_paths() -> Vec<String> {
    std::iter::once("/".to_string()).chain(Client::iter().map(|path| format!("/{path}"))).collect()
}

/// One of the client's files, or `304` when the browser's copy is current.
async fn file(request: HeaderMap, path: &'static str) -> Response {
    let Some(found) = Client::get(path) else {
        return super::ApiError::refused(super::ApiErrorCode::NotFound, "no such file").into_response();
    };
    let etag = format!("\"{}\"", hex(&found.metadata.sha256_hash()[..16]));
    let mut headers = HeaderMap::new();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::ETAG, HeaderValue::from_str(&etag).expect("hex is a header value"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if request.get(header::IF_NONE_MATCH).is_some_and(|sent| sent.as_bytes() == etag.as_bytes()) {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    let mime = found.metadata.mimetype();
    let mime = if mime.starts_with("text/") || mime.ends_with("javascript") {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    };
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_str(&mime).expect("a mime type is a header value"));
    (headers, found.data).into_response()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

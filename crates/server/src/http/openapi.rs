//! The OpenAPI document of the HTTP interface, generated from the code that
//! serves it, and the API reference page.
//!
//! Every route under `/api/v1` is registered through utoipa-axum's
//! [`OpenApiRouter`] with its handler's `#[utoipa::path]`, so a route cannot
//! be served without its description, and the description names the types
//! the handler really reads and writes (their `ToSchema` derives follow
//! their serde attributes). Each module of `http/` gives its routes as
//! `routes() -> OpenApiRouter<AppState>`, merged in `http::api`.
//!
//! Error answers are described by code: a handler lists the codes it may
//! refuse with ([`refusals!`]), each becoming a response for its status
//! whose body's `code` is one of those codes; the codes of the layers a
//! route passes through (its time limit, the body limit, the HTTP parser,
//! a panic) are added where the layers are ([`add_refusals`], [`document`]).
//!
//! The document is committed as `openapi/openapi.json`
//! (`mahjong-server openapi -o openapi/openapi.json` writes it; a test fails
//! while it differs), served at `GET /api/v1/openapi.json`, and shown by
//! Swagger UI at `/api/docs`, whose files are built into the binary.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use utoipa::OpenApi;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, Ref, RefOr, Required};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{ApiErrorCode, AppState, Timeouts};

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/v1/openapi.json";

/// Where the API reference page is served.
pub const DOCS_PATH: &str = "/api/docs";

/// Declares a type whose [`utoipa::IntoResponses`] are the error answers
/// with these codes (of [`ApiErrorCode`]), for a handler's `responses(...)`:
///
/// ```ignore
/// refusals!(
///     /// Why a seat is not taken.
///     SitRefusals: BadRequest, NoSuchTable, SeatTaken
/// );
/// ```
macro_rules! refusals {
    ($(#[$doc:meta])* $name:ident: $($code:ident),+ $(,)?) => {
        $(#[$doc])*
        pub struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<
                String,
                utoipa::openapi::RefOr<utoipa::openapi::response::Response>,
            > {
                $crate::http::openapi::error_responses(&[$($crate::http::ApiErrorCode::$code),+])
            }
        }
    };
}
pub(crate) use refusals;

/// The document's frame: what the API is, its tags, its security schemes
/// and the schemas no route names itself. The paths come from the routes.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "mahjong-server",
        description = "The REST API of the Mah-Jong server: the lobby (tables, seats, robots), the scoring and \
                       settlement calculators, the rule presets and the admins' option management (the defaults of new tables, \
                       custom presets, the audit log), the score queries over the stored games, and game files. Play itself is over \
                       the table's WebSocket (`GET /api/v1/tables/{id}/ws`), whose messages are described in \
                       docs/protocol.md. Every error answer is `{\"error\": {\"code\": ..., \"message\": ...}}`, \
                       with the codes each operation lists."
    ),
    tags(
        (name = "lobby", description = "Tables, seats, robots, the start of a game, and the table's WebSocket"),
        (name = "calculator", description = "The scoring and settlement calculators"),
        (name = "options", description = "The rule presets, which anyone may read; the admins' defaults of new \
                                            tables, custom presets, and the audit log of every admin change"),
        (name = "scores", description = "The score queries over the stored games"),
        (name = "game files", description = "Games exported and loaded as files; mj-server logs imported"),
        (name = "accounts", description = "Accounts and their sessions; the admins' user management"),
        (name = "server", description = "The server itself and this document"),
    ),
    // A hand's replay carries the stream's events, which the store names
    // but does not know.
    components(schemas(crate::protocol::ws::StreamEvent)),
    modifiers(&SecuritySchemes)
)]
pub struct ApiDoc;

/// The ways a request proves who it acts for: a seat's token, or an
/// account's session (as a bearer token, or as the browser's cookie).
struct SecuritySchemes;

impl utoipa::Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut Document) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let bearer = |description: &str| {
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(description.to_string())).build(),
            )
        };
        components.add_security_scheme(
            "seat_token",
            bearer(
                "The seat token `POST /api/v1/tables/{id}/seats` answered: `Authorization: Bearer SEAT_TOKEN`. It \
                 alone acts for the seat.",
            ),
        );
        components.add_security_scheme(
            "account_token",
            bearer(&format!(
                "An account's session token, as `POST /api/v1/auth/login` or `register` answered it: \
                 `Authorization: Bearer {}...`.",
                crate::auth::TOKEN_PREFIX
            )),
        );
        components.add_security_scheme(
            "metrics_token",
            bearer(
                "The server's metrics token, where it was given one (`--metrics-token`): \
                 `Authorization: Bearer TOKEN`.",
            ),
        );
        components.add_security_scheme(
            "session_cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                super::extract::SESSION_COOKIE,
                "The same session as the browser's cookie (HttpOnly, SameSite=Strict), set by login and register. \
                 A request that changes something and is authenticated by the cookie alone must carry the \
                 `X-Requested-With` header.",
            ))),
        );
    }
}

/// The whole document, as the server serves it.
pub fn document() -> Document {
    let (_, mut api) = super::api(Timeouts::default()).split_for_parts();
    // What every route passes through, whatever the route: the HTTP parser
    // and the URI limit (`400`, `414`, `431`), the panic guard (`500`), and
    // the accept loop's cap on connections per address (`429`).
    let everywhere = [
        ApiErrorCode::BadRequest,
        ApiErrorCode::UriTooLong,
        ApiErrorCode::QuotaExceeded,
        ApiErrorCode::HeadersTooLarge,
        ApiErrorCode::Internal,
    ];
    add_refusals(&mut api, &everywhere, |_| true);
    // The body limit, for the operations that read a body.
    add_refusals(&mut api, &[ApiErrorCode::TooLarge], |op| op.request_body.is_some());
    add_error_components(&mut api);
    optional_bodies_may_be_absent(&mut api);
    api
}

/// An optional body (`request_body(content = Option<T>)`) may be left out,
/// when it reads as `{}`; it is never `null`, which is refused like any
/// other value that is not the object. utoipa writes such a body as "`null`
/// or T": it is made T, and not required.
fn optional_bodies_may_be_absent(api: &mut Document) {
    let is_null =
        |s: &RefOr<Schema>| matches!(s, RefOr::T(Schema::Object(o)) if o.schema_type == SchemaType::new(Type::Null));
    for item in api.paths.paths.values_mut() {
        for operation in operations(item) {
            let Some(body) = operation.request_body.as_mut() else { continue };
            if body.required == Some(Required::True) {
                continue;
            }
            for content in body.content.values_mut() {
                if let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema
                    && one_of.items.len() == 2
                    && one_of.items.iter().any(is_null)
                {
                    content.schema = one_of.items.iter().find(|s| !is_null(s)).cloned();
                }
            }
        }
    }
}

/// The document as committed and served: pretty JSON and a final newline.
pub fn document_json() -> String {
    // Our own value always serialises.
    let mut text = document().to_pretty_json().unwrap_or_default();
    text.push('\n');
    text
}

/// This document's own route (under `/api/v1`).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(openapi_json))
}

/// The server's liveness probe (outside `/api/v1`, documented all the same).
pub fn health_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz))
}

/// This OpenAPI document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "get_openapi_document",
    tag = "server",
    responses((status = 200, description = "This document (OpenAPI 3.1)", content_type = "application/json", body = Object))
)]
pub async fn openapi_json() -> impl IntoResponse {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT.get_or_init(document_json).as_str())
}

/// Liveness: `ok` while the server runs.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "server",
    responses((status = 200, description = "The server runs", content_type = "text/plain", body = String, example = "ok"))
)]
pub async fn healthz() -> &'static str {
    "ok"
}

/// The API reference page (Swagger UI, its files built into the binary)
/// at [`DOCS_PATH`], reading the document from [`DOCUMENT_PATH`].
pub fn docs_page<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let ui = utoipa_swagger_ui::SwaggerUi::new(DOCS_PATH).config(utoipa_swagger_ui::Config::new([DOCUMENT_PATH]));
    Router::from(ui)
}

/// The error responses for these codes: one per status, its body's `code`
/// one of the codes of that status. Each is a reference to a response of
/// the document's components, named by its codes ([`document`] adds them).
pub fn error_responses(codes: &[ApiErrorCode]) -> BTreeMap<String, RefOr<Response>> {
    let mut by_status: BTreeMap<u16, Vec<ApiErrorCode>> = BTreeMap::new();
    for &code in codes {
        by_status.entry(code.status().as_u16()).or_default().push(code);
    }
    by_status.into_iter().map(|(status, codes)| (status.to_string(), error_reference(&codes))).collect()
}

/// The codes to add to the operations `which` selects: each operation
/// answers them besides its own.
pub fn add_refusals(api: &mut Document, codes: &[ApiErrorCode], which: impl Fn(&Operation) -> bool) {
    for item in api.paths.paths.values_mut() {
        for operation in operations(item).filter(|op| which(op)) {
            for &code in codes {
                let status = code.status().as_u16().to_string();
                let responses = &mut operation.responses.responses;
                let mut all = match responses.get(&status) {
                    Some(RefOr::Ref(r)) => match codes_of(&r.ref_location) {
                        Some(known) => known,
                        None => continue,
                    },
                    // A response of the handler's own at an error status
                    // (none so far): it is left as it is.
                    Some(RefOr::T(_)) => continue,
                    None => Vec::new(),
                };
                if !all.contains(&code) {
                    all.push(code);
                }
                responses.insert(status, error_reference(&all));
            }
        }
    }
}

/// Puts in the document's components every error response its operations
/// refer to.
fn add_error_components(api: &mut Document) {
    let mut named = BTreeMap::new();
    for item in api.paths.paths.values_mut() {
        for operation in operations(item) {
            for response in operation.responses.responses.values() {
                if let RefOr::Ref(r) = response
                    && let Some(codes) = codes_of(&r.ref_location)
                {
                    let name = r.ref_location.trim_start_matches(RESPONSES).to_string();
                    named.insert(name, error_response(&codes));
                }
            }
        }
    }
    let components = api.components.get_or_insert_with(Default::default);
    for (name, response) in named {
        components.responses.insert(name, response.into());
    }
}

/// Where the components' responses are.
const RESPONSES: &str = "#/components/responses/";

/// A reference to the error response for these codes (all of one status):
/// it is named by its codes, in the order of [`ApiErrorCode::ALL`], joined by
/// `-` (codes are written with `_`).
fn error_reference(codes: &[ApiErrorCode]) -> RefOr<Response> {
    let names: Vec<&str> =
        ApiErrorCode::ALL.into_iter().filter(|c| codes.contains(c)).map(ApiErrorCode::as_str).collect();
    RefOr::Ref(Ref::new(format!("{RESPONSES}{}", names.join("-"))))
}

/// The codes of a reference made by [`error_reference`].
fn codes_of(reference: &str) -> Option<Vec<ApiErrorCode>> {
    let names = reference.strip_prefix(RESPONSES)?;
    names
        .split('-')
        .map(|name| ApiErrorCode::ALL.into_iter().find(|c| c.as_str() == name))
        .collect::<Option<Vec<_>>>()
        .map(|codes| ApiErrorCode::ALL.into_iter().filter(|c| codes.contains(c)).collect())
}

/// The error response for these codes: what they mean, and the body with
/// one of them.
fn error_response(codes: &[ApiErrorCode]) -> Response {
    let lines: Vec<String> = codes.iter().map(|c| format!("- `{}`: {}", c.as_str(), c.meaning())).collect();
    let what = if codes.iter().any(|c| c.status().is_server_error()) { "Failed" } else { "Refused" };
    let string = || ObjectBuilder::new().schema_type(SchemaType::new(Type::String));
    let detail = ObjectBuilder::new()
        .property(
            "code",
            string().enum_values(Some(codes.iter().map(|c| c.as_str()))).description(Some("The stable code")),
        )
        .property("message", string().description(Some("Why, in words")))
        .required("code")
        .required("message");
    let body = ObjectBuilder::new().property("error", detail).required("error");
    let response = ResponseBuilder::new()
        .description(format!("{what}:\n\n{}", lines.join("\n")))
        .content("application/json", ContentBuilder::new().schema(Some(body)).build());
    // The codes that say when to ask again (`recovering` alongside
    // `store_unavailable`, which does not: the header is optional).
    let says_when = |c: ApiErrorCode| matches!(c, ApiErrorCode::TooManyRequests | ApiErrorCode::QuotaExceeded);
    if codes.iter().any(|&c| says_when(c) || c.retry_after().is_some()) {
        let seconds = ObjectBuilder::new().schema_type(SchemaType::new(Type::Integer)).minimum(Some(1));
        let header =
            HeaderBuilder::new().schema(seconds).description(Some("Whole seconds to wait before trying again"));
        return response.header("retry-after", header.build()).build();
    }
    response.build()
}

/// Every operation of a path.
fn operations(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An operation's error responses: one per status, each with exactly
    /// its codes, and the layers' codes added once.
    #[test]
    fn refusals_are_grouped_by_status_and_merged() {
        let responses =
            error_responses(&[ApiErrorCode::NoSuchTable, ApiErrorCode::BadRequest, ApiErrorCode::NoSuchGame]);
        assert_eq!(responses.keys().collect::<Vec<_>>(), ["400", "404"]);
        let codes = |r: &RefOr<Response>| match r {
            RefOr::Ref(r) => codes_of(&r.ref_location),
            RefOr::T(_) => None,
        };
        assert_eq!(codes(&responses["404"]), Some(vec![ApiErrorCode::NoSuchTable, ApiErrorCode::NoSuchGame]));

        let api = document();
        let get = api.paths.paths["/api/v1/tables/{id}"].get.as_ref().expect("GET /api/v1/tables/{id}");
        assert_eq!(codes(&get.responses.responses["400"]), Some(vec![ApiErrorCode::BadRequest]));
        assert_eq!(codes(&get.responses.responses["408"]), Some(vec![ApiErrorCode::Timeout]));
        let components = api.components.as_ref().expect("components");
        assert!(components.responses.contains_key("no_such_table"), "every response referred to is there");
        assert!(!get.responses.responses.contains_key("413"), "a GET reads no body");
        let ws = api.paths.paths["/api/v1/tables/{id}/ws"].get.as_ref().expect("the WebSocket's route");
        assert!(!ws.responses.responses.contains_key("408"), "the WebSocket has no time limit");
        let post = api.paths.paths["/api/v1/tables"].post.as_ref().expect("POST /api/v1/tables");
        assert!(post.responses.responses.contains_key("413"), "a POST reads a body");
        // Its body may be left out, but is never `null`.
        let body = post.request_body.as_ref().expect("a body");
        assert!(body.required != Some(Required::True), "an optional body");
        let schema = body.content["application/json"].schema.as_ref();
        let text = serde_json::to_string(&schema).unwrap_or_default();
        assert!(matches!(schema, Some(RefOr::Ref(r)) if r.ref_location.ends_with("/CreateTable")), "{text}");
    }
}

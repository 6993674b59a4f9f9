//! The web console: three static files compiled into the binary
//! (`include_str!`; nothing to build or install). They hold no secret: the page
//! asks for the token (or reads it from the URL's `#token=` fragment, which
//! browsers never send) and keeps it in the tab's session storage.

use axum::{
    extract::Path,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

const INDEX: &str = include_str!("console/index.html");
const SCRIPT: &str = include_str!("console/app.js");
const STYLE: &str = include_str!("console/app.css");

/// Pages may only load what the console itself serves.
const POLICY: &str = "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; \
                      connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

fn page(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response()
}

pub(crate) async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX)
}

pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    match file.as_str() {
        "app.js" => page("text/javascript; charset=utf-8", SCRIPT),
        "app.css" => page("text/css; charset=utf-8", STYLE),
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

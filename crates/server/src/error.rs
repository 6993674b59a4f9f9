//! Errors: the server's own ([`Error`], for the driver), and every failure a
//! handler answers, as JSON `protocol::ErrorInfo` with an HTTP status.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use protocol::{ErrorCode, ErrorInfo};

/// What stops the server itself (a request's failure is an answer, not this).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The address could not be bound (in use, not ours).
    #[error("cannot listen: {0}")]
    Bind(#[source] std::io::Error),
    /// Serving failed (the listener broke).
    #[error("serving HTTP: {0}")]
    Serve(#[source] std::io::Error),
    /// The options are unusable (no token, a CORS origin that is not an origin).
    #[error("{0}")]
    Config(String),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Bind(_) | Error::Serve(_) => ErrorCode::Io,
            Error::Config(_) => ErrorCode::InvalidArgument,
        }
    }
}

/// A request's failure: the wire error and its status.
#[derive(Debug)]
pub(crate) struct ApiError(pub(crate) ErrorInfo);

impl ApiError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError(ErrorInfo::new(code, message))
    }

    fn status(&self) -> StatusCode {
        match self.0.code {
            ErrorCode::NotFound | ErrorCode::StateNotFound => StatusCode::NOT_FOUND,
            ErrorCode::InvalidArgument | ErrorCode::PathOutsideRoot => StatusCode::BAD_REQUEST,
            ErrorCode::InvalidState | ErrorCode::Busy | ErrorCode::AlreadyExists => {
                StatusCode::CONFLICT
            }
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::LlmUnavailable | ErrorCode::Cancelled => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<agent::Error> for ApiError {
    fn from(e: agent::Error) -> ApiError {
        ApiError(e.to_info())
    }
}

impl From<workflow::Error> for ApiError {
    fn from(e: workflow::Error) -> ApiError {
        ApiError(e.to_info())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut r = (status, Json(self.0)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        r
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

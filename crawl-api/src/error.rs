//! [`ApiError`]: an HTTP status plus the JSON body `{"error": {"field", "message"}}`.

use std::fmt;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use crawl_core::ErrorKind;
use serde::{Deserialize, Serialize};

/// The body of every error answer: `{"error": {"field": "maxDepth", "message": "..."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong and, for validation errors, which request field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// The request field at fault (`url`, `maxDepth`, `maxPages`...), `null` otherwise.
    pub field: Option<String>,
    /// A human message; for validation errors it names the field and the limit.
    pub message: String,
}

/// An error answer of the job API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    detail: ErrorDetail,
}

impl ApiError {
    /// An error with any status.
    pub fn new(status: StatusCode, field: Option<&str>, message: impl Into<String>) -> Self {
        ApiError {
            status,
            detail: ErrorDetail {
                field: field.map(str::to_owned),
                message: message.into(),
            },
        }
    }

    /// 400: a request field is invalid.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, Some(field), message)
    }

    /// 400: the body is not the JSON object expected.
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, None, message)
    }

    /// 401: the caller did not say who it is.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, None, message)
    }

    /// 403: the caller may not act for this assistant.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, None, message)
    }

    /// 404: no such job for this assistant.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, None, message)
    }

    /// 429: too many running jobs.
    pub fn too_many(message: impl Into<String>) -> Self {
        Self::new(StatusCode::TOO_MANY_REQUESTS, None, message)
    }

    /// 500 for a backend failure of `kind`: a stable message, `"{kind}: the server could not
    /// complete the request; the detail is in its log"`, never the backend's own text.
    pub fn internal(kind: ErrorKind) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            format!(
                "{}: the server could not complete the request; the detail is in its log",
                kind.code()
            ),
        )
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The field at fault, if any.
    pub fn field(&self) -> Option<&str> {
        self.detail.field.as_deref()
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.detail.message
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.as_u16(), self.detail.message)
    }
}

impl std::error::Error for ApiError {}

impl From<crawl_core::Error> for ApiError {
    fn from(e: crawl_core::Error) -> Self {
        let message = e.message().to_owned();
        match e.kind() {
            ErrorKind::InvalidInput => {
                // Validation messages start with the field: "maxDepth: 6 is above ...".
                let field = message.split_once(':').map(|(f, _)| f.trim()).filter(|f| {
                    !f.is_empty() && f.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
                });
                Self::new(StatusCode::BAD_REQUEST, field, message.clone())
            }
            ErrorKind::NotFound => Self::not_found(message),
            ErrorKind::Conflict => Self::new(StatusCode::CONFLICT, None, message),
            ErrorKind::Unsupported => Self::new(StatusCode::NOT_IMPLEMENTED, None, message),
            kind => {
                // The detail (paths, bucket names, SDK messages) goes to the log only.
                tracing::error!(error = %e, kind = kind.code(), "job API backend error");
                Self::internal(kind)
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(ErrorBody { error: self.detail })).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_errors_name_their_field() {
        let e: ApiError = crawl_core::Error::invalid("maxDepth: 6 is above the limit of 5").into();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(e.field(), Some("maxDepth"));
        assert_eq!(e.message(), "maxDepth: 6 is above the limit of 5");
        let e: ApiError =
            crawl_core::Error::invalid("url: credentials in URLs are not allowed").into();
        assert_eq!(e.field(), Some("url"));
    }
}

//! Private error type of the AWS backends and its mapping into [`crawl_core::Error`].

use crawl_core::{Error, ErrorKind};

#[cfg(all(feature = "aws-dynamodb", not(feature = "aws-s3")))]
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
#[cfg(feature = "aws-s3")]
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};

type HttpResponse = aws_smithy_runtime_api_http::HttpResponse;

/// Re-export path of the SDK's raw HTTP response type, identical in both SDKs.
mod aws_smithy_runtime_api_http {
    #[cfg(all(feature = "aws-dynamodb", not(feature = "aws-s3")))]
    pub(crate) use aws_sdk_dynamodb::config::http::HttpResponse;
    #[cfg(feature = "aws-s3")]
    pub(crate) use aws_sdk_s3::config::http::HttpResponse;
}

/// Error codes AWS uses for throttling and transient server trouble.
const TEMPORARY_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "ThrottledException",
    "RequestThrottled",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "TransactionInProgressException",
    "SlowDown",
    "InternalError",
    "InternalServerError",
    "ServiceUnavailable",
    "RequestTimeout",
    "RequestTimeoutException",
    "ConditionalRequestConflict",
];

/// What went wrong inside an AWS backend, before it becomes a [`crawl_core::Error`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum AwsError {
    /// The SDK call failed.
    #[error("{op} failed{}: {message}", code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
    Sdk {
        op: &'static str,
        kind: ErrorKind,
        temporary: bool,
        status: Option<u16>,
        code: Option<String>,
        message: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Reading a response body failed midway.
    #[cfg(feature = "aws-s3")]
    #[error("{op}: reading the response body failed")]
    Body {
        op: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A stored object or item does not have the shape this backend writes.
    #[error("{what}: {detail}")]
    Malformed { what: String, detail: String },
    /// The builder was given an invalid or incomplete configuration.
    #[error("{0}")]
    Config(String),
}

impl AwsError {
    /// Classifies an SDK error: throttling, timeouts, connection failures and 5xx are
    /// temporary; 404-like codes are `NotFound`; failed conditions are `Conflict`.
    pub(crate) fn sdk<E>(op: &'static str, err: SdkError<E, HttpResponse>) -> Self
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let status = err.raw_response().map(|r| r.status().as_u16());
        let code = err.code().map(str::to_owned);
        let (kind, temporary) = match &err {
            SdkError::TimeoutError(_) => (ErrorKind::Timeout, true),
            SdkError::DispatchFailure(d) if d.is_timeout() => (ErrorKind::Timeout, true),
            SdkError::DispatchFailure(_) => (ErrorKind::Network, true),
            SdkError::ResponseError(_) => (ErrorKind::Storage, true),
            SdkError::ConstructionFailure(_) => (ErrorKind::Internal, false),
            _ => classify(code.as_deref(), status),
        };
        let message = err
            .message()
            .map(str::to_owned)
            .unwrap_or_else(|| aws_sdk_error_display(&err));
        AwsError::Sdk {
            op,
            kind,
            temporary,
            status,
            code,
            message,
            source: Box::new(err),
        }
    }

    /// The AWS error code, when the service sent one.
    pub(crate) fn code(&self) -> Option<&str> {
        match self {
            AwsError::Sdk { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status, when the service answered.
    #[cfg(feature = "aws-s3")]
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            AwsError::Sdk { status, .. } => *status,
            _ => None,
        }
    }

    /// Into the public error, naming the backend.
    pub(crate) fn into_core(self, backend: &dyn std::fmt::Display) -> Error {
        Error::from(self).with_backend(backend.to_string())
    }
}

fn aws_sdk_error_display<E, R>(err: &SdkError<E, R>) -> String
where
    E: std::error::Error + 'static,
    R: std::fmt::Debug,
{
    #[cfg(all(feature = "aws-dynamodb", not(feature = "aws-s3")))]
    use aws_sdk_dynamodb::error::DisplayErrorContext;
    #[cfg(feature = "aws-s3")]
    use aws_sdk_s3::error::DisplayErrorContext;
    DisplayErrorContext(err).to_string()
}

fn classify(code: Option<&str>, status: Option<u16>) -> (ErrorKind, bool) {
    let code = code.unwrap_or_default();
    if TEMPORARY_CODES.contains(&code) || status.is_some_and(|s| s >= 500 || s == 429) {
        return (ErrorKind::Storage, true);
    }
    match code {
        "NoSuchKey" | "NoSuchBucket" | "NotFound" | "ResourceNotFoundException" => {
            (ErrorKind::NotFound, false)
        }
        "PreconditionFailed" | "ConditionalCheckFailedException" => (ErrorKind::Conflict, false),
        "ValidationException" | "InvalidArgument" | "KeyTooLongError" => {
            (ErrorKind::InvalidInput, false)
        }
        _ if status == Some(404) => (ErrorKind::NotFound, false),
        _ if status == Some(412) => (ErrorKind::Conflict, false),
        _ => (ErrorKind::Storage, false),
    }
}

impl From<AwsError> for Error {
    fn from(e: AwsError) -> Error {
        let (kind, temporary) = match &e {
            AwsError::Sdk {
                kind, temporary, ..
            } => (*kind, *temporary),
            #[cfg(feature = "aws-s3")]
            AwsError::Body { .. } => (ErrorKind::Network, true),
            AwsError::Malformed { .. } => (ErrorKind::Storage, false),
            AwsError::Config(_) => (ErrorKind::InvalidInput, false),
        };
        Error::new(kind, e.to_string())
            .with_temporary(temporary)
            .with_source(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_and_5xx_are_temporary() {
        assert_eq!(
            classify(Some("ThrottlingException"), Some(400)),
            (ErrorKind::Storage, true)
        );
        assert_eq!(
            classify(Some("Whatever"), Some(503)),
            (ErrorKind::Storage, true)
        );
        assert_eq!(
            classify(Some("ConditionalCheckFailedException"), Some(400)),
            (ErrorKind::Conflict, false)
        );
        assert_eq!(classify(None, Some(404)), (ErrorKind::NotFound, false));
        assert_eq!(
            classify(Some("AccessDenied"), Some(403)),
            (ErrorKind::Storage, false)
        );
    }

    #[test]
    fn config_errors_are_invalid_input() {
        let e = AwsError::Config("bucket: required".into()).into_core(&"S3Sink(b/p)");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(e.backend(), Some("S3Sink(b/p)"));
        assert!(!e.is_temporary());
    }
}

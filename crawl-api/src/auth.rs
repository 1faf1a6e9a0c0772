//! Who may act for an assistant: the pluggable [`Authorizer`].

use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use axum::http::HeaderMap;

use crate::error::ApiError;

/// Decides whether a request may act for `assistant_id`. The host plugs in its own (session
/// cookie, JWT, API key...).
///
/// # Contract
/// - Return [`ApiError::unauthorized`] (401) when the caller is not identified and
///   [`ApiError::forbidden`] (403) when it is but may not use this assistant.
/// - Called before anything else on every route, including before a job is looked up, so an
///   unauthorized caller learns nothing about which jobs exist.
#[async_trait]
pub trait Authorizer: Debug + Send + Sync + 'static {
    /// `Ok(())` when the request may act for `assistant_id`.
    async fn authorize(&self, headers: &HeaderMap, assistant_id: &str) -> Result<(), ApiError>;
}

/// Shared authorizer handle.
pub type DynAuthorizer = Arc<dyn Authorizer>;

/// Allows every request (the default).
///
/// **Warning**: with this authorizer anyone who can reach the router can start, read and
/// delete any assistant's crawl jobs. Use it only behind a gateway that already authorizes
/// the assistant id in the path, or on a loopback demo.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl Authorizer for AllowAll {
    async fn authorize(&self, _headers: &HeaderMap, _assistant_id: &str) -> Result<(), ApiError> {
        Ok(())
    }
}

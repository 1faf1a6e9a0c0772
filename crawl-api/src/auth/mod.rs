//! Who may act for an assistant, and how: the pluggable [`Authorizer`] and its [`Role`]s.

use std::fmt::{self, Debug};
use std::sync::Arc;

use async_trait::async_trait;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

#[cfg(feature = "jwt")]
mod jwks;
#[cfg(feature = "jwt")]
mod jwt;

#[cfg(feature = "jwt")]
pub use jwks::JwksSource;
#[cfg(feature = "jwt")]
pub use jwt::{
    Claims, DynRoleLookup, JwtAuthorizer, JwtAuthorizerBuilder, RoleLookup, StaticRoles,
};

/// The caller's role for one assistant (the host's own model): viewers list and read crawl
/// jobs; editors and owners also start, edit, sync and delete them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Lists and reads.
    Viewer,
    /// Reads and changes: start, edit, sync, delete.
    Editor,
    /// Everything an editor may do (the API makes no difference today; a host may).
    Owner,
}

/// What a request does to an assistant's jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// List or read (every `GET`).
    Read,
    /// Start, edit, sync or delete.
    Write,
}

impl Role {
    /// Whether this role may do `action`.
    pub fn permits(self, action: Action) -> bool {
        match action {
            Action::Read => true,
            Action::Write => matches!(self, Role::Editor | Role::Owner),
        }
    }

    /// `"viewer"`, `"editor"` or `"owner"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Read => "read",
            Action::Write => "start, edit, sync or delete",
        })
    }
}

/// Decides whether a request may act for `assistant_id`, and with which [`Role`]. The host
/// plugs in its own (session cookie, JWT, API key...); [`JwtAuthorizer`] (feature `jwt`) checks
/// Cognito-style bearer tokens.
///
/// # Contract
/// - Return [`ApiError::unauthorized`] (401) when the caller is not identified and
///   [`ApiError::forbidden`] (403) when it is but may not use this assistant at all.
/// - [`authorize`](Authorizer::authorize) is `Ok` only when the caller may do everything
///   (the full rights of an owner); [`role`](Authorizer::role) gives the caller's role, which
///   the router checks against each route's [`Action`] (403 for a viewer starting a crawl).
/// - An authorizer that implements only `authorize` (written before roles) keeps working: its
///   callers are owners.
/// - Called before anything else on every route, including before a job is looked up, so an
///   unauthorized caller learns nothing about which jobs exist.
#[async_trait]
pub trait Authorizer: Debug + Send + Sync + 'static {
    /// `Ok(())` when the request may do everything for `assistant_id`.
    async fn authorize(&self, headers: &HeaderMap, assistant_id: &str) -> Result<(), ApiError>;

    /// The caller's role for `assistant_id`. The default maps a passing
    /// [`authorize`](Authorizer::authorize) to [`Role::Owner`].
    async fn role(&self, headers: &HeaderMap, assistant_id: &str) -> Result<Role, ApiError> {
        self.authorize(headers, assistant_id).await?;
        Ok(Role::Owner)
    }
}

/// Conveniences over every [`Authorizer`].
#[async_trait]
pub trait AuthorizerExt: Authorizer {
    /// The caller's role when it permits `action`; 403 naming the role and the action
    /// otherwise.
    async fn require(
        &self,
        headers: &HeaderMap,
        assistant_id: &str,
        action: Action,
    ) -> Result<Role, ApiError> {
        let role = self.role(headers, assistant_id).await?;
        if role.permits(action) {
            Ok(role)
        } else {
            Err(ApiError::forbidden(format!(
                "a {role} of assistant {assistant_id} may not {action} crawl jobs"
            )))
        }
    }
}

impl<T: Authorizer + ?Sized> AuthorizerExt for T {}

/// Shared authorizer handle.
pub type DynAuthorizer = Arc<dyn Authorizer>;

/// Allows every request (the default), as an owner.
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

    async fn role(&self, _headers: &HeaderMap, _assistant_id: &str) -> Result<Role, ApiError> {
        Ok(Role::Owner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewers_only_read() {
        assert!(Role::Viewer.permits(Action::Read));
        assert!(!Role::Viewer.permits(Action::Write));
        for r in [Role::Editor, Role::Owner] {
            assert!(r.permits(Action::Read) && r.permits(Action::Write), "{r}");
        }
    }

    #[derive(Debug)]
    struct Legacy;

    #[async_trait]
    impl Authorizer for Legacy {
        async fn authorize(&self, headers: &HeaderMap, _: &str) -> Result<(), ApiError> {
            if headers.contains_key("x-ok") {
                Ok(())
            } else {
                Err(ApiError::unauthorized("no"))
            }
        }
    }

    #[tokio::test]
    async fn an_authorizer_without_roles_makes_owners() {
        let mut h = HeaderMap::new();
        let e = Legacy.require(&h, "a", Action::Read).await.unwrap_err();
        assert_eq!(e.status(), axum::http::StatusCode::UNAUTHORIZED);
        h.insert("x-ok", "1".parse().unwrap());
        assert_eq!(
            Legacy.require(&h, "a", Action::Write).await.unwrap(),
            Role::Owner
        );
    }
}

//! [`JwtAuthorizer`]: Cognito-style RS256 bearer tokens, checked against a JWKS, with the
//! caller's role per assistant from a pluggable [`RoleLookup`].

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::http::HeaderMap;
use jsonwebtoken::errors::ErrorKind as JwtErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{Action, Authorizer, AuthorizerExt, JwksSource, Role};
use crate::error::ApiError;

/// The claims of a verified token that a [`RoleLookup`] may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Claims {
    /// The caller (Cognito: the user's UUID).
    pub sub: String,
    /// The issuer (checked).
    pub iss: String,
    /// The audiences (Cognito ID tokens: the app client id).
    #[serde(default, deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    /// The app client (Cognito access tokens, which carry no `aud`).
    #[serde(default)]
    pub client_id: Option<String>,
    /// Expiry, seconds since the epoch (checked).
    pub exp: u64,
    /// Cognito's `token_use`: `id` or `access`.
    #[serde(default)]
    pub token_use: Option<String>,
    /// Cognito's `cognito:groups`.
    #[serde(rename = "cognito:groups", default)]
    pub groups: Vec<String>,
    /// Every other claim.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// The caller's role for an assistant, from a verified token's claims: the host's own model
/// (a table, a database, the token's groups...).
///
/// # Contract
/// - `Ok(None)` when the caller has no role for `assistant_id` (the API answers 403).
/// - An `Err` is passed to the caller as is (use [`ApiError::internal`] for a backend failure).
#[async_trait]
pub trait RoleLookup: Debug + Send + Sync + 'static {
    /// The role of the token's caller for `assistant_id`.
    async fn role(&self, claims: &Claims, assistant_id: &str) -> Result<Option<Role>, ApiError>;
}

/// Shared role lookup handle.
pub type DynRoleLookup = Arc<dyn RoleLookup>;

/// A fixed table of `(sub, assistant) → role`.
#[derive(Debug, Clone, Default)]
pub struct StaticRoles {
    roles: HashMap<(String, String), Role>,
}

impl StaticRoles {
    /// An empty table: nobody has a role.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives `sub` the `role` for `assistant_id`.
    #[must_use]
    pub fn grant(mut self, sub: &str, assistant_id: &str, role: Role) -> Self {
        self.roles
            .insert((sub.to_owned(), assistant_id.to_owned()), role);
        self
    }
}

#[async_trait]
impl RoleLookup for StaticRoles {
    async fn role(&self, claims: &Claims, assistant_id: &str) -> Result<Option<Role>, ApiError> {
        Ok(self
            .roles
            .get(&(claims.sub.clone(), assistant_id.to_owned()))
            .copied())
    }
}

/// Checks `Authorization: Bearer <JWT>`: an RS256 signature by a key of the [`JwksSource`]
/// (the `kid` header picks it), the issuer, the audience (`aud`, or Cognito's `client_id`),
/// the expiry; then asks the [`RoleLookup`] for the caller's role for the assistant.
///
/// A token that fails any check gets 401 (`alg: none`, HS256 and every other algorithm
/// included); a valid token whose caller has no role for the assistant gets 403.
#[derive(Debug, Clone)]
pub struct JwtAuthorizer {
    jwks: JwksSource,
    issuer: String,
    audiences: Vec<String>,
    roles: DynRoleLookup,
    leeway: Duration,
}

/// Builds a [`JwtAuthorizer`]; [`build`](Self::build) checks that nothing is missing.
#[derive(Debug, Default)]
pub struct JwtAuthorizerBuilder {
    jwks: Option<JwksSource>,
    issuer: Option<String>,
    audiences: Vec<String>,
    roles: Option<DynRoleLookup>,
    leeway: Option<Duration>,
}

impl JwtAuthorizerBuilder {
    /// The signing keys (required).
    #[must_use]
    pub fn jwks(mut self, jwks: JwksSource) -> Self {
        self.jwks = Some(jwks);
        self
    }

    /// The `iss` every token must have (required; Cognito:
    /// `https://cognito-idp.{region}.amazonaws.com/{pool_id}`).
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Accepts tokens whose `aud` or `client_id` is `audience` (at least one is required;
    /// Cognito: the app client id).
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Where callers' roles come from (required).
    #[must_use]
    pub fn roles(mut self, roles: DynRoleLookup) -> Self {
        self.roles = Some(roles);
        self
    }

    /// Clock skew allowed on `exp` (default 60 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = Some(leeway);
        self
    }

    /// The authorizer; the error names the missing setting.
    pub fn build(self) -> crawl_core::Result<JwtAuthorizer> {
        let missing = |f: &str| crawl_core::Error::invalid(format!("{f}: required"));
        let jwks = self.jwks.ok_or_else(|| missing("jwks"))?;
        let issuer = self
            .issuer
            .filter(|i| !i.is_empty())
            .ok_or_else(|| missing("issuer"))?;
        if self.audiences.iter().all(String::is_empty) {
            return Err(missing("audience"));
        }
        let roles = self.roles.ok_or_else(|| missing("roles"))?;
        Ok(JwtAuthorizer {
            jwks,
            issuer,
            audiences: self.audiences,
            roles,
            leeway: self.leeway.unwrap_or(Duration::from_secs(60)),
        })
    }
}

fn refused(why: &str) -> ApiError {
    ApiError::unauthorized(format!("bearer token: {why}"))
}

impl JwtAuthorizer {
    /// A builder.
    pub fn builder() -> JwtAuthorizerBuilder {
        JwtAuthorizerBuilder::default()
    }

    /// The verified claims of the request's bearer token, or 401 saying which check failed.
    pub async fn verify(&self, headers: &HeaderMap) -> Result<Claims, ApiError> {
        let token = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.split_once(' ')
                    .filter(|(s, _)| s.eq_ignore_ascii_case("bearer"))
            })
            .map(|(_, t)| t.trim())
            .ok_or_else(|| {
                ApiError::unauthorized("a bearer token is required (Authorization: Bearer <JWT>)")
            })?;
        // An unknown `alg` ("none" among them) fails here.
        let header = jsonwebtoken::decode_header(token).map_err(|_| refused("not a JWT"))?;
        if header.alg != Algorithm::RS256 {
            return Err(refused("alg must be RS256"));
        }
        let kid = header.kid.ok_or_else(|| refused("no kid header"))?;
        let key = self
            .jwks
            .key(&kid)
            .await?
            .ok_or_else(|| refused("signed by an unknown key"))?;
        let mut v = Validation::new(Algorithm::RS256);
        v.set_issuer(&[&self.issuer]);
        v.set_required_spec_claims(&["exp", "iss", "sub"]);
        v.leeway = self.leeway.as_secs();
        // Checked below: Cognito access tokens carry `client_id` instead of `aud`.
        v.validate_aud = false;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &v).map_err(|e| {
            tracing::debug!(error = %e, "bearer token refused");
            match e.kind() {
                JwtErrorKind::ExpiredSignature => refused("expired"),
                JwtErrorKind::InvalidIssuer => refused("wrong issuer"),
                JwtErrorKind::InvalidSignature => refused("bad signature"),
                JwtErrorKind::MissingRequiredClaim(c) => refused(&format!("no {c} claim")),
                _ => refused("invalid"),
            }
        })?;
        let claims = data.claims;
        let for_us = claims
            .aud
            .iter()
            .chain(claims.client_id.iter())
            .any(|a| self.audiences.contains(a));
        if !for_us {
            return Err(refused("not issued for this API (aud / client_id)"));
        }
        Ok(claims)
    }
}

#[async_trait]
impl Authorizer for JwtAuthorizer {
    async fn authorize(&self, headers: &HeaderMap, assistant_id: &str) -> Result<(), ApiError> {
        self.require(headers, assistant_id, Action::Write)
            .await
            .map(drop)
    }

    async fn role(&self, headers: &HeaderMap, assistant_id: &str) -> Result<Role, ApiError> {
        let claims = self.verify(headers).await?;
        self.roles
            .role(&claims, assistant_id)
            .await?
            .ok_or_else(|| {
                ApiError::forbidden(format!(
                    "the caller has no role for assistant {assistant_id}"
                ))
            })
    }
}

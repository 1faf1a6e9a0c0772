//! [`AssistantTableAuthorizer`]: the assistant-role check of the job API on Lambda, over the
//! host's assistants table and the caller the API Gateway JWT authorizer identified.

use std::fmt;

use async_trait::async_trait;
use aws_sdk_dynamodb::config::Credentials;
use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::HeaderMap;
use crawl_api::{ApiError, Authorizer};
use crawl_core::Result;

use crate::config::Connection;

/// The header carrying the caller's identity from the Lambda adapter to the authorizer.
/// The adapter removes any value a client sent and sets it only from the JWT claims API
/// Gateway verified, so it cannot be forged through the gateway.
pub const PRINCIPAL_HEADER: &str = "x-kb-crawl-principal";

/// Lets a caller act for an assistant when the assistants table names it the owner (or one
/// of the editors). The table is the host's: one item per assistant, keyed by a string
/// attribute (`id` by default), with the owner's user id in a string attribute (`ownerId`
/// by default) and optionally a string set or list of editor ids (`editorIds`).
///
/// - no [`PRINCIPAL_HEADER`] (no verified token): 401;
/// - no item, or the caller is neither owner nor editor: 403 (the same answer, so a caller
///   learns nothing about other users' assistants);
/// - the table cannot be read: 503, and the detail goes to the log only.
#[derive(Clone)]
pub struct AssistantTableAuthorizer {
    client: aws_sdk_dynamodb::Client,
    table: String,
    key: String,
    owner: String,
    editors: String,
}

impl fmt::Debug for AssistantTableAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AssistantTableAuthorizer")
            .field("table", &self.table)
            .field("key", &self.key)
            .field("owner", &self.owner)
            .field("editors", &self.editors)
            .finish_non_exhaustive()
    }
}

/// Configures an [`AssistantTableAuthorizer`].
#[derive(Debug, Default)]
pub struct AssistantTableAuthorizerBuilder {
    table: Option<String>,
    key: Option<String>,
    owner: Option<String>,
    editors: Option<String>,
    conn: Connection,
}

impl AssistantTableAuthorizerBuilder {
    /// The assistants table (required).
    pub fn table(mut self, t: impl Into<String>) -> Self {
        self.table = Some(t.into());
        self
    }
    /// The key attribute holding the assistant id (default `id`).
    pub fn key_attribute(mut self, a: impl Into<String>) -> Self {
        self.key = Some(a.into());
        self
    }
    /// The attribute holding the owner's user id (default `ownerId`).
    pub fn owner_attribute(mut self, a: impl Into<String>) -> Self {
        self.owner = Some(a.into());
        self
    }
    /// The attribute holding editor user ids, a string set or list (default `editorIds`).
    pub fn editors_attribute(mut self, a: impl Into<String>) -> Self {
        self.editors = Some(a.into());
        self
    }
    /// Endpoint override, e.g. `http://127.0.0.1:5000` for a local stand-in.
    pub fn endpoint_url(mut self, url: impl Into<String>) -> Self {
        self.conn.endpoint_url = Some(url.into());
        self
    }
    /// Fixed credentials, for local stand-ins.
    pub fn static_credentials(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.conn.static_credentials = Some((id.into(), secret.into()));
        self
    }

    /// Validates the settings and creates the client (no request is sent).
    pub async fn build(self) -> Result<AssistantTableAuthorizer> {
        let table = self.table.unwrap_or_default();
        let name_ok = |s: &str| {
            (3..=255).contains(&s.len())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        };
        if !name_ok(&table) {
            return Err(crawl_core::Error::invalid(format!(
                "KB_CRAWL_ASSISTANTS_TABLE: '{table}' is not a table name (3 to 255 of [a-zA-Z0-9_.-])"
            )));
        }
        let attr = |v: Option<String>, default: &str, field: &str| -> Result<String> {
            let v = v.unwrap_or_else(|| default.to_owned());
            if v.is_empty() || v.len() > 255 {
                return Err(crawl_core::Error::invalid(format!(
                    "{field}: an attribute name of 1 to 255 bytes"
                )));
            }
            Ok(v)
        };
        let key = attr(self.key, "id", "KB_CRAWL_ASSISTANTS_KEY")?;
        let owner = attr(self.owner, "ownerId", "KB_CRAWL_ASSISTANTS_OWNER")?;
        let editors = attr(self.editors, "editorIds", "KB_CRAWL_ASSISTANTS_EDITORS")?;
        let sdk = self.conn.load().await;
        let mut cfg = aws_sdk_dynamodb::config::Builder::from(&sdk);
        if let Some((id, secret)) = self.conn.static_credentials {
            cfg = cfg.credentials_provider(Credentials::new(id, secret, None, None, "kb-crawl"));
        }
        Ok(AssistantTableAuthorizer {
            client: aws_sdk_dynamodb::Client::from_conf(cfg.build()),
            table,
            key,
            owner,
            editors,
        })
    }
}

impl AssistantTableAuthorizer {
    /// A builder.
    pub fn builder() -> AssistantTableAuthorizerBuilder {
        AssistantTableAuthorizerBuilder::default()
    }

    /// Configured from `KB_CRAWL_ASSISTANTS_TABLE` (required), `KB_CRAWL_ASSISTANTS_KEY`,
    /// `KB_CRAWL_ASSISTANTS_OWNER`, `KB_CRAWL_ASSISTANTS_EDITORS` and
    /// `KB_CRAWL_AWS_ENDPOINT`.
    pub async fn from_env() -> Result<AssistantTableAuthorizer> {
        use crate::config::env;
        let mut b = Self::builder().table(env("KB_CRAWL_ASSISTANTS_TABLE").unwrap_or_default());
        if let Some(k) = env("KB_CRAWL_ASSISTANTS_KEY") {
            b = b.key_attribute(k);
        }
        if let Some(o) = env("KB_CRAWL_ASSISTANTS_OWNER") {
            b = b.owner_attribute(o);
        }
        if let Some(e) = env("KB_CRAWL_ASSISTANTS_EDITORS") {
            b = b.editors_attribute(e);
        }
        if let Some(e) = env("KB_CRAWL_AWS_ENDPOINT") {
            b = b.endpoint_url(e);
        }
        b.build().await
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }
}

fn is(v: Option<&AttributeValue>, who: &str) -> bool {
    match v {
        Some(AttributeValue::S(s)) => s == who,
        Some(AttributeValue::Ss(set)) => set.iter().any(|s| s == who),
        Some(AttributeValue::L(list)) => list.iter().any(|v| is(Some(v), who)),
        _ => false,
    }
}

#[async_trait]
impl Authorizer for AssistantTableAuthorizer {
    async fn authorize(&self, headers: &HeaderMap, assistant_id: &str) -> Result<(), ApiError> {
        let who = headers
            .get(PRINCIPAL_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                ApiError::unauthorized("Authorization: a valid bearer token is required")
            })?;
        let item = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(&self.key, AttributeValue::S(assistant_id.to_owned()))
            .projection_expression("#o, #e")
            .expression_attribute_names("#o", &self.owner)
            .expression_attribute_names("#e", &self.editors)
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| {
                tracing::error!(table = %self.table, error = %aws_sdk_dynamodb::error::DisplayErrorContext(&e), "assistants table read failed");
                ApiError::new(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    None,
                    "the assistant's permissions could not be read; retry later",
                )
            })?;
        let allowed = item
            .item()
            .is_some_and(|i| is(i.get(&self.owner), who) || is(i.get(&self.editors), who));
        if allowed {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!(
                "assistant {assistant_id}: you are not its owner or an editor"
            )))
        }
    }
}

//! Builder shared by the DynamoDB backends.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::config::Credentials;
use crawl_core::clock::{DynClock, SystemClock};
use crawl_core::memory::DEFAULT_DEDUP_TTL;
use crawl_core::Result;

use super::{DynamoDedup, DynamoJobStore};
use crate::config::{env, Connection};
use crate::error::AwsError;

/// Configures a [`DynamoDedup`] or a [`DynamoJobStore`]: `T` is what `build` returns.
#[derive(Debug)]
pub struct DynamoBuilder<T> {
    table: Option<String>,
    conn: Connection,
    clock: DynClock,
    ttl: Duration,
    _target: std::marker::PhantomData<fn() -> T>,
}

impl<T> Default for DynamoBuilder<T> {
    fn default() -> Self {
        DynamoBuilder {
            table: None,
            conn: Connection::default(),
            clock: Arc::new(SystemClock),
            ttl: DEFAULT_DEDUP_TTL,
            _target: std::marker::PhantomData,
        }
    }
}

impl<T> DynamoBuilder<T> {
    /// The table name (required).
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = Some(table.into());
        self
    }

    /// Endpoint override, e.g. `http://127.0.0.1:5000` for a local stand-in.
    pub fn endpoint_url(mut self, url: impl Into<String>) -> Self {
        self.conn.endpoint_url = Some(url.into());
        self
    }

    /// Region (otherwise the SDK's provider chain decides).
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.conn.region = Some(region.into());
        self
    }

    /// Fixed credentials, for local stand-ins; real deployments use the provider chain.
    pub fn static_credentials(
        mut self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
    ) -> Self {
        self.conn.static_credentials = Some((access_key_id.into(), secret_access_key.into()));
        self
    }

    /// A ready SDK configuration instead of loading one from the environment.
    pub fn sdk_config(mut self, config: aws_config::SdkConfig) -> Self {
        self.conn.sdk_config = Some(config);
        self
    }

    /// The time source (TTL windows, job timestamps); the system clock by default.
    pub fn clock(mut self, clock: DynClock) -> Self {
        self.clock = clock;
        self
    }

    pub(super) async fn parts(self, backend: &str) -> Result<Parts> {
        let table = self.table.unwrap_or_default();
        let name = format!("{backend}({table})");
        let ok = (3..=255).contains(&table.len())
            && table
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !ok {
            return Err(AwsError::Config(format!(
                "table: '{table}' is not a table name (3 to 255 of [a-zA-Z0-9_.-])"
            ))
            .into_core(&name));
        }
        if self.ttl.is_zero() {
            return Err(AwsError::Config("ttl: must be more than zero".into()).into_core(&name));
        }
        let sdk = self.conn.load().await;
        let mut cfg = aws_sdk_dynamodb::config::Builder::from(&sdk);
        if let Some((id, secret)) = self.conn.static_credentials {
            cfg = cfg.credentials_provider(Credentials::new(id, secret, None, None, "kb-crawl"));
        }
        Ok(Parts {
            client: aws_sdk_dynamodb::Client::from_conf(cfg.build()),
            table,
            name,
            clock: self.clock,
            ttl: self.ttl,
        })
    }
}

/// What a built backend is made of.
pub(super) struct Parts {
    pub(super) client: aws_sdk_dynamodb::Client,
    pub(super) table: String,
    pub(super) name: String,
    pub(super) clock: DynClock,
    pub(super) ttl: Duration,
}

impl DynamoBuilder<DynamoDedup> {
    /// How long a key stays seen (24 h by default).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Validates the settings and creates the client (no request is sent).
    pub async fn build(self) -> Result<DynamoDedup> {
        Ok(DynamoDedup::from_parts(self.parts("DynamoDedup").await?))
    }
}

impl DynamoBuilder<DynamoJobStore> {
    /// Validates the settings and creates the client (no request is sent).
    pub async fn build(self) -> Result<DynamoJobStore> {
        Ok(DynamoJobStore::from_parts(
            self.parts("DynamoJobStore").await?,
        ))
    }
}

/// Applies `KB_CRAWL_AWS_ENDPOINT` and the table from `table_var` (required).
pub(super) fn from_env<T>(table_var: &str) -> DynamoBuilder<T> {
    let mut b = DynamoBuilder::default().table(env(table_var).unwrap_or_default());
    if let Some(e) = env("KB_CRAWL_AWS_ENDPOINT") {
        b = b.endpoint_url(e);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawl_core::ErrorKind;

    #[tokio::test]
    async fn build_refuses_bad_tables_and_zero_ttl_before_connecting() {
        let e = DynamoDedup::builder()
            .table("a b")
            .build()
            .await
            .expect_err("bad table");
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert_eq!(e.backend(), Some("DynamoDedup(a b)"));
        let e = DynamoDedup::builder()
            .table("dedup")
            .ttl(Duration::ZERO)
            .build()
            .await
            .expect_err("zero ttl");
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        let e = DynamoJobStore::builder()
            .build()
            .await
            .expect_err("no table");
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    }
}

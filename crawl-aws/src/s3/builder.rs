//! Builder of [`S3Sink`].

use aws_sdk_s3::config::Credentials;
use crawl_core::Result;

use super::S3Sink;
use crate::config::{env, Connection};
use crate::error::AwsError;

/// Longest key prefix accepted, in bytes: with the longest job id, domain and slug a key
/// then stays under S3's 1,024 bytes.
pub const MAX_PREFIX_BYTES: usize = 512;

/// Configures an [`S3Sink`]; `build` validates and connects.
#[derive(Debug, Clone, Default)]
pub struct S3SinkBuilder {
    bucket: Option<String>,
    prefix: String,
    force_path_style: bool,
    conn: Connection,
}

impl S3SinkBuilder {
    /// The bucket (required).
    pub fn bucket(mut self, bucket: impl Into<String>) -> Self {
        self.bucket = Some(bucket.into());
        self
    }

    /// Key prefix under which jobs are stored (`kb/docs`; surrounding slashes are ignored).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Endpoint override, e.g. `http://127.0.0.1:5000` for a local stand-in; switches to
    /// path-style addressing.
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

    /// Path-style addressing (`endpoint/bucket/key`); on by default with an endpoint override.
    pub fn force_path_style(mut self, on: bool) -> Self {
        self.force_path_style = on;
        self
    }

    /// A ready SDK configuration instead of loading one from the environment.
    pub fn sdk_config(mut self, config: aws_config::SdkConfig) -> Self {
        self.conn.sdk_config = Some(config);
        self
    }

    /// Validates the settings and creates the client (no request is sent).
    pub async fn build(self) -> Result<S3Sink> {
        let bucket = self.bucket.unwrap_or_default();
        let name = format!("S3Sink({bucket})");
        let fail = |m: String| AwsError::Config(m).into_core(&name);
        let bucket_ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if !bucket_ok {
            return Err(fail(format!(
                "bucket: '{bucket}' is not a bucket name (3 to 63 of [a-z0-9.-])"
            )));
        }
        let prefix = self.prefix.trim_matches('/').to_owned();
        if prefix.len() > MAX_PREFIX_BYTES {
            return Err(fail(format!(
                "prefix: {} bytes, at most {MAX_PREFIX_BYTES} (keys must fit S3's 1,024 bytes)",
                prefix.len()
            )));
        }
        if !prefix.is_empty()
            && prefix
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == ".." || s.chars().any(char::is_control))
        {
            return Err(fail(format!(
                "prefix: '{prefix}' has an empty, '.', '..' or control-character segment"
            )));
        }
        let sdk = self.conn.load().await;
        let mut cfg = aws_sdk_s3::config::Builder::from(&sdk)
            .force_path_style(self.force_path_style || self.conn.endpoint_url.is_some());
        if let Some((id, secret)) = self.conn.static_credentials {
            cfg = cfg.credentials_provider(Credentials::new(id, secret, None, None, "kb-crawl"));
        }
        let client = aws_sdk_s3::Client::from_conf(cfg.build());
        Ok(S3Sink::from_parts(client, bucket, prefix))
    }
}

impl S3Sink {
    /// A builder.
    pub fn builder() -> S3SinkBuilder {
        S3SinkBuilder::default()
    }

    /// A sink configured from the environment: `KB_CRAWL_S3_BUCKET` (required),
    /// `KB_CRAWL_S3_PREFIX`, and `KB_CRAWL_AWS_ENDPOINT` for a local stand-in; credentials
    /// and region from the SDK's usual chain (`AWS_REGION`, `AWS_ENDPOINT_URL`...).
    pub async fn from_env() -> Result<S3Sink> {
        let mut b = S3Sink::builder()
            .bucket(env("KB_CRAWL_S3_BUCKET").unwrap_or_default())
            .prefix(env("KB_CRAWL_S3_PREFIX").unwrap_or_default());
        if let Some(e) = env("KB_CRAWL_AWS_ENDPOINT") {
            b = b.endpoint_url(e);
        }
        if env("AWS_ENDPOINT_URL").is_some() || env("AWS_ENDPOINT_URL_S3").is_some() {
            b = b.force_path_style(true);
        }
        b.build().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawl_core::ErrorKind;

    #[tokio::test]
    async fn build_refuses_bad_buckets_and_prefixes_before_connecting() {
        for (bucket, prefix) in [
            ("", "kb"),
            ("Upper_Case", "kb"),
            ("ok-bucket", "a//b"),
            ("ok-bucket", "a/../b"),
        ] {
            let e = S3Sink::builder()
                .bucket(bucket)
                .prefix(prefix)
                .build()
                .await
                .expect_err("refused");
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
            assert!(e.backend().is_some_and(|b| b.starts_with("S3Sink(")), "{e}");
        }
    }
}

//! Shared AWS connection settings: one lean rustls HTTP client, region, endpoint override.

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

/// Region used when an endpoint is overridden (a local stand-in) and none is configured.
const LOCAL_REGION: &str = "us-east-1";

/// Where and how to reach AWS; the same for every backend builder.
#[derive(Debug, Clone, Default)]
pub(crate) struct Connection {
    /// Endpoint override (`http://127.0.0.1:5000` for moto); path-style S3 addressing then.
    pub(crate) endpoint_url: Option<String>,
    /// Region; otherwise the SDK's provider chain decides.
    pub(crate) region: Option<String>,
    /// Static credentials (access key id, secret) for local stand-ins.
    pub(crate) static_credentials: Option<(String, String)>,
    /// A ready configuration, used instead of loading one.
    pub(crate) sdk_config: Option<SdkConfig>,
}

impl Connection {
    /// Loads the SDK configuration: environment and profile settings, overridden by what the
    /// builder was told. Never blocks on instance metadata when an endpoint is overridden.
    pub(crate) async fn load(&self) -> SdkConfig {
        if let Some(c) = &self.sdk_config {
            return c.clone();
        }
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::Ring))
            .build_https();
        let mut loader = aws_config::defaults(BehaviorVersion::latest()).http_client(http);
        if let Some(e) = &self.endpoint_url {
            loader = loader.endpoint_url(e);
        }
        let region = self.region.clone().or_else(|| {
            self.endpoint_url
                .as_ref()
                .filter(|_| std::env::var_os("AWS_REGION").is_none())
                .map(|_| LOCAL_REGION.to_owned())
        });
        if let Some(r) = region {
            loader = loader.region(Region::new(r));
        }
        loader.load().await
    }
}

/// Reads an environment variable, treating empty as unset.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

//! Knowledge-base targets: [`Ingestor`](crawl_core::Ingestor)s that put a run's pages into a
//! real knowledge base and keep them current across runs.
//!
//! - [`AgentCoreIngestor`] (feature `agentcore`): the host's document contract
//!   (agentcore-public-stack): each page an ordinary document of an assistant.
//! - [`BedrockKbIngestor`] (feature `bedrock-kb`): an Amazon Bedrock Knowledge Bases S3 data
//!   source with metadata sidecars, and one `StartIngestionJob` per run with changes.
//! - [`KbUri`]: the `--kb` URIs of the CLI that name either target.

#[cfg(feature = "agentcore")]
mod agentcore;
#[cfg(feature = "bedrock-kb")]
mod bedrock;
// Without `agentcore`, only the name checks are used.
#[cfg_attr(not(feature = "agentcore"), allow(dead_code))]
mod contract;
#[cfg(feature = "agentcore")]
mod host;
mod report;
mod uri;

#[cfg(feature = "agentcore")]
pub use agentcore::{
    AgentCoreIngestor, AgentCoreIngestorBuilder, SSM_ASSISTANTS_TABLE, SSM_DOCUMENTS_BUCKET,
};
#[cfg(feature = "bedrock-kb")]
pub use bedrock::{
    BedrockKbIngestor, BedrockKbIngestorBuilder, MAX_BEDROCK_DOCUMENT_BYTES, MAX_SIDECAR_BYTES,
    SIDECAR_SUFFIX,
};
#[cfg(feature = "agentcore")]
pub use contract::{document_id, document_key, sanitize_filename, MAX_DOCUMENT_BYTES};
#[cfg(feature = "agentcore")]
pub use host::{HostDocument, HOST_DIMENSION};
pub use report::KbReport;
pub use uri::{KbIngestor, KbUri};

use aws_config::SdkConfig;

use crate::config::Connection;

/// The SDK configuration of `conn`, with its static credentials (if any) applied, so every
/// client built from it signs the same way.
async fn sdk_config(conn: &Connection) -> SdkConfig {
    let sdk = conn.load().await;
    match &conn.static_credentials {
        Some((id, secret)) => {
            let creds = aws_sdk_s3::config::Credentials::new(id, secret, None, None, "kb-crawl");
            sdk.into_builder()
                .credentials_provider(aws_sdk_s3::config::SharedCredentialsProvider::new(creds))
                .build()
        }
        None => sdk,
    }
}

/// Whether S3 must be addressed path-style: an endpoint override (a local stand-in), given
/// to the builder or through the SDK's environment.
fn path_style(conn: &Connection) -> bool {
    conn.endpoint_url.is_some()
        || crate::config::env("AWS_ENDPOINT_URL").is_some()
        || crate::config::env("AWS_ENDPOINT_URL_S3").is_some()
}

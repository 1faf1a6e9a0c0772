//! The host's resources on moto, shared by the tests of its document contract
//! (`kb_agentcore`, `kb_linked`): the SDK clients, and an assistant's table, documents bucket
//! and vector index under fresh names.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::sync::Mutex;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use aws_sdk_s3vectors::types::{DataType, DistanceMetric};
use crawl_core::JobId;

/// The AWS clients of one test, all on moto.
pub struct Aws {
    pub ddb: aws_sdk_dynamodb::Client,
    pub s3: aws_sdk_s3::Client,
    pub vectors: aws_sdk_s3vectors::Client,
    pub ssm: aws_sdk_ssm::Client,
}

pub async fn aws(endpoint: &str) -> Aws {
    use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(http)
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_s3::config::Credentials::new(
            "testing", "testing", None, None, "test",
        ))
        .load()
        .await;
    let s3 = aws_sdk_s3::config::Builder::from(&sdk)
        .force_path_style(true)
        .build();
    Aws {
        ddb: aws_sdk_dynamodb::Client::new(&sdk),
        s3: aws_sdk_s3::Client::from_conf(s3),
        vectors: aws_sdk_s3vectors::Client::new(&sdk),
        ssm: aws_sdk_ssm::Client::new(&sdk),
    }
}

/// The host's resources, under fresh names.
pub struct Host {
    pub table: String,
    pub bucket: String,
    pub vector_bucket: String,
    pub index: String,
    pub assistant: String,
    /// Objects (key, ETag) the stand-in has already ingested: S3 sends one event per write.
    pub seen: Mutex<HashSet<(String, String)>>,
}

pub async fn host(aws: &Aws) -> Host {
    let h = Host {
        table: crate::common::unique("rag-assistants"),
        bucket: crate::common::unique("rag-documents"),
        vector_bucket: crate::common::unique("rag-vectors"),
        index: "rag-vector-index-v1".to_owned(),
        assistant: format!("AST-{}", &JobId::new().as_str()[4..16]),
        seen: Mutex::default(),
    };
    let key = |name: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(t)
            .build()
            .unwrap()
    };
    let attr = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    aws.ddb
        .create_table()
        .table_name(&h.table)
        .key_schema(key("PK", KeyType::Hash))
        .key_schema(key("SK", KeyType::Range))
        .attribute_definitions(attr("PK"))
        .attribute_definitions(attr("SK"))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    aws.s3
        .create_bucket()
        .bucket(&h.bucket)
        .send()
        .await
        .unwrap();
    aws.vectors
        .create_vector_bucket()
        .vector_bucket_name(&h.vector_bucket)
        .send()
        .await
        .unwrap();
    aws.vectors
        .create_index()
        .vector_bucket_name(&h.vector_bucket)
        .index_name(&h.index)
        .data_type(DataType::Float32)
        .dimension(4)
        .distance_metric(DistanceMetric::Cosine)
        .send()
        .await
        .unwrap();
    // The assistant itself, as the host keeps it.
    aws.ddb
        .put_item()
        .table_name(&h.table)
        .item("PK", s(format!("AST#{}", h.assistant)))
        .item("SK", s("METADATA"))
        .item("ownerId", s("user-1"))
        .item("visibility", s("private"))
        .send()
        .await
        .unwrap();
    h
}

pub fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

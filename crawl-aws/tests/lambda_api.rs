//! The whole job API on Lambda: API Gateway HTTP API (payload 2.0) events, as
//! `lambda_http`'s own `ApiGatewayV2httpRequest`, through [`ApiLambda::handle`] against moto
//! (DynamoDB job store and assistants table, Step Functions executions, S3 documents).
//! Needs `KB_CRAWL_AWS_ENDPOINT`; skipped without it unless `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

use std::sync::Arc;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use axum::body::to_bytes;
use crawl_api::{ApiState, SiteGuard};
use crawl_aws::api::{ApiLambda, AssistantTableAuthorizer, PRINCIPAL_HEADER};
use crawl_aws::sfn::{state_machine, SfnOptions, StepFunctionsRunner};
use crawl_aws::{DynamoJobStore, S3Sink};
use crawl_core::conformance::sample_doc;
use crawl_core::{Guardrails, JobId, NoopIngestor, Sink};
use lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequest;
use lambda_http::request::LambdaRequest;
use serde_json::{json, Value};

const HOST: &str = "abc123.execute-api.us-east-1.amazonaws.com";

/// A Cognito-style JWT authorizer context for `sub` (none when `None`: no token).
fn event(method: &str, path: &str, sub: Option<&str>, body: Option<Value>) -> lambda_http::Request {
    event_with(method, path, sub, body, json!({}))
}

fn event_with(
    method: &str,
    path: &str,
    sub: Option<&str>,
    body: Option<Value>,
    extra_headers: Value,
) -> lambda_http::Request {
    let mut headers = json!({
        "host": HOST,
        "user-agent": "Mozilla/5.0",
        "accept": "application/json",
        "x-forwarded-proto": "https",
        "x-forwarded-for": "203.0.113.7"
    });
    if body.is_some() {
        headers["content-type"] = json!("application/json");
    }
    if sub.is_some() {
        headers["authorization"] = json!("Bearer eyJraWQiOiJ0ZXN0In0.e30.c2ln");
    }
    for (k, v) in extra_headers.as_object().unwrap() {
        headers[k] = v.clone();
    }
    let (raw_path, query) = path.split_once('?').unwrap_or((path, ""));
    let mut ctx = json!({
        "accountId": "123456789012",
        "apiId": "abc123",
        "domainName": HOST,
        "domainPrefix": "abc123",
        "http": {
            "method": method,
            "path": raw_path,
            "protocol": "HTTP/1.1",
            "sourceIp": "203.0.113.7",
            "userAgent": "Mozilla/5.0"
        },
        "requestId": "JKJaXmPLvHcESHA=",
        "routeKey": format!("{method} {raw_path}"),
        "stage": "$default",
        "time": "01/Dec/2026:11:00:00 +0000",
        "timeEpoch": 1_795_000_000_000u64
    });
    if let Some(sub) = sub {
        ctx["authorizer"] = json!({
            "jwt": {
                "claims": {
                    "sub": sub,
                    "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Example",
                    "client_id": "example-client",
                    "token_use": "access"
                },
                "scopes": null
            }
        });
    }
    let ev = json!({
        "version": "2.0",
        "routeKey": format!("{method} {raw_path}"),
        "rawPath": raw_path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": ctx,
        "body": body.map(|b| b.to_string()),
        "isBase64Encoded": false
    });
    let typed: ApiGatewayV2httpRequest = serde_json::from_value(ev).expect("a v2 event");
    LambdaRequest::ApiGatewayV2(typed).into()
}

async fn call(api: &ApiLambda, req: lambda_http::Request) -> (u16, Value) {
    let resp = api.handle(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = to_bytes(resp.into_body(), 1 << 20).await.unwrap();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    (status, body)
}

fn http() -> aws_sdk_sfn::config::SharedHttpClient {
    use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
    aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https()
}

struct Setup {
    api: ApiLambda,
    jobs: Arc<DynamoJobStore>,
    sink: Arc<S3Sink>,
    runner: StepFunctionsRunner,
    sfn: aws_sdk_sfn::Client,
}

async fn assistants_table(endpoint: &str) -> String {
    let name = common::unique("assistants");
    let conf = aws_sdk_dynamodb::Config::builder()
        .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
        .http_client(http())
        .endpoint_url(endpoint)
        .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "testing", "testing", None, None, "test",
        ))
        .build();
    let ddb = aws_sdk_dynamodb::Client::from_conf(conf);
    ddb.create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("id")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("id")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    for (id, owner, editors) in [
        ("asst-a", "alice", vec!["carol"]),
        ("asst-b", "bob", vec![]),
    ] {
        let mut put = ddb
            .put_item()
            .table_name(&name)
            .item("id", AttributeValue::S(id.into()))
            .item("ownerId", AttributeValue::S(owner.into()));
        if !editors.is_empty() {
            put = put.item(
                "editorIds",
                AttributeValue::Ss(editors.iter().map(|s| s.to_string()).collect()),
            );
        }
        put.send().await.unwrap();
    }
    name
}

async fn setup(endpoint: &str) -> Setup {
    let jobs = Arc::new(common::jobs(endpoint).await);
    let sink = Arc::new(common::sink(endpoint, "kb").await);
    let conf = aws_sdk_sfn::Config::builder()
        .behavior_version(aws_sdk_sfn::config::BehaviorVersion::latest())
        .http_client(http())
        .endpoint_url(endpoint)
        .region(aws_sdk_sfn::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_sfn::config::Credentials::new(
            "testing", "testing", None, None, "test",
        ))
        .build();
    let sfn = aws_sdk_sfn::Client::from_conf(conf);
    let opts = SfnOptions::default()
        .with_function_prefix("arn:aws:lambda:us-east-1:123456789012:function:kb-crawl-");
    let sm = sfn
        .create_state_machine()
        .name(common::unique("sm"))
        .definition(state_machine(&opts).to_string())
        .role_arn("arn:aws:iam::123456789012:role/kb-crawl-sfn")
        .send()
        .await
        .unwrap();
    let runner = StepFunctionsRunner::new(
        sm.state_machine_arn(),
        Arc::clone(&jobs),
        Some(endpoint.to_owned()),
    )
    .await
    .unwrap()
    .with_guardrails(Guardrails::default());
    let authorizer = AssistantTableAuthorizer::builder()
        .table(assistants_table(endpoint).await)
        .endpoint_url(endpoint)
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    let state = ApiState::new(
        Arc::new(runner.clone()),
        Arc::clone(&jobs) as _,
        Arc::clone(&sink) as _,
        Arc::new(NoopIngestor),
    )
    .authorizer(Arc::new(authorizer))
    .site_guard(SiteGuard::default().with_hosts(["*"]));
    Setup {
        api: ApiLambda::new(state, "sub"),
        jobs,
        sink,
        runner,
        sfn,
    }
}

async fn execution_status(s: &Setup, job: &JobId) -> String {
    s.sfn
        .describe_execution()
        .execution_arn(s.runner.execution_arn(job))
        .send()
        .await
        .unwrap()
        .status()
        .as_str()
        .to_owned()
}

#[tokio::test]
async fn start_status_list_and_delete_run_serverless() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let s = setup(&endpoint).await;
    let body = json!({"url": "https://www.example.edu/registrar", "maxDepth": 2, "maxPages": 50});
    let (status, started) = call(
        &s.api,
        event(
            "POST",
            "/assistants/asst-a/crawl",
            Some("alice"),
            Some(body),
        ),
    )
    .await;
    assert_eq!(status, 202, "{started}");
    assert_eq!(started["status"], "RUNNING", "{started}");
    assert!(started["startedAt"].is_string(), "{started}");
    let job: JobId = started["crawlJobId"].as_str().unwrap().parse().unwrap();
    // A Step Functions execution named after the job, and the record in DynamoDB.
    assert_eq!(execution_status(&s, &job).await, "RUNNING");
    let rec = crawl_core::JobStore::get(&*s.jobs, &job)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.assistant_id.as_deref(), Some("asst-a"));
    assert_eq!(rec.request.max_pages, 50);

    // An editor reads it too.
    let one = format!("/assistants/asst-a/crawl/{job}");
    let (status, got) = call(&s.api, event("GET", &one, Some("carol"), None)).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["crawlJobId"], job.as_str());
    assert_eq!(got["status"], "RUNNING");

    let (status, list) = call(
        &s.api,
        event(
            "GET",
            "/assistants/asst-a/crawls?limit=10",
            Some("alice"),
            None,
        ),
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<&str> = list["crawls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["crawlJobId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [job.as_str()], "{list}");

    // A document the crawl stored; DELETE stops the execution and removes it and the job.
    let doc = sample_doc(
        &job,
        "https://www.example.edu/registrar",
        Some("Registrar"),
        "x\n",
    );
    s.sink.put(&doc).await.unwrap();
    assert_eq!(s.sink.list(&job).await.unwrap().len(), 1);
    let (status, deleted) = call(&s.api, event("DELETE", &one, Some("alice"), None)).await;
    assert_eq!(status, 204, "{deleted}");
    assert!(s.sink.list(&job).await.unwrap().is_empty());
    assert_eq!(execution_status(&s, &job).await, "ABORTED");
    let (status, _) = call(&s.api, event("GET", &one, Some("alice"), None)).await;
    assert_eq!(status, 404);
    let (_, list) = call(
        &s.api,
        event("GET", "/assistants/asst-a/crawls", Some("alice"), None),
    )
    .await;
    assert_eq!(list["crawls"], json!([]), "{list}");

    // Bad input names the field.
    let (status, err) = call(
        &s.api,
        event(
            "POST",
            "/assistants/asst-a/crawl",
            Some("alice"),
            Some(json!({"url": "https://www.example.edu/", "maxDepth": 9})),
        ),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert!(err.to_string().contains("maxDepth"), "{err}");
    // HTTP APIs validate no body: the router refuses unknown fields (the policy is the
    // deployment's, never the caller's).
    let (status, err) = call(
        &s.api,
        event(
            "POST",
            "/assistants/asst-a/crawl",
            Some("alice"),
            Some(json!({"url": "https://www.example.edu/", "allowPrivateNetwork": true})),
        ),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert!(err.to_string().contains("allowPrivateNetwork"), "{err}");
}

#[tokio::test]
async fn no_token_is_401_and_another_users_assistant_is_403() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let s = setup(&endpoint).await;
    let body = || Some(json!({"url": "https://www.example.edu/"}));
    // Bob's job, on his assistant.
    let (status, started) = call(
        &s.api,
        event("POST", "/assistants/asst-b/crawl", Some("bob"), body()),
    )
    .await;
    assert_eq!(status, 202, "{started}");
    let job = started["crawlJobId"].as_str().unwrap().to_owned();
    let one = format!("/assistants/asst-b/crawl/{job}");
    let routes = [
        ("POST", "/assistants/asst-b/crawl".to_owned(), body()),
        ("GET", one.clone(), None),
        ("DELETE", one.clone(), None),
        ("GET", "/assistants/asst-b/crawls".to_owned(), None),
    ];
    for (method, path, body) in &routes {
        let (status, err) = call(&s.api, event(method, path, None, body.clone())).await;
        assert_eq!(status, 401, "{method} {path} without a token: {err}");
        let (status, err) = call(&s.api, event(method, path, Some("alice"), body.clone())).await;
        assert_eq!(status, 403, "{method} {path} as alice: {err}");
        // An unknown assistant answers like someone else's.
        let other = path.replace("asst-b", "asst-zzz");
        let (status, err) = call(&s.api, event(method, &other, Some("alice"), body.clone())).await;
        assert_eq!(status, 403, "{method} {other}: {err}");
    }
    // The principal header is the adapter's: a client's own value is dropped.
    let spoof = json!({ PRINCIPAL_HEADER: "bob" });
    let (status, _) = call(&s.api, event_with("GET", &one, None, None, spoof.clone())).await;
    assert_eq!(status, 401, "a forged principal header without a token");
    let (status, _) = call(&s.api, event_with("GET", &one, Some("alice"), None, spoof)).await;
    assert_eq!(
        status, 403,
        "a forged principal header next to alice's token"
    );
    // Bob's job is untouched and still his.
    let (status, got) = call(&s.api, event("GET", &one, Some("bob"), None)).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["crawlJobId"], job.as_str());
}

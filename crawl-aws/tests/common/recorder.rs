//! A stand-in for Amazon Bedrock's agent API on 127.0.0.1 (moto has none): it records every
//! request (method, path, the `Authorization` header, the JSON body) and answers
//! `StartIngestionJob` as Bedrock does, with a new ingestion job.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use serde_json::{json, Value};

/// One request the recorder received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

/// A running recorder.
#[derive(Debug)]
pub struct Recorder {
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl Recorder {
    /// Serves on a fresh loopback port.
    pub async fn start() -> Recorder {
        let log: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let seen = Arc::clone(&log);
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let seen = Arc::clone(&seen);
                async move {
                    let path = uri.path().to_owned();
                    let n = {
                        let mut log = seen.lock().unwrap();
                        log.push(Recorded {
                            method: method.to_string(),
                            path: path.clone(),
                            authorization: headers
                                .get("authorization")
                                .and_then(|v| v.to_str().ok())
                                .map(str::to_owned),
                            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                        });
                        log.len()
                    };
                    let parts: Vec<&str> = path.split('/').collect();
                    let (kb, ds) = match parts.as_slice() {
                        ["", "knowledgebases", kb, "datasources", ds, "ingestionjobs", ..] => {
                            (kb.to_string(), ds.to_string())
                        }
                        _ => return (StatusCode::NOT_FOUND, String::new()),
                    };
                    let job = json!({"ingestionJob": {
                        "knowledgeBaseId": kb,
                        "dataSourceId": ds,
                        "ingestionJobId": format!("JOB{n:06}"),
                        "status": "STARTING",
                        "startedAt": "2026-12-01T12:00:00Z",
                        "updatedAt": "2026-12-01T12:00:00Z",
                    }});
                    (StatusCode::ACCEPTED, job.to_string())
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Recorder {
            url: format!("http://{addr}"),
            log,
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// Checks that `r` is a SigV4-signed `StartIngestionJob` for `kb` / `ds`.
    pub fn assert_start_ingestion_job(r: &Recorded, kb: &str, ds: &str) {
        assert_eq!(r.method, "PUT", "{r:?}");
        assert_eq!(
            r.path.trim_end_matches('/'),
            format!("/knowledgebases/{kb}/datasources/{ds}/ingestionjobs"),
            "{r:?}"
        );
        let auth = r.authorization.as_deref().unwrap_or_default();
        assert!(
            auth.starts_with("AWS4-HMAC-SHA256 Credential=testing/")
                && auth.contains("/us-east-1/bedrock/aws4_request")
                && auth.contains("Signature="),
            "{r:?}"
        );
        let token = r.body["clientToken"].as_str().unwrap_or_default();
        assert!(token.starts_with("kb-crawl-"), "{r:?}");
    }
}

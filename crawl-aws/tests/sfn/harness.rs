//! A private moto (S3, DynamoDB, Step Functions in execute mode) whose Lambda calls reach a
//! local invoke proxy that runs the real handlers in this process.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use axum::Router;
use crawl_aws::lambda::{dispatch, Services};
use crawl_aws::sfn::{HandlerError, ERR_STORAGE};
use crawl_aws::S3Sink;
use crawl_core::Guardrails;
use serde_json::{json, Value};

#[path = "calls.rs"]
pub mod calls;
pub use calls::Calls;

/// Fault injection and a log of what the proxy invoked.
#[derive(Debug, Default)]
pub struct Faults {
    /// Scrape items are delivered twice.
    pub duplicate_scrapes: bool,
    /// Scrapes of URLs ending with one of these fail (non-retryable).
    pub failing_paths: Vec<String>,
    /// Handler names invoked, in order.
    pub invoked: Vec<String>,
    /// Wall time of each handler run, by handler name.
    pub durations: Vec<(String, Duration)>,
    /// S3 PUTs of objects whose key ends with this name fail (503 SlowDown) while the plan
    /// handler has been invoked at most `fail_put_in_plan_runs` times: a plan run that dies
    /// after admitting a level and before its list is written. Needs
    /// [`Harness::start_with_sink_through_proxy`].
    pub fail_put_of: Option<String>,
    /// See `fail_put_of`.
    pub fail_put_in_plan_runs: usize,
    /// S3 PUTs failed so far by `fail_put_of`.
    pub failed_puts: usize,
    /// S3 PUTs of documents (not the crawl's `sfn-*` state) whose body contains this text
    /// are refused for good (403 AccessDenied): one page's store fails in the handler.
    /// Needs [`Harness::start_with_sink_through_proxy`].
    pub deny_document_put_containing: Option<String>,
    /// PUTs refused so far by `deny_document_put_containing`.
    pub denied_puts: usize,
    /// Handler invocations wait while this is set (at most 60 s): an execution that cannot
    /// finish before the test acts on it, however loaded the machine.
    pub hold_invocations: bool,
}

/// The loopback ingestion webhook every harness's finalise hands completed jobs to.
#[derive(Debug, Default)]
pub struct Webhook {
    /// Deliveries to answer with 503 before accepting.
    pub fail_next: usize,
    /// Every request received: (signature header, delivery header, body, status answered).
    pub received: Vec<(String, String, Vec<u8>, u16)>,
    /// The timestamp header of each request received, in the same order.
    pub timestamps: Vec<String>,
}

/// The webhook's HMAC secret.
pub const WEBHOOK_SECRET: &[u8] = b"harness-secret";

async fn webhook_handler(
    State(hook): State<Arc<Mutex<Webhook>>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let mut h = hook.lock().unwrap();
    let status = if h.fail_next > 0 {
        h.fail_next -= 1;
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    h.timestamps
        .push(header(crawl_api::ingest::TIMESTAMP_HEADER));
    h.received.push((
        header(crawl_api::ingest::SIGNATURE_HEADER),
        header(crawl_api::ingest::DELIVERY_HEADER),
        body.to_vec(),
        status.as_u16(),
    ));
    status
}

/// The deployed state machine rewritten for moto, which runs neither `ItemBatcher` nor
/// EXPRESS children: the map's `ItemBatcher` is removed and its children run as STANDARD;
/// the harness's proxy then does the batcher's grouping where moto can run it, on the
/// ItemReader's read of the level list (see [`Harness::set_batch_size`]). moto runs a
/// map's children inside the parent, whose `$$.Execution.StartTime` they see: the
/// ScrapePage Task's `ExecutionStartTime` is left out (the handler then budgets from its
/// invocation's start; tests/lambda_finalise.rs covers the child's budget). Returns the
/// definition and the batch size it had.
pub fn for_moto(mut def: Value) -> (Value, usize) {
    let map = &mut def["States"][crawl_aws::sfn::states::SCRAPE_LEVEL];
    let size = map["ItemBatcher"]["MaxItemsPerBatch"]
        .as_u64()
        .expect("the deployed map has an ItemBatcher") as usize;
    map.as_object_mut().unwrap().remove("ItemBatcher");
    let cfg = &mut map["ItemProcessor"]["ProcessorConfig"];
    assert_eq!(cfg["ExecutionType"], "EXPRESS");
    cfg["ExecutionType"] = json!("STANDARD");
    let params =
        &mut map["ItemProcessor"]["States"][crawl_aws::sfn::states::SCRAPE_PAGE]["Parameters"];
    assert!(
        params
            .as_object_mut()
            .unwrap()
            .remove("ExecutionStartTime.$")
            .is_some(),
        "the deployed ScrapePage passes its child's start time"
    );
    (def, size)
}

/// Groups a level list (a JSON array of page items) as the `ItemBatcher` does: items in
/// order, `size` to a batch, each batch `{"Items": [...]}`.
pub fn batches(list: &[u8], size: usize) -> Option<Vec<u8>> {
    let items: Vec<Value> = serde_json::from_slice(list).ok()?;
    let grouped: Vec<Value> = items
        .chunks(size.max(1))
        .map(|c| json!({ "Items": c }))
        .collect();
    serde_json::to_vec(&grouped).ok()
}

#[derive(Clone)]
struct ProxyState {
    svc: Services,
    moto: String,
    http: reqwest::Client,
    faults: Arc<Mutex<Faults>>,
    calls: Arc<Mutex<Calls>>,
    batch_size: Arc<Mutex<usize>>,
}

pub struct Harness {
    pub moto_url: String,
    pub svc: Services,
    pub faults: Arc<Mutex<Faults>>,
    pub webhook: Arc<Mutex<Webhook>>,
    /// Every AWS call that went through the proxy (all of them with [`Harness::start_counting`]).
    pub calls: Arc<Mutex<Calls>>,
    batch_size: Arc<Mutex<usize>>,
    http: reqwest::Client,
    moto: Child,
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.moto.kill();
        let _ = self.moto.wait();
    }
}

fn python() -> PathBuf {
    std::env::var_os("KB_CRAWL_MOTO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/moto/bin/python")
        })
}

async fn free_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

/// Starts moto on a port of its own and waits until it answers as moto. A port picked free
/// is free only when picked: another test's server can bind it before moto does, and then
/// moto exits and that server answers the probe (a 404 for `/moto-api/`, which a probe
/// that took any answer took for moto). So the probe wants moto's 200, and a moto that
/// exited or a port that answers otherwise is tried again on a new port.
async fn spawn_moto(
    py: &Path,
    script: &Path,
    proxy_port: u16,
    http: &reqwest::Client,
) -> (Child, String) {
    for _ in 0..5 {
        let port = free_port().await;
        let mut moto = Command::new(py)
            .arg(script)
            .arg("127.0.0.1")
            .arg(port.to_string())
            .env("MOTO_PORT", proxy_port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto");
        let url = format!("http://127.0.0.1:{port}");
        for _ in 0..120 {
            if matches!(moto.try_wait(), Ok(Some(_))) {
                break;
            }
            match http.get(format!("{url}/moto-api/")).send().await {
                Ok(r) if r.status().is_success() => return (moto, url),
                Ok(_) => break,
                Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
            }
        }
        let _ = moto.kill();
        let _ = moto.wait();
    }
    panic!("moto did not start on any of five ports");
}

impl Harness {
    pub async fn start() -> Harness {
        Harness::start_inner(false, false).await
    }

    /// A harness whose handlers reach S3 through the proxy, so `Faults::fail_put_of` applies.
    pub async fn start_with_sink_through_proxy() -> Harness {
        Harness::start_inner(true, false).await
    }

    /// A harness whose handlers reach S3 and DynamoDB through the proxy, so that
    /// [`Harness::calls`] counts every AWS call of a crawl.
    pub async fn start_counting() -> Harness {
        Harness::start_inner(true, true).await
    }

    /// The batch size the proxy groups level lists by, for the state machine's ItemReader
    /// (the `MaxItemsPerBatch` that [`for_moto`] removed).
    pub fn set_batch_size(&self, size: usize) {
        *self.batch_size.lock().unwrap() = size;
    }

    /// `def` (a generated state machine) as moto runs it: [`for_moto`], its batch size
    /// given to the proxy. Returns the definition to create.
    pub fn definition_for_moto(&self, def: Value) -> String {
        let (def, size) = for_moto(def);
        self.set_batch_size(size);
        def.to_string()
    }

    /// Takes the calls counted so far (the count starts again from zero).
    pub fn take_calls(&self) -> Calls {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    async fn start_inner(sink_through_proxy: bool, tables_through_proxy: bool) -> Harness {
        let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy_port = proxy.local_addr().unwrap().port();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/moto_server.py");
        let py = python();
        assert!(
            py.exists(),
            "{} missing: run scripts/moto.sh start once (it installs moto into .venv/moto) \
             or set KB_CRAWL_MOTO_PYTHON",
            py.display()
        );
        let http = reqwest::Client::new();
        let (moto, moto_url) = spawn_moto(&py, &script, proxy_port, &http).await;
        http.post(format!("{moto_url}/moto-api/config"))
            .header("content-type", "application/json")
            .body(
                json!({"stepfunctions": {"execute_state_machine": true}, "lambda": {"use_docker": false}})
                    .to_string(),
            )
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap();

        let bucket = crate::common::unique("b");
        let sink_at = |endpoint: String| {
            S3Sink::builder()
                .bucket(bucket.clone())
                .prefix("kb")
                .endpoint_url(endpoint)
                .region("us-east-1")
                .static_credentials("testing", "testing")
                .build()
        };
        let mut sink = sink_at(moto_url.clone()).await.unwrap();
        sink.create_bucket_if_missing().await.unwrap();
        if sink_through_proxy {
            // The proxy serves once the services exist; the bucket is made directly above.
            sink = sink_at(format!("http://127.0.0.1:{proxy_port}"))
                .await
                .unwrap();
        }
        let proxy_url = format!("http://127.0.0.1:{proxy_port}");
        let table_url = if tables_through_proxy {
            &proxy_url
        } else {
            &moto_url
        };
        // Each table is created directly on moto; the handlers reach it at `table_url`.
        macro_rules! table {
            ($t:ty, $kind:expr) => {{
                let name = crate::common::unique($kind);
                let at = |url: &str| {
                    <$t>::builder()
                        .table(name.clone())
                        .endpoint_url(url)
                        .region("us-east-1")
                        .static_credentials("testing", "testing")
                        .build()
                };
                at(&moto_url)
                    .await
                    .unwrap()
                    .create_table_if_missing()
                    .await
                    .unwrap();
                at(table_url).await.unwrap()
            }};
        }
        let dedup = table!(crawl_aws::DynamoDedup, "dedup");
        let jobs = table!(crawl_aws::DynamoJobStore, "jobs");
        let sources = table!(crawl_aws::DynamoSourceStore, "sources");
        let webhook = Arc::new(Mutex::new(Webhook::default()));
        let hook_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let hook_url = format!("http://{}/ingest", hook_listener.local_addr().unwrap());
        let hook_app = Router::new()
            .route("/ingest", axum::routing::post(webhook_handler))
            .with_state(Arc::clone(&webhook));
        tokio::spawn(async move {
            let _ = axum::serve(hook_listener, hook_app).await;
        });
        // One attempt per finalise run: a refused delivery fails the run, and Step
        // Functions' retry of finalise is what delivers again.
        let ingestor = crawl_api::ingest::WebhookIngestor::new(hook_url, WEBHOOK_SECRET)
            .unwrap()
            .attempts(1);
        let svc = Services::new(sink, dedup, jobs)
            .with_guardrails(Guardrails::lifted())
            .with_policy(
                crawl_core::CrawlPolicy::default()
                    .with_allow_private_network(true)
                    // Counting: the host limiter takes its slot per fetch, as deployed
                    // (at 20 requests/s, so that 500 pages take 25 s, not 250).
                    .with_rate(tables_through_proxy.then_some(20.0)),
            )
            .with_ingestor(Arc::new(ingestor))
            .with_sources(Arc::new(sources));
        let faults = Arc::new(Mutex::new(Faults::default()));
        let calls = Arc::new(Mutex::new(Calls::default()));
        let batch_size = Arc::new(Mutex::new(1));
        let state = ProxyState {
            svc: svc.clone(),
            moto: moto_url.clone(),
            http: http.clone(),
            faults: Arc::clone(&faults),
            calls: Arc::clone(&calls),
            batch_size: Arc::clone(&batch_size),
        };
        let app = Router::new().fallback(proxy_handler).with_state(state);
        tokio::spawn(async move {
            let _ = axum::serve(proxy, app).await;
        });
        Harness {
            moto_url,
            svc,
            faults,
            webhook,
            calls,
            batch_size,
            http,
            moto,
        }
    }

    /// One Step Functions JSON-protocol call to moto.
    pub async fn sfn(&self, action: &str, body: Value) -> Value {
        let r = self
            .http
            .post(&self.moto_url)
            .header("content-type", "application/x-amz-json-1.0")
            .header("x-amz-target", format!("AWSStepFunctions.{action}"))
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/states/aws4_request, \
                 SignedHeaders=host, Signature=0",
            )
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = r.status();
        let v: Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap_or(Value::Null);
        assert!(status.is_success(), "{action}: {status} {v}");
        v
    }
}

fn lambda_error(e: &HandlerError) -> Response {
    let mut r = Response::new(Body::from(serde_json::to_vec(e).unwrap()));
    r.headers_mut().insert(
        "x-amz-function-error",
        HeaderValue::from_static("Unhandled"),
    );
    r
}

async fn proxy_handler(State(st): State<ProxyState>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let (parts, body) = req.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    if parts.method == "POST"
        && path.starts_with("/2015-03-31/functions/")
        && path.ends_with("/invocations")
    {
        let name = path
            .trim_start_matches("/2015-03-31/functions/")
            .trim_end_matches("/invocations")
            .replace("%3A", ":");
        let handler = name
            .rsplit(':')
            .next()
            .unwrap_or_default()
            .trim_start_matches("kb-crawl-")
            .to_owned();
        for _ in 0..3000 {
            if !st.faults.lock().unwrap().hold_invocations {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let event: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let (dup, fail) = {
            let mut f = st.faults.lock().unwrap();
            f.invoked.push(handler.clone());
            // A page, or a batch: the whole invocation fails (a crashed worker).
            let urls: Vec<&str> = match event["Items"].as_array() {
                Some(items) => items.iter().filter_map(|i| i["url"].as_str()).collect(),
                None => event["url"].as_str().into_iter().collect(),
            };
            let fail = handler == "scrape"
                && urls
                    .iter()
                    .any(|u| f.failing_paths.iter().any(|p| u.ends_with(p)));
            (handler == "scrape" && f.duplicate_scrapes, fail)
        };
        if fail {
            return lambda_error(&HandlerError::new(ERR_STORAGE, "injected failure"));
        }
        if dup {
            let _ = dispatch(&st.svc, &handler, event.clone()).await;
        }
        let t0 = std::time::Instant::now();
        let result = dispatch(&st.svc, &handler, event).await;
        let took = t0.elapsed();
        st.faults
            .lock()
            .unwrap()
            .durations
            .push((handler.clone(), took));
        st.calls.lock().unwrap().lambda_run(&handler, took);
        return match result {
            Ok(v) => Response::new(Body::from(serde_json::to_vec(&v).unwrap())),
            Err(e) => lambda_error(&e),
        };
    }
    let put_fails = parts.method == "PUT" && {
        let mut f = st.faults.lock().unwrap();
        let plan_runs = f.invoked.iter().filter(|n| *n == "plan").count();
        let hit = f.fail_put_of.as_deref().is_some_and(|n| path.ends_with(n))
            && plan_runs <= f.fail_put_in_plan_runs;
        if hit {
            f.failed_puts += 1;
        }
        hit
    };
    let denied = parts.method == "PUT" && !path.contains("/sfn-") && {
        let mut f = st.faults.lock().unwrap();
        let hit = f
            .deny_document_put_containing
            .as_deref()
            .is_some_and(|needle| {
                bytes
                    .windows(needle.len().max(1))
                    .any(|w| w == needle.as_bytes())
            });
        if hit {
            f.denied_puts += 1;
        }
        hit
    };
    if denied {
        let mut out = Response::new(Body::from(
            "<Error><Code>AccessDenied</Code><Message>injected</Message></Error>",
        ));
        *out.status_mut() = StatusCode::FORBIDDEN;
        return out;
    }
    if put_fails {
        let mut out = Response::new(Body::from(
            "<Error><Code>SlowDown</Code><Message>injected</Message></Error>",
        ));
        *out.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        return out;
    }
    let pq = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or(path);
    let mut fwd = st
        .http
        .request(parts.method.clone(), format!("{}{pq}", st.moto))
        .body(bytes.clone());
    for (k, v) in &parts.headers {
        if k != "host" && k != "content-length" {
            fwd = fwd.header(k, v);
        }
    }
    let query = parts.uri.query().unwrap_or_default().to_owned();
    // The state machine's ItemReader (moto's interpreter, not the handlers' Rust SDK)
    // reading a level list: grouped as the deployed map's ItemBatcher would.
    let item_reader = parts.method == "GET"
        && !parts
            .headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .contains("aws-sdk-rust")
        && path_is_level_list(parts.uri.path());
    match fwd.send().await {
        Ok(r) => {
            let status = r.status();
            let headers = r.headers().clone();
            let mut body = r.bytes().await.unwrap_or_default();
            if item_reader && status.is_success() {
                let size = *st.batch_size.lock().unwrap();
                if let Some(grouped) = batches(&body, size) {
                    body = Bytes::from(grouped);
                }
            }
            st.calls.lock().unwrap().request(
                &signing_service(&parts.headers),
                parts.method.as_str(),
                parts.uri.path(),
                &query,
                &parts.headers,
                &bytes,
                &body,
            );
            let mut out = Response::new(Body::from(body));
            *out.status_mut() = status;
            for (k, v) in &headers {
                let regrouped =
                    item_reader && (k == "etag" || k.as_str().starts_with("x-amz-checksum"));
                if k != "content-length" && k != "transfer-encoding" && !regrouped {
                    out.headers_mut().append(k, v.clone());
                }
            }
            out
        }
        Err(e) => {
            let mut out = Response::new(Body::from(e.to_string()));
            *out.status_mut() = StatusCode::BAD_GATEWAY;
            out
        }
    }
}

/// Whether an S3 path is a job's level list (`.../sfn-level-N.json`).
fn path_is_level_list(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .and_then(|n| n.strip_prefix("sfn-level-"))
        .and_then(|n| n.strip_suffix(".json"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The service a request is signed for (`s3`, `dynamodb`, `states`...), from the
/// credential scope of its `Authorization` header.
fn signing_service(headers: &axum::http::HeaderMap) -> String {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.split("Credential=").nth(1))
        .and_then(|c| c.split('/').nth(3))
        .unwrap_or("unsigned")
        .to_owned()
}

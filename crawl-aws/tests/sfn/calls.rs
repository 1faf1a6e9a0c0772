//! Every AWS call the serverless crawl makes, counted at the harness's proxy by service and
//! operation (the handlers' SDK clients and moto's Step Functions interpreter both reach
//! AWS through it), with DynamoDB capacity units and Lambda run times.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

/// The partition key of the host limiter's slots (crawl-aws/src/dynamo/limiter.rs).
const HOST_SLOT_PARTITION: &str = "\u{1}host-limiter";

/// What one crawl (or any stretch of calls) cost in requests.
#[derive(Debug, Default, Clone)]
pub struct Calls {
    /// `"s3 PutObject"`, `"dynamodb TransactWriteItems"`, `"lambda Invoke scrape"` → count.
    pub ops: BTreeMap<String, u64>,
    /// DynamoDB on-demand write request units (1 per item written, 2 per item of a
    /// transaction; items are under 1 KB here).
    pub write_units: f64,
    /// The part of `write_units` spent on the host limiter's slot (its conditional
    /// `UpdateItem`s, failed ones included). It depends on timing: an idle origin costs a
    /// second update, and concurrent workers racing for an idle slot retry, so it is
    /// reported on its own and kept out of the bounded per-page figure.
    pub slot_write_units: f64,
    /// `write_units` by table role and operation (`"slot UpdateItem"`, `"dedup PutItem"`,
    /// `"jobs UpdateItem"`, `"TransactWriteItems"`...): where the units go.
    pub write_units_by: BTreeMap<String, f64>,
    /// DynamoDB read request units (0.5 per eventually consistent item read or 4 KB of a
    /// query's answer, 1 when strongly consistent, 2 per item of a transaction).
    pub read_units: f64,
    /// Lambda: handler name → (invocations, summed run time).
    pub lambda: BTreeMap<String, (u64, Duration)>,
}

impl Calls {
    fn bump(&mut self, key: String) {
        *self.ops.entry(key).or_default() += 1;
    }

    /// Counts one Lambda invocation of `handler` that ran for `took`.
    pub fn lambda_run(&mut self, handler: &str, took: Duration) {
        self.bump(format!("lambda Invoke {handler}"));
        let e = self.lambda.entry(handler.to_owned()).or_default();
        e.0 += 1;
        e.1 += took;
    }

    /// Counts one request to S3 or DynamoDB (`service` from the request's signature scope).
    #[allow(clippy::too_many_arguments)] // one request's parts, as the proxy has them
    pub fn request(
        &mut self,
        service: &str,
        method: &str,
        path: &str,
        query: &str,
        headers: &axum::http::HeaderMap,
        body: &[u8],
        answer: &[u8],
    ) {
        match service {
            "s3" => self.bump(format!("s3 {}", s3_operation(method, path, query, headers))),
            "dynamodb" => {
                let op = headers
                    .get("x-amz-target")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|t| t.split('.').nth(1))
                    .unwrap_or("Unknown")
                    .to_owned();
                let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
                let (w, r) = dynamo_units(&op, &req, answer.len());
                self.write_units += w;
                let slot = op == "UpdateItem"
                    && req["Key"]["pk"]["S"].as_str() == Some(HOST_SLOT_PARTITION);
                if slot {
                    self.slot_write_units += w;
                }
                if w > 0.0 {
                    let table = match slot {
                        true => "slot",
                        false => table_role(req["TableName"].as_str().unwrap_or_default()),
                    };
                    *self
                        .write_units_by
                        .entry(format!("{table} {op}").trim_start().to_owned())
                        .or_default() += w;
                }
                self.read_units += r;
                self.bump(format!("dynamodb {op}"));
            }
            other => self.bump(format!("{other} {method} {path}")),
        }
    }

    /// Count of one operation key.
    pub fn get(&self, key: &str) -> u64 {
        self.ops.get(key).copied().unwrap_or_default()
    }

    /// Sum of the counts whose key starts with `prefix`.
    pub fn sum(&self, prefix: &str) -> u64 {
        self.ops
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| v)
            .sum()
    }

    /// S3 requests billed at the PUT tier (PUT, COPY, POST, LIST).
    pub fn s3_put_tier(&self) -> u64 {
        [
            "PutObject",
            "CopyObject",
            "DeleteObjects",
            "ListObjectsV2",
            "CreateBucket",
        ]
        .iter()
        .map(|o| self.get(&format!("s3 {o}")))
        .sum()
    }

    /// S3 requests billed at the GET tier (GET, HEAD).
    pub fn s3_get_tier(&self) -> u64 {
        self.get("s3 GetObject") + self.get("s3 HeadObject")
    }

    /// The counts as JSON (for crawl-aws/docs/calls.json).
    pub fn to_json(&self) -> Value {
        let lambda: BTreeMap<&String, Value> = self
            .lambda
            .iter()
            .map(|(k, (n, d))| {
                (
                    k,
                    json!({ "invocations": n, "ms": (d.as_secs_f64() * 1000.0).round() }),
                )
            })
            .collect();
        json!({
            "ops": self.ops,
            "dynamodb_write_units": self.write_units,
            "dynamodb_slot_write_units": self.slot_write_units,
            "dynamodb_write_units_by": self.write_units_by,
            "dynamodb_read_units": self.read_units,
            "lambda": lambda,
        })
    }
}

fn s3_operation(method: &str, path: &str, query: &str, headers: &axum::http::HeaderMap) -> String {
    let has = |q: &str| {
        query
            .split('&')
            .any(|p| p == q || p.starts_with(&format!("{q}=")))
    };
    let object = path.trim_start_matches('/').contains('/');
    match method {
        "PUT" if headers.contains_key("x-amz-copy-source") => "CopyObject",
        "PUT" if object => "PutObject",
        "PUT" => "CreateBucket",
        "GET" if has("list-type") => "ListObjectsV2",
        "GET" if object => "GetObject",
        "GET" => "ListObjects",
        "HEAD" if object => "HeadObject",
        "HEAD" => "HeadBucket",
        "DELETE" => "DeleteObject",
        "POST" if has("delete") => "DeleteObjects",
        _ => "Other",
    }
    .to_owned()
}

/// Which of the crawl's tables a request's `TableName` is (by the harness's names), or ""
/// (a transaction or batch names its tables inside).
fn table_role(name: &str) -> &'static str {
    ["dedup", "jobs", "sources", "source"]
        .into_iter()
        .find(|r| name.contains(r))
        .unwrap_or("")
}

/// (write units, read units) of one DynamoDB request.
fn dynamo_units(op: &str, req: &Value, answer_bytes: usize) -> (f64, f64) {
    let consistent = req["ConsistentRead"].as_bool().unwrap_or(false);
    let read = if consistent { 1.0 } else { 0.5 };
    let len = |v: &Value| v.as_array().map(Vec::len).unwrap_or(0) as f64;
    match op {
        "PutItem" | "UpdateItem" | "DeleteItem" => (1.0, 0.0),
        "TransactWriteItems" => (2.0 * len(&req["TransactItems"]), 0.0),
        "BatchWriteItem" => (
            req["RequestItems"]
                .as_object()
                .map(|m| m.values().map(len).sum())
                .unwrap_or(0.0),
            0.0,
        ),
        "GetItem" => (0.0, read),
        "TransactGetItems" => (0.0, 2.0 * len(&req["TransactItems"])),
        "BatchGetItem" => (
            0.0,
            req["RequestItems"]
                .as_object()
                .map(|m| m.values().map(|t| len(&t["Keys"]) * read).sum())
                .unwrap_or(0.0),
        ),
        "Query" | "Scan" => (0.0, (answer_bytes as f64 / 4096.0).ceil().max(1.0) * read),
        _ => (0.0, 0.0),
    }
}

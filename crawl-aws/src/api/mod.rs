//! The whole job API on Lambda (feature `aws-lambda-api`): crawl-api's router behind an API
//! Gateway HTTP API, over the DynamoDB job store, Step Functions executions
//! ([`StepFunctionsRunner`]) and the S3 sink whose
//! documents DELETE removes. [`ApiLambda::handle`] turns one API Gateway event
//! (`lambda_http::Request`) into the router's answer; the `api` handler of
//! `kb-crawl-lambda` serves it with `lambda_http::run`.
//!
//! Who may act for an assistant: the HTTP API's JWT authorizer verifies the Cognito token;
//! [`ApiLambda::handle`] passes the verified `sub` claim (never a client's header) to the
//! [`AssistantTableAuthorizer`], which checks the assistants table.

mod auth;

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, Response};
use axum::Router;
use crawl_api::{ApiState, DynAuthorizer};
use crawl_core::{DynIngestor, NoopIngestor, Result};
use lambda_http::RequestExt;
use tower::ServiceExt;

pub use auth::{AssistantTableAuthorizer, AssistantTableAuthorizerBuilder, PRINCIPAL_HEADER};

use crate::config::env;
use crate::sfn::StepFunctionsRunner;
use crate::{DynamoJobStore, S3Sink};

/// The JWT claim naming the caller (Cognito's user id) unless `KB_CRAWL_PRINCIPAL_CLAIM`
/// says otherwise.
pub const DEFAULT_PRINCIPAL_CLAIM: &str = "sub";

/// The job API as a Lambda handler. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ApiLambda {
    router: Router,
    claim: String,
}

impl ApiLambda {
    /// Serves `state` (build it with [`api_state_from_env`] or by hand), naming the caller by the
    /// verified JWT claim `claim`.
    pub fn new(state: ApiState, claim: impl Into<String>) -> Self {
        ApiLambda {
            router: crawl_api::router(state),
            claim: claim.into(),
        }
    }

    /// Configured from the environment: see [`api_state_from_env`]; `KB_CRAWL_PRINCIPAL_CLAIM`
    /// (default `sub`).
    pub async fn from_env() -> Result<Self> {
        let claim =
            env("KB_CRAWL_PRINCIPAL_CLAIM").unwrap_or_else(|| DEFAULT_PRINCIPAL_CLAIM.into());
        Ok(Self::new(api_state_from_env().await?, claim))
    }

    /// Answers one API Gateway event. The caller's identity is taken only from the JWT
    /// claims API Gateway verified (the request context), never from a header the client
    /// sent.
    pub async fn handle(&self, req: lambda_http::Request) -> Result<Response<Body>, Infallible> {
        let principal = req
            .request_context_ref()
            .and_then(|c| c.authorizer())
            .and_then(|a| a.jwt.as_ref())
            .and_then(|j| j.claims.get(&self.claim))
            .filter(|v| !v.trim().is_empty())
            .and_then(|v| HeaderValue::from_str(v).ok());
        let (mut parts, body) = req.into_parts();
        parts.headers.remove(PRINCIPAL_HEADER);
        if let Some(p) = principal {
            parts.headers.insert(PRINCIPAL_HEADER, p);
        }
        let body = match body {
            lambda_http::Body::Empty => Body::empty(),
            lambda_http::Body::Text(t) => Body::from(t),
            lambda_http::Body::Binary(b) => Body::from(b),
            // `Body` is non-exhaustive; no other variant is produced for API Gateway events.
            _ => Body::empty(),
        };
        let req = axum::extract::Request::from_parts(parts, body);
        self.router.clone().oneshot(req).await
    }
}

/// The API's state from the environment: `KB_CRAWL_JOBS_TABLE`, `KB_CRAWL_S3_BUCKET`,
/// `KB_CRAWL_S3_PREFIX`, `KB_CRAWL_STATE_MACHINE_ARN`, `KB_CRAWL_SOURCES_TABLE` (optional: sources), `KB_CRAWL_SCHEDULER_ROLE_ARN` and `KB_CRAWL_SCHEDULE_GROUP` (optional: sources' schedules in EventBridge Scheduler), `KB_CRAWL_AWS_ENDPOINT`, the
/// assistants table of [`AssistantTableAuthorizer::from_env`], `KB_CRAWL_GUARDRAILS` and
/// `KB_CRAWL_POLICY` (JSON, as the workers take them), `KB_CRAWL_API_HOSTS` (comma
/// separated `Host` names, default `*`: API Gateway already fixed the host),
/// `KB_CRAWL_API_ORIGINS` (comma separated browser origins allowed to POST and DELETE,
/// e.g. the host's web app), and the webhook of the workers (`KB_CRAWL_WEBHOOK_URL` with
/// `KB_CRAWL_WEBHOOK_SECRET_ARN`), told on DELETE to remove a job's documents from the
/// knowledge base.
pub async fn api_state_from_env() -> Result<ApiState> {
    let jobs = Arc::new(DynamoJobStore::from_env().await?);
    let sink = Arc::new(S3Sink::from_env().await?);
    let arn = env("KB_CRAWL_STATE_MACHINE_ARN").ok_or_else(|| {
        crawl_core::Error::invalid(
            "KB_CRAWL_STATE_MACHINE_ARN: required (the crawl's state machine)",
        )
    })?;
    let mut guardrails = crawl_core::Guardrails::default();
    if let Some(g) = env("KB_CRAWL_GUARDRAILS") {
        guardrails = serde_json::from_str(&g)
            .map_err(|e| crawl_core::Error::invalid(format!("KB_CRAWL_GUARDRAILS: {e}")))?;
    }
    let runner = StepFunctionsRunner::new(arn, Arc::clone(&jobs), env("KB_CRAWL_AWS_ENDPOINT"))
        .await
        .map_err(|e| crawl_core::Error::invalid(format!("KB_CRAWL_STATE_MACHINE_ARN: {e}")))?
        .with_guardrails(guardrails);
    // With a sources table, a crawl of a URL the assistant already has syncs it, and the
    // source routes answer (without one they answer 501 and every crawl is a snapshot).
    let runner = if env("KB_CRAWL_SOURCES_TABLE").is_some() {
        runner.with_sources(Arc::new(crate::DynamoSourceStore::from_env().await?))
    } else {
        runner
    };
    let ingestor: DynIngestor = match crate::lambda::webhook_from_env().await? {
        Some(w) => w,
        None => Arc::new(NoopIngestor),
    };
    let authorizer: DynAuthorizer = Arc::new(AssistantTableAuthorizer::from_env().await?);
    let mut state = ApiState::new(Arc::new(runner), jobs, sink, ingestor)
        .authorizer(authorizer)
        .guardrails(guardrails);
    // With a scheduler role, each source's schedule is an EventBridge Scheduler schedule.
    if let Some(s) = crate::scheduler::EventBridgeSchedules::from_env().await? {
        state = state.schedules(Arc::new(s));
    }
    if let Some(p) = env("KB_CRAWL_POLICY") {
        state = state.policy(
            serde_json::from_str(&p)
                .map_err(|e| crawl_core::Error::invalid(format!("KB_CRAWL_POLICY: {e}")))?,
        );
    }
    let list = |v: String| -> Vec<String> {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let hosts = env("KB_CRAWL_API_HOSTS")
        .map(list)
        .unwrap_or_else(|| vec!["*".into()]);
    let origins = env("KB_CRAWL_API_ORIGINS").map(list).unwrap_or_default();
    Ok(state.site_guard(
        crawl_api::SiteGuard::default()
            .with_hosts(hosts)
            .with_origins(origins),
    ))
}

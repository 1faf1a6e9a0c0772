//! The serverless crawl's Lambda worker. One binary for the five handlers:
//!
//! - on Lambda: the handler is `KB_CRAWL_HANDLER` (or the first argument): `init`,
//!   `scrape`, `plan`, `finalise` or `mark-failed`; with the feature `aws-lambda-api` also
//!   `api`, the job API behind an API Gateway HTTP API (see `crawl_aws::api`);
//! - locally: `kb-crawl-lambda --invoke HANDLER '<json>'` runs the handler once, prints its
//!   JSON result, or `{"errorType", "errorMessage"}` and exits with 1.
//!
//! Configuration from the environment: see `crawl_aws::lambda::Services::from_env`.

use std::process::ExitCode;

use crawl_aws::lambda::{dispatch, Services};
use crawl_aws::sfn::{HandlerError, ERR_INVALID};
use lambda_runtime::{service_fn, Diagnostic, LambdaEvent};
use serde_json::Value;

fn fail(e: &HandlerError) -> ExitCode {
    println!(
        "{}",
        serde_json::to_string(e).unwrap_or_else(|_| e.to_string())
    );
    ExitCode::from(1)
}

async fn invoke(handler: &str, event: &str) -> ExitCode {
    let event: Value = match serde_json::from_str(event) {
        Ok(v) => v,
        Err(e) => return fail(&HandlerError::new(ERR_INVALID, format!("event: {e}"))),
    };
    let svc = match Services::from_env().await {
        Ok(s) => s,
        Err(e) => return fail(&e.into()),
    };
    match dispatch(&svc, handler, event).await {
        Ok(v) => {
            println!("{v}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// The job API: one API Gateway event in, one HTTP response out, per invocation.
#[cfg(feature = "aws-lambda-api")]
async fn serve_api() -> ExitCode {
    let api = match crawl_aws::api::ApiLambda::from_env().await {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kb-crawl-lambda: {e}");
            return ExitCode::from(1);
        }
    };
    let api = &api;
    let run = lambda_http::run(lambda_http::service_fn(
        move |req: lambda_http::Request| async move { api.handle(req).await },
    ))
    .await;
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kb-crawl-lambda: {e}");
            ExitCode::from(1)
        }
    }
}

async fn serve(handler: String) -> ExitCode {
    #[cfg(feature = "aws-lambda-api")]
    if handler == "api" {
        return serve_api().await;
    }
    let svc = match Services::from_env().await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("kb-crawl-lambda: {e}");
            return ExitCode::from(1);
        }
    };
    let svc = &svc;
    let handler = handler.as_str();
    let run = lambda_runtime::run(service_fn(move |ev: LambdaEvent<Value>| async move {
        dispatch(svc, handler, ev.payload)
            .await
            .map_err(|e| Diagnostic {
                error_type: e.error_type.to_owned(),
                error_message: e.error_message,
            })
    }))
    .await;
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kb-crawl-lambda: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kb-crawl-lambda: {e}");
            return ExitCode::from(1);
        }
    };
    if args.first().map(String::as_str) == Some("--invoke") {
        let (Some(handler), Some(event)) = (args.get(1), args.get(2)) else {
            eprintln!("usage: kb-crawl-lambda --invoke HANDLER '<json>'");
            return ExitCode::from(2);
        };
        return rt.block_on(invoke(handler, event));
    }
    let handler = std::env::var("KB_CRAWL_HANDLER")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| args.first().cloned());
    let Some(handler) = handler else {
        eprintln!("kb-crawl-lambda: set KB_CRAWL_HANDLER or pass the handler name");
        return ExitCode::from(2);
    };
    rt.block_on(serve(handler))
}

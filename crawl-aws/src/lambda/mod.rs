//! The Lambda handlers of the serverless crawl (feature `aws-lambda`), run by the state
//! machine of [`crate::sfn`]: [`init`], [`scrape`], [`plan`], [`finalise`],
//! [`mark_failed`]. Each is a plain async function over [`Services`] returning a
//! `HandlerError` ([`crate::sfn::HandlerError`]) with a fixed `errorType` on failure;
//! [`dispatch`] runs one by name on a JSON event (what the `kb-crawl-lambda` binary does).

mod events;
mod handlers;
mod robots;
mod services;
mod sitemap;
mod state;

pub use events::{
    BatchSummary, CaughtError, InitEvent, LevelState, MarkFailedEvent, PageBatch, PageItem,
    PageReport, ScrapeEvent,
};
pub use handlers::{finalise, init, mark_failed, plan, scrape, BATCH_TIME_BUDGET};
#[cfg(feature = "aws-lambda-chrome")]
pub use services::lambda_renderer;
pub use services::{read_secret, webhook_from_env, Services};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::sfn::{HandlerError, ERR_INTERNAL, ERR_INVALID};

/// Handler names, as `KB_CRAWL_HANDLER` or `--invoke` take them.
pub const HANDLERS: &[&str] = &["init", "scrape", "plan", "finalise", "mark-failed"];

fn parse<T: DeserializeOwned>(event: Value) -> Result<T, HandlerError> {
    serde_json::from_value(event).map_err(|e| HandlerError::new(ERR_INVALID, format!("event: {e}")))
}

fn out<T: serde::Serialize>(v: T) -> Result<Value, HandlerError> {
    serde_json::to_value(v).map_err(|e| HandlerError::new(ERR_INTERNAL, e.to_string()))
}

/// Runs handler `name` (one of [`HANDLERS`]) on `event`.
pub async fn dispatch(svc: &Services, name: &str, event: Value) -> Result<Value, HandlerError> {
    match name {
        "init" => out(init(svc, parse(event)?).await?),
        "scrape" => out(scrape(svc, parse(event)?).await?),
        "plan" => out(plan(svc, parse(event)?).await?),
        "finalise" => out(finalise(svc, parse(event)?).await?),
        "mark-failed" => out(mark_failed(svc, parse(event)?).await?),
        other => Err(HandlerError::new(
            ERR_INVALID,
            format!("unknown handler '{other}' (one of {})", HANDLERS.join(", ")),
        )),
    }
}

#![doc = include_str!("../README.md")]

mod auth;
mod error;
mod guard;
pub mod ingest;
mod limits;
mod model;
mod routes;
mod runner;
pub mod schedule;
mod sources;
mod state;
pub mod ui;

pub use auth::{Action, AllowAll, Authorizer, AuthorizerExt, DynAuthorizer, Role};
#[cfg(feature = "jwt")]
pub use auth::{
    Claims, DynRoleLookup, JwksSource, JwtAuthorizer, JwtAuthorizerBuilder, RoleLookup, StaticRoles,
};
pub use error::{ApiError, ErrorBody, ErrorDetail};
pub use guard::SiteGuard;
pub use limits::{Retention, DEFAULT_MAX_RUNNING_TOTAL, MAX_PAGE};
pub use model::{
    ChangeList, CrawlJob, CrawlList, CrawlStarted, PageChangeView, SourceList, SourceView,
};
pub use routes::{router, ROUTES};
pub use runner::{DynRunner, InProcessRunner, Runner};
pub use schedule::{DynScheduleStore, InRecordSchedules, ScheduleStore, Scheduler};
pub use state::{ApiState, DEFAULT_MAX_RUNNING_PER_ASSISTANT};

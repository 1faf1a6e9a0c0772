//! The "Website Sources" page: plain HTML, CSS and JavaScript served beside the job API.

use axum::response::Html;
use axum::routing::get;
use axum::Router;

use crate::state::ApiState;

const PAGE: &str = include_str!("../ui/index.html");

/// The page for `assistant_id`: one row per source (URL, schedule, last sync with its
/// `+added ~changed −removed`, next sync) with Sync now, Edit (depth 1–5, max pages,
/// include/exclude patterns, render mode, schedule), Delete with a confirmation, a live
/// progress bar polling the run while it goes, each source's run history and the pages a run
/// added, changed or removed; an "Add website" form. API errors show next to the field they
/// name, others in an `aria-live` status area.
///
/// `assistant_id` must be letters, digits, `-`, `_` or `.` (anything else is replaced by `_`).
pub fn page(assistant_id: &str) -> String {
    let safe: String = assistant_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    PAGE.replace("__ASSISTANT_ID__", &safe)
}

/// The job API plus the page at `/`, for `assistant_id` (the example's `demo`).
pub fn app(state: ApiState, assistant_id: &str) -> Router {
    let html = page(assistant_id);
    crate::router(state).route("/", get(move || async move { Html(html) }))
}

//! Waiting until a page counts as settled (chromiumoxide 0.9 has no helper for it).

use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;
use crawl_core::WaitStrategy;
use tokio::time::Instant;

use crate::error::{cdp, RenderError};
use crate::intercept::lock;
use crate::tab::Tab;

/// How often the page is looked at.
const POLL: Duration = Duration::from_millis(50);

/// Waits until `tab`'s page settles under `wait`, or fails with [`RenderError::Deadline`] at
/// `until`. `deadline` is only used in the error message.
pub(crate) async fn settle(
    tab: &Tab,
    wait: &WaitStrategy,
    idle_window: Duration,
    until: Instant,
    deadline: Duration,
) -> Result<(), RenderError> {
    let probe = match wait {
        WaitStrategy::NetworkIdle => None,
        WaitStrategy::Selector(css) => Some(selector_probe(css)),
    };
    loop {
        if tab.browser_gone() {
            return Err(RenderError::BrowserGone);
        }
        if let Some(url) = lock(&tab.state).websocket.clone() {
            return Err(RenderError::WebSocket(url));
        }
        let now = Instant::now();
        if now >= until {
            let mut pending: Vec<String> = lock(&tab.state).inflight.values().cloned().collect();
            pending.sort();
            pending.truncate(3);
            return Err(RenderError::Unsettled {
                after: deadline,
                pending,
            });
        }
        if let Some(text) = lock(&tab.state).main_error.clone() {
            return Err(RenderError::Navigation(text));
        }
        let settled = match &probe {
            None => {
                let s = lock(&tab.state);
                s.committed && s.inflight.is_empty() && s.last_change.elapsed() >= idle_window
            }
            Some(expr) => match eval(&tab.page, expr, until - now).await {
                Ok(serde_json::Value::Bool(found)) => found,
                Ok(serde_json::Value::String(err)) => {
                    return Err(RenderError::Script(format!("wait selector: {err}")))
                }
                Ok(_) => false,
                Err(RenderError::CdpTimeout { .. }) => return Err(RenderError::Deadline(deadline)),
                // The document is being replaced (no context to evaluate in yet): look again.
                Err(_) => false,
            },
        };
        if settled {
            return Ok(());
        }
        tokio::time::sleep_until((now + POLL).min(until)).await;
    }
}

/// Evaluates `expr` in the page's main frame and returns its value (by value, so it must be
/// JSON-serializable). A thrown exception is a [`RenderError::Script`].
pub(crate) async fn eval(
    page: &Page,
    expr: &str,
    limit: Duration,
) -> Result<serde_json::Value, RenderError> {
    let params = EvaluateParams::builder()
        .expression(expr)
        .return_by_value(true)
        .build()
        .map_err(RenderError::Script)?;
    let resp = cdp("Runtime.evaluate", limit, page.execute(params)).await?;
    if let Some(ex) = resp.result.exception_details.as_ref() {
        let text = ex
            .exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_else(|| ex.text.clone());
        return Err(RenderError::Script(text));
    }
    Ok(resp.result.result.value.clone().unwrap_or_default())
}

/// A page-side check for `css`: `true`/`false`, or the error text of an invalid selector.
fn selector_probe(css: &str) -> String {
    let quoted = serde_json::Value::String(css.to_string()).to_string();
    format!(
        "(() => {{ try {{ return document.querySelector({quoted}) !== null; }} \
         catch (e) {{ return String(e); }} }})()"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_is_quoted_as_a_js_string() {
        let probe = selector_probe(r#"a[href="x"]"#);
        assert!(
            probe.contains(r#"querySelector("a[href=\"x\"]")"#),
            "{probe}"
        );
    }
}

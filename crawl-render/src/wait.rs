//! Waiting until a page counts as settled (chromiumoxide 0.9 has no helper for it).

use std::time::Duration;

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
        if let Some(url) = lock(&tab.state).websocket.clone() {
            return Err(RenderError::WebSocket(url));
        }
        let now = Instant::now();
        if now >= until {
            return Err(RenderError::Deadline(deadline));
        }
        let settled = match &probe {
            None => {
                let s = lock(&tab.state);
                s.inflight.is_empty() && s.last_change.elapsed() >= idle_window
            }
            Some(expr) => {
                let eval = tab.page.evaluate(expr.as_str());
                let value = match cdp("Runtime.evaluate", until - now, eval).await {
                    Ok(v) => v.into_value::<serde_json::Value>().ok(),
                    Err(RenderError::CdpTimeout { .. }) => {
                        return Err(RenderError::Deadline(deadline))
                    }
                    Err(e) => return Err(e),
                };
                match value {
                    Some(serde_json::Value::Bool(found)) => found,
                    Some(serde_json::Value::String(err)) => {
                        return Err(RenderError::Script(format!("wait selector: {err}")))
                    }
                    _ => false,
                }
            }
        };
        if settled {
            return Ok(());
        }
        tokio::time::sleep_until((now + POLL).min(until)).await;
    }
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

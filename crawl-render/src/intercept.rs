//! Which requests a page may make: the decision behind Fetch-domain interception, and the
//! script that takes away the APIs Fetch cannot see.

use std::collections::HashSet;

use chromiumoxide::cdp::browser_protocol::network::ResourceType;
use crawl_core::net::RequestGate;
use url::{Host, Url};

/// Injected before any page script in every frame: WebSockets, server-sent events, WebRTC and
/// WebTransport are not paused by the Fetch domain, and workers (dedicated, shared, service)
/// run where this script cannot reach (a worker's WebSocket reached its listener in tests), so
/// the page does not get any of them.
pub(crate) const STUB_SCRIPT: &str = r#"(() => {
  const refuse = function () {
    throw new DOMException('blocked by kb-crawl', 'SecurityError');
  };
  for (const name of ['WebSocket', 'EventSource', 'RTCPeerConnection',
                      'webkitRTCPeerConnection', 'Worker', 'SharedWorker', 'WebTransport']) {
    try {
      Object.defineProperty(window, name, { value: refuse, writable: false, configurable: false });
    } catch (e) {}
  }
  try {
    Object.defineProperty(navigator, 'serviceWorker', { get: () => undefined, configurable: false });
  } catch (e) {}
})();"#;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No render is running in the tab (leftover timers of a finished page).
    Idle,
    /// Not an http(s) URL, or not a URL at all.
    Scheme,
    /// Images, fonts and media are not needed for the DOM.
    Media,
    /// Scope or network policy (the gate's message).
    Gate(String),
}

/// Whether a resource type is refused when media blocking is on.
pub(crate) fn is_media(kind: &ResourceType) -> bool {
    matches!(
        kind,
        ResourceType::Image | ResourceType::Font | ResourceType::Media
    )
}

/// The checks that need no DNS: scheme, media, scope and IP literals.
pub(crate) fn check_fast(
    gate: Option<&RequestGate>,
    raw_url: &str,
    kind: &ResourceType,
    block_media: bool,
) -> Result<Url, Refusal> {
    let gate = gate.ok_or(Refusal::Idle)?;
    let url = Url::parse(raw_url).map_err(|_| Refusal::Scheme)?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(Refusal::Scheme);
    }
    if block_media && is_media(kind) {
        return Err(Refusal::Media);
    }
    gate.check(&url)
        .map_err(|e| Refusal::Gate(e.message().to_string()))?;
    Ok(url)
}

/// The key of the DNS verdict cache: host and port.
pub(crate) fn host_key(url: &Url) -> Option<String> {
    match url.host() {
        Some(Host::Domain(d)) => Some(format!("{d}:{}", url.port_or_known_default().unwrap_or(0))),
        _ => None,
    }
}

/// The full check: [`check_fast`] plus, for names (not IP literals) not yet vetted during this
/// render, the gate's DNS-based policy.
pub(crate) async fn check(
    gate: Option<&RequestGate>,
    vetted: &std::sync::Mutex<HashSet<String>>,
    raw_url: &str,
    kind: &ResourceType,
    block_media: bool,
) -> Result<(), Refusal> {
    let url = check_fast(gate, raw_url, kind, block_media)?;
    let Some(key) = host_key(&url) else {
        return Ok(());
    };
    if lock(vetted).contains(&key) {
        return Ok(());
    }
    let gate = gate.ok_or(Refusal::Idle)?;
    gate.resolve(&url)
        .await
        .map_err(|e| Refusal::Gate(e.message().to_string()))?;
    lock(vetted).insert(key);
    Ok(())
}

/// Locks a mutex, ignoring poisoning (the data stays consistent: every critical section is a
/// single insert, remove or read).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crawl_core::net::NetworkPolicy;
    use crawl_core::url::Scope;
    use crawl_core::WwwPolicy;

    use super::*;

    fn gate() -> RequestGate {
        let root = Url::parse("http://127.0.0.1:8080/").unwrap();
        RequestGate::new(
            Arc::new(Scope::new(&root, WwwPolicy::Equivalent, None)),
            NetworkPolicy::allow_private(),
        )
    }

    #[test]
    fn in_scope_script_passes() {
        let g = gate();
        let r = check_fast(
            Some(&g),
            "http://127.0.0.1:8080/app.js",
            &ResourceType::Script,
            true,
        );
        assert!(r.is_ok(), "{r:?}");
    }

    #[test]
    fn other_schemes_and_hosts_are_refused() {
        let g = gate();
        for (url, want) in [
            ("file:///etc/passwd", Refusal::Scheme),
            ("chrome://settings", Refusal::Scheme),
            ("data:text/html,hi", Refusal::Scheme),
            ("ftp://127.0.0.1:8080/x", Refusal::Scheme),
            ("not a url", Refusal::Scheme),
        ] {
            assert_eq!(
                check_fast(Some(&g), url, &ResourceType::Document, true),
                Err(want),
                "{url}"
            );
        }
        let other = check_fast(Some(&g), "http://127.0.0.1:9/x", &ResourceType::Fetch, true);
        assert!(matches!(other, Err(Refusal::Gate(_))), "{other:?}");
    }

    #[test]
    fn media_is_refused_only_when_blocking() {
        let g = gate();
        let img = "http://127.0.0.1:8080/a.png";
        assert_eq!(
            check_fast(Some(&g), img, &ResourceType::Image, true),
            Err(Refusal::Media)
        );
        assert!(check_fast(Some(&g), img, &ResourceType::Image, false).is_ok());
    }

    #[test]
    fn idle_tab_refuses_everything() {
        let r = check_fast(None, "http://127.0.0.1:8080/", &ResourceType::Fetch, true);
        assert_eq!(r, Err(Refusal::Idle));
    }
}

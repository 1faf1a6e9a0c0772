//! The one way out of the browser: an in-process HTTP proxy on 127.0.0.1 that Chromium sends
//! every connection through (`--proxy-server`, loopback included). Each connection is allowed
//! only when a render that is running now may reach its host and port, and only to the
//! address the network policy vetted in the same step: a popup, a worker or any context the
//! tab's Fetch interception does not see reaches nothing the crawl may not reach, and a DNS
//! answer that changes between the gate and Chromium (rebinding) is never connected to,
//! because Chromium never resolves names itself.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crawl_core::net::RequestGate;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use url::Url;

use crate::intercept::lock;

/// Longest request or response head read.
const MAX_HEAD: usize = 32 * 1024;
/// Longest wait for a head, a DNS answer or a connection.
const STEP_TIMEOUT: Duration = Duration::from_secs(15);

/// The gates of the renders running now.
#[derive(Debug, Default)]
pub(crate) struct ActiveGates {
    gates: Mutex<Vec<(u64, RequestGate)>>,
    next: AtomicU64,
    allowed: AtomicUsize,
    refused: AtomicUsize,
}

/// Keeps a gate active while it lives.
#[derive(Debug)]
pub(crate) struct GateTicket {
    set: Arc<ActiveGates>,
    id: u64,
}

impl Drop for GateTicket {
    fn drop(&mut self) {
        lock(&self.set.gates).retain(|(id, _)| *id != self.id);
    }
}

impl ActiveGates {
    /// Makes `gate` active until the ticket is dropped.
    pub(crate) fn admit(self: &Arc<Self>, gate: RequestGate) -> GateTicket {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        lock(&self.gates).push((id, gate));
        GateTicket {
            set: Arc::clone(self),
            id,
        }
    }

    /// Connections let through and refused so far.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (
            self.allowed.load(Ordering::SeqCst),
            self.refused.load(Ordering::SeqCst),
        )
    }

    /// The vetted addresses of `url` under the first active gate that allows it.
    async fn vet(&self, url: &Url) -> Option<Vec<SocketAddr>> {
        let gates: Vec<RequestGate> = lock(&self.gates).iter().map(|(_, g)| g.clone()).collect();
        for gate in gates {
            if gate.check(url).is_err() {
                continue;
            }
            if let Ok(Ok(addrs)) = tokio::time::timeout(STEP_TIMEOUT, gate.resolve(url)).await {
                if !addrs.is_empty() {
                    return Some(addrs);
                }
            }
        }
        None
    }
}

/// The running proxy; stops when dropped.
#[derive(Debug)]
pub(crate) struct GateProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl GateProxy {
    /// Listens on 127.0.0.1 (a free port) and serves connections under `gates`.
    pub(crate) async fn start(gates: Arc<ActiveGates>) -> std::io::Result<GateProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let gates = Arc::clone(&gates);
                tokio::spawn(async move {
                    if let Err(why) = serve(conn, &gates).await {
                        tracing::debug!(%why, "proxy connection ended");
                    }
                });
            }
        });
        Ok(GateProxy { addr, task })
    }

    /// `--proxy-server` value for Chromium.
    pub(crate) fn flag_value(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for GateProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A parsed request or response head and the bytes read past it.
struct Head {
    lines: Vec<String>,
    rest: Vec<u8>,
}

async fn read_head(stream: &mut (impl AsyncRead + Unpin)) -> Result<Head, String> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find_end(&buf) {
            let text = String::from_utf8_lossy(&buf[..end]).into_owned();
            let lines = text.split("\r\n").map(str::to_string).collect();
            return Ok(Head {
                lines,
                rest: buf[end + 4..].to_vec(),
            });
        }
        if buf.len() > MAX_HEAD {
            return Err("head too large".into());
        }
        let n = tokio::time::timeout(STEP_TIMEOUT, stream.read(&mut chunk))
            .await
            .map_err(|_| "head timed out".to_string())?
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("closed before the head ended".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Headers that belong to one hop (and that would let a connection carry a second request).
fn hop_by_hop(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or("").trim();
    [
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

/// Rebuilds a head: `first` line, the end-to-end headers, `Connection: close`.
fn rebuild(first: &str, headers: &[String]) -> Vec<u8> {
    let mut out = String::with_capacity(512);
    out.push_str(first);
    out.push_str("\r\n");
    for h in headers.iter().filter(|h| !h.is_empty() && !hop_by_hop(h)) {
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    out.into_bytes()
}

const REFUSED: &[u8] = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

async fn connect(addrs: &[SocketAddr]) -> Option<TcpStream> {
    for addr in addrs {
        if let Ok(Ok(s)) = tokio::time::timeout(STEP_TIMEOUT, TcpStream::connect(addr)).await {
            return Some(s);
        }
    }
    None
}

async fn serve(mut client: TcpStream, gates: &ActiveGates) -> Result<(), String> {
    let head = read_head(&mut client).await?;
    let first = head.lines.first().cloned().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let (method, target, version) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    let tunnel = method.eq_ignore_ascii_case("CONNECT");
    let url = if tunnel {
        Url::parse(&format!("https://{target}/"))
    } else {
        Url::parse(target)
    };
    let url = match url {
        Ok(u) if tunnel || u.scheme() == "http" => u,
        _ => {
            gates.refused.fetch_add(1, Ordering::SeqCst);
            let _ = client.write_all(REFUSED).await;
            return Err(format!("refused a request for '{target}'"));
        }
    };
    let upstream = match gates.vet(&url).await {
        Some(addrs) => connect(&addrs).await,
        None => None,
    };
    let Some(mut upstream) = upstream else {
        gates.refused.fetch_add(1, Ordering::SeqCst);
        let _ = client.write_all(REFUSED).await;
        return Err(format!("refused {url}"));
    };
    gates.allowed.fetch_add(1, Ordering::SeqCst);
    if tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await
            .map_err(|e| e.to_string())?;
        upstream
            .write_all(&head.rest)
            .await
            .map_err(|e| e.to_string())?;
    } else {
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let request = rebuild(&format!("{method} {path} {version}"), &head.lines[1..]);
        upstream
            .write_all(&request)
            .await
            .map_err(|e| e.to_string())?;
        upstream
            .write_all(&head.rest)
            .await
            .map_err(|e| e.to_string())?;
        // The answer goes back with `Connection: close`, so Chromium never sends a second
        // request (possibly for another host) down this connection.
        let (mut up_read, mut up_write) = upstream.into_split();
        let (mut cl_read, mut cl_write) = client.into_split();
        let body = tokio::spawn(async move {
            let _ = tokio::io::copy(&mut cl_read, &mut up_write).await;
        });
        let response = read_head(&mut up_read).await;
        let result = match response {
            Ok(resp) => {
                let status = resp.lines.first().cloned().unwrap_or_default();
                let out = rebuild(&status, &resp.lines[1..]);
                let sent = async {
                    cl_write.write_all(&out).await?;
                    cl_write.write_all(&resp.rest).await?;
                    tokio::io::copy(&mut up_read, &mut cl_write).await?;
                    cl_write.shutdown().await
                };
                sent.await.map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        };
        body.abort();
        return result;
    }
    tokio::io::copy_bidirectional(&mut client, &mut upstream)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use crawl_core::net::NetworkPolicy;
    use crawl_core::url::Scope;
    use crawl_core::WwwPolicy;

    use super::*;

    /// A listener that answers every connection with one HTTP response and counts them.
    async fn origin() -> (u16, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = Arc::clone(&hits);
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let _ = read_head(&mut conn).await;
                    let _ = conn
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=60\r\n\r\nhello",
                        )
                        .await;
                    let _ = tokio::time::sleep(Duration::from_secs(5)).await;
                });
            }
        });
        (port, hits)
    }

    fn gate(port: u16) -> RequestGate {
        let root = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        RequestGate::new(
            Arc::new(Scope::new(&root, WwwPolicy::Equivalent, None)),
            NetworkPolicy::allow_private(),
        )
    }

    async fn ask(proxy: &GateProxy, request: String) -> String {
        let mut s = TcpStream::connect(proxy.addr).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn only_what_a_running_render_may_reach_gets_through() {
        let (site, site_hits) = origin().await;
        let (other, other_hits) = origin().await;
        let gates = Arc::new(ActiveGates::default());
        let proxy = GateProxy::start(Arc::clone(&gates)).await.unwrap();
        let get = |port: u16| {
            format!(
                "GET http://127.0.0.1:{port}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                 Proxy-Connection: keep-alive\r\n\r\n"
            )
        };
        // No render runs: everything is refused.
        assert!(ask(&proxy, get(site)).await.starts_with("HTTP/1.1 403"));
        let ticket = gates.admit(gate(site));
        let answer = ask(&proxy, get(site)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("hello"), "{answer}");
        assert!(answer.contains("Connection: close"), "{answer}");
        assert!(!answer.contains("Keep-Alive"), "{answer}");
        // Out of scope (another port), plain and tunnelled; other schemes.
        assert!(ask(&proxy, get(other)).await.starts_with("HTTP/1.1 403"));
        let connect =
            format!("CONNECT 127.0.0.1:{other} HTTP/1.1\r\nHost: 127.0.0.1:{other}\r\n\r\n");
        assert!(ask(&proxy, connect).await.starts_with("HTTP/1.1 403"));
        let ftp = "GET ftp://127.0.0.1/ HTTP/1.1\r\n\r\n".to_string();
        assert!(ask(&proxy, ftp).await.starts_with("HTTP/1.1 403"));
        // A tunnel to the site is let through.
        let connect =
            format!("CONNECT 127.0.0.1:{site} HTTP/1.1\r\nHost: 127.0.0.1:{site}\r\n\r\n");
        let mut s = TcpStream::connect(proxy.addr).await.unwrap();
        s.write_all(connect.as_bytes()).await.unwrap();
        let head = read_head(&mut s).await.unwrap();
        assert!(
            head.lines[0].starts_with("HTTP/1.1 200"),
            "{:?}",
            head.lines
        );
        drop(ticket);
        // The render ended: refused again.
        assert!(ask(&proxy, get(site)).await.starts_with("HTTP/1.1 403"));
        assert_eq!(
            other_hits.load(Ordering::SeqCst),
            0,
            "the other port was reached"
        );
        assert_eq!(site_hits.load(Ordering::SeqCst), 2);
        assert_eq!(gates.counts().0, 2);
    }

    #[tokio::test]
    async fn the_public_only_policy_refuses_loopback_even_in_scope() {
        let (site, hits) = origin().await;
        let gates = Arc::new(ActiveGates::default());
        let proxy = GateProxy::start(Arc::clone(&gates)).await.unwrap();
        let root = Url::parse(&format!("http://127.0.0.1:{site}/")).unwrap();
        let _ticket = gates.admit(RequestGate::new(
            Arc::new(Scope::new(&root, WwwPolicy::Equivalent, None)),
            NetworkPolicy::public_only(),
        ));
        let get = format!("GET http://127.0.0.1:{site}/ HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ask(&proxy, get).await.starts_with("HTTP/1.1 403"));
        let get = format!("GET http://localhost:{site}/ HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ask(&proxy, get).await.starts_with("HTTP/1.1 403"));
        assert_eq!(hits.load(Ordering::SeqCst), 0);
    }
}

//! Network policy: which addresses and URLs a crawl may reach (the SSRF guard).

mod policy;

pub use policy::{ip_refusal, NetworkPolicy, Resolver, SystemResolver};

use std::net::SocketAddr;
use std::sync::Arc;

use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::url::Scope;

/// The scope plus the network policy of one crawl: what the fetcher, the redirect follower
/// and the renderer ask before any request leaves the process.
#[derive(Debug, Clone)]
pub struct RequestGate {
    scope: Arc<Scope>,
    policy: NetworkPolicy,
}

impl RequestGate {
    /// A gate for `scope` under `policy`.
    pub fn new(scope: Arc<Scope>, policy: NetworkPolicy) -> Self {
        RequestGate { scope, policy }
    }

    /// The crawl's scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The network policy.
    pub fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    /// Checks everything that can be checked without DNS: scheme, credentials, scope and IP
    /// literals.
    pub fn check(&self, url: &Url) -> Result<()> {
        self.policy.check_url(url)?;
        if !self.scope.contains(url) {
            return Err(
                Error::new(ErrorKind::OutOfScope, "outside the crawl's scope").with_url(url),
            );
        }
        Ok(())
    }

    /// [`check`](Self::check) plus DNS: resolves the host and returns the vetted addresses
    /// to connect to; refuses the host if any answer is refused.
    pub async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>> {
        self.check(url)?;
        self.policy.resolve(url).await
    }
}

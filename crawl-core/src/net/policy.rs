//! IP classification and host resolution under the network policy.
//!
//! Everything a crawl connects to passes through here: [`NetworkPolicy::check_url`] refuses
//! what can be refused without DNS (scheme, credentials, IP literals in every spelling the
//! WHATWG parser accepts, `localhost` and cloud-metadata host names), and
//! [`NetworkPolicy::resolve_with`] resolves a host ONCE and refuses it when ANY answer is
//! refused, returning the vetted addresses the caller must connect to (never a second
//! lookup: that is the DNS-rebinding window).

use std::fmt::Debug;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use async_trait::async_trait;
use url::{Host, Url};

use crate::error::{Error, ErrorKind, Result};

/// Resolves host names to addresses. Injectable so tests can stub DNS (rebinding, mixed
/// public/private answers) and count lookups.
#[async_trait]
pub trait Resolver: Debug + Send + Sync + 'static {
    /// All addresses of `host` (a domain name, never an IP literal), with `port` set.
    async fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The operating system's resolver (`getaddrinfo` through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn lookup(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}

/// Which addresses may be reached. By default everything that is not public is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct NetworkPolicy {
    /// Allow loopback, private, link-local and other non-public addresses (intranets, tests).
    /// Cloud metadata addresses and names stay refused even then.
    pub allow_private: bool,
}

/// The reason every cloud-metadata refusal carries (never lifted by `allow_private`).
const METADATA: &str = "cloud metadata";

impl NetworkPolicy {
    /// The default: public addresses only.
    pub fn public_only() -> Self {
        NetworkPolicy {
            allow_private: false,
        }
    }

    /// Private networks allowed (metadata endpoints still refused).
    pub fn allow_private() -> Self {
        NetworkPolicy {
            allow_private: true,
        }
    }

    /// Why `ip` is refused under this policy, if it is.
    pub fn refusal(&self, ip: IpAddr) -> Option<&'static str> {
        let why = ip_refusal(ip)?;
        if self.allow_private && why != METADATA {
            None
        } else {
            Some(why)
        }
    }

    /// Why the host NAME `name` is refused without any DNS lookup, if it is: cloud metadata
    /// names always, `localhost` and `*.localhost` (RFC 6761) unless private networks are
    /// allowed. Case and a trailing dot are ignored.
    pub fn name_refusal(&self, name: &str) -> Option<&'static str> {
        let n = name.trim_end_matches('.').to_ascii_lowercase();
        if matches!(
            n.as_str(),
            "metadata" | "metadata.google.internal" | "instance-data" | "metadata.azure.internal"
        ) || n.starts_with("instance-data.")
        {
            return Some(METADATA);
        }
        let local = n == "localhost"
            || n.ends_with(".localhost")
            || n == "localhost.localdomain"
            || n == "ip6-localhost"
            || n == "ip6-loopback";
        if local && !self.allow_private {
            return Some("loopback name");
        }
        None
    }

    /// Checks scheme, credentials, host names and IP-literal hosts of `url` (no DNS).
    pub fn check_url(&self, url: &Url) -> Result<()> {
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(Error::new(
                ErrorKind::PolicyRefused,
                format!("scheme '{}' is not allowed", url.scheme()),
            )
            .with_url(url));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Error::new(ErrorKind::PolicyRefused, "credentials in URL").with_url(url));
        }
        let ip = match url.host() {
            Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
            Some(Host::Domain(d)) => match literal_ip(d) {
                Some(ip) => ip,
                None => {
                    if d.is_empty() {
                        return Err(Error::new(ErrorKind::PolicyRefused, "no host").with_url(url));
                    }
                    return match self.name_refusal(d) {
                        Some(why) => Err(Error::new(
                            ErrorKind::PolicyRefused,
                            format!("host '{d}' is refused ({why})"),
                        )
                        .with_url(url)),
                        None => Ok(()),
                    };
                }
            },
            None => return Err(Error::new(ErrorKind::PolicyRefused, "no host").with_url(url)),
        };
        match self.refusal(ip) {
            Some(why) => Err(Error::new(
                ErrorKind::PolicyRefused,
                format!("address {ip} is refused ({why})"),
            )
            .with_url(url)),
            None => Ok(()),
        }
    }

    /// Resolves `url`'s host once with the system resolver and returns the addresses to
    /// connect to; refuses the host when any answer is refused.
    pub async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>> {
        self.resolve_with(url, &SystemResolver).await
    }

    /// [`resolve`](Self::resolve) with an injected resolver.
    pub async fn resolve_with(
        &self,
        url: &Url,
        resolver: &dyn Resolver,
    ) -> Result<Vec<SocketAddr>> {
        self.check_url(url)?;
        let port = url.port_or_known_default().unwrap_or(80);
        let host = match url.host() {
            Some(Host::Ipv4(v4)) => return Ok(vec![SocketAddr::new(IpAddr::V4(v4), port)]),
            Some(Host::Ipv6(v6)) => return Ok(vec![SocketAddr::new(IpAddr::V6(v6), port)]),
            Some(Host::Domain(d)) => d,
            None => return Err(Error::new(ErrorKind::PolicyRefused, "no host").with_url(url)),
        };
        self.resolve_host(host, port, resolver)
            .await
            .map_err(|e| e.with_url(url))
    }

    /// Resolves the host name `host` ONCE through `resolver` and returns the vetted
    /// addresses (port `port`): refused names are refused without a lookup, IP literals are
    /// checked without one, and the host is refused when ANY answer is refused (a host
    /// answering public and private addresses is an attack or a misconfiguration either
    /// way). The caller must connect only to the returned addresses.
    pub async fn resolve_host(
        &self,
        host: &str,
        port: u16,
        resolver: &dyn Resolver,
    ) -> Result<Vec<SocketAddr>> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Some(ip) = literal_ip(bare) {
            return match self.refusal(ip) {
                Some(why) => Err(Error::new(
                    ErrorKind::PolicyRefused,
                    format!("address {ip} is refused ({why})"),
                )),
                None => Ok(vec![SocketAddr::new(ip, port)]),
            };
        }
        if let Some(why) = self.name_refusal(host) {
            return Err(Error::new(
                ErrorKind::PolicyRefused,
                format!("host '{host}' is refused ({why})"),
            ));
        }
        let addrs = resolver.lookup(host, port).await.map_err(|e| {
            Error::new(ErrorKind::Network, format!("DNS lookup of '{host}' failed")).with_source(e)
        })?;
        self.vet(host, addrs)
    }

    /// Refuses `addrs` (the answers for `host`) when any of them is refused or there are
    /// none.
    pub fn vet(&self, host: &str, addrs: Vec<SocketAddr>) -> Result<Vec<SocketAddr>> {
        if addrs.is_empty() {
            return Err(Error::new(
                ErrorKind::Network,
                format!("host '{host}' has no address"),
            ));
        }
        for a in &addrs {
            if let Some(why) = self.refusal(a.ip()) {
                return Err(Error::new(
                    ErrorKind::PolicyRefused,
                    format!("host '{host}' resolves to {} ({why})", a.ip()),
                ));
            }
        }
        Ok(addrs)
    }
}

/// `s` as an IP address when it is a literal (dotted IPv4 with an optional trailing dot, or
/// IPv6). The `url` crate already turns every WHATWG IPv4 spelling of http(s) URLs
/// (decimal, hex, octal, short forms) into [`Host::Ipv4`]; this catches what reaches us as a
/// plain name.
fn literal_ip(s: &str) -> Option<IpAddr> {
    let t = s.trim_end_matches('.');
    let t = t.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = t.parse::<IpAddr>() {
        return Some(ip);
    }
    // Leftover numeric spellings (only reachable for hosts that bypassed the WHATWG parser).
    parse_loose_ipv4(t).map(IpAddr::V4)
}

/// inet_aton-style IPv4: 1 to 4 parts, each decimal, 0x-hex or 0-octal; the last part
/// fills the remaining bytes.
fn parse_loose_ipv4(s: &str) -> Option<Ipv4Addr> {
    if s.is_empty() {
        return None;
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X"))
        {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        let n = if digits.is_empty() {
            0
        } else {
            u64::from_str_radix(digits, radix).ok()?
        };
        nums.push(n);
    }
    let last = *nums.last()?;
    let head = &nums[..nums.len() - 1];
    if head.iter().any(|n| *n > 255) {
        return None;
    }
    let rest_bits = 8 * (4 - head.len() as u32);
    if rest_bits < 64 && last >= (1u64 << rest_bits) {
        return None;
    }
    let mut v: u32 = 0;
    for (i, n) in head.iter().enumerate() {
        v |= (*n as u32) << (24 - 8 * i as u32);
    }
    v |= last as u32;
    Some(Ipv4Addr::from(v))
}

/// Why an address is not public, or `None` for a public address. Covers every range of the
/// IANA IPv4 and IPv6 special-purpose registries that is not globally reachable, plus
/// multicast, broadcast and the cloud metadata endpoints; IPv6 forms that embed an IPv4
/// address (mapped, compatible, translated, NAT64, 6to4) are judged by what they embed.
pub fn ip_refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_refusal(v4),
        IpAddr::V6(v6) => v6_refusal(v6),
    }
}

fn v4_refusal(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if o == [169, 254, 169, 254]
        || o == [169, 254, 170, 2]
        || o == [100, 100, 100, 200]
        || o == [192, 0, 0, 192]
    {
        return Some(METADATA);
    }
    Some(match o {
        [0, ..] => "unspecified or this-network",
        [10, ..] => "private",
        [100, b, ..] if (64..128).contains(&b) => "carrier-grade NAT",
        [127, ..] => "loopback",
        [169, 254, ..] => "link-local",
        [172, b, ..] if (16..32).contains(&b) => "private",
        [192, 0, 0, _] => "IETF protocol assignments",
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _] => "documentation",
        [192, 88, 99, _] => "6to4 relay anycast",
        [192, 168, ..] => "private",
        [198, b, ..] if b == 18 || b == 19 => "benchmarking",
        [255, 255, 255, 255] => "broadcast",
        [a, ..] if (224..240).contains(&a) => "multicast",
        [a, ..] if a >= 240 => "reserved",
        _ => return None,
    })
}

fn embedded_v4(hi: u16, lo: u16) -> Ipv4Addr {
    Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)
}

fn v6_refusal(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    if s == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] {
        return Some(METADATA);
    }
    // IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d (deprecated) and IPv4-translated
    // ::ffff:0:a.b.c.d: judged by the IPv4 address, and refused anyway (no public site is
    // reached that way; the socket would talk IPv4 to whatever is embedded).
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        return v4_refusal(embedded_v4(s[6], s[7])).or(Some("IPv4-mapped or compatible"));
    }
    if s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0 {
        return v4_refusal(embedded_v4(s[6], s[7])).or(Some("IPv4-translated"));
    }
    // NAT64: the well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address (public
    // ones are fine); the local-use prefix 64:ff9b:1::/48 and the rest of 64:ff9b::/32 are
    // not global.
    if s[0] == 0x0064 && s[1] == 0xff9b {
        if s[2..6] == [0; 4] {
            return v4_refusal(embedded_v4(s[6], s[7]));
        }
        return Some("NAT64 local-use");
    }
    // 6to4 2002:a.b.c.d::/48: judged by the embedded IPv4 address.
    if s[0] == 0x2002 {
        return v4_refusal(embedded_v4(s[1], s[2]));
    }
    Some(match s[0] {
        x if x & 0xfe00 == 0xfc00 => "unique local",
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xff00 == 0xff00 => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        0x2001 if s[1] == 0 => "Teredo",
        0x2001 if s[1] == 2 && s[2] == 0 => "benchmarking",
        // The rest of 2001::/23 (ORCHID, AMT, AS112...): no website lives there.
        0x2001 if s[1] < 0x0200 => "IETF protocol assignments",
        0x3fff if s[1] < 0x1000 => "documentation",
        0x5f00 => "segment routing (SRv6) SIDs",
        0x0100 if s[1..4] == [0, 0, 0] => "discard-only",
        // Everything outside 2000::/3 is unassigned or special.
        x if x & 0xe000 != 0x2000 => "not global unicast",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn refused(s: &str) -> bool {
        ip_refusal(s.parse().unwrap()).is_some()
    }

    #[test]
    fn policy_refuses_every_non_public_ipv4_range() {
        for s in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.0.1",
            "169.254.169.254",
            "169.254.170.2",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.1",
            "192.0.0.192",
            "192.0.2.1",
            "192.88.99.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "100.100.100.200",
        ] {
            assert!(refused(s), "{s} should be refused");
        }
    }

    #[test]
    fn policy_refuses_every_non_public_ipv6_range() {
        for s in [
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:8.8.8.8",
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:0:7f00:1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "64:ff9b:1::808:808",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",
            "2001:10::1",
            "2001:db8::1",
            "3fff::1",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2002:a9fe:a9fe::",
            "5f00::1",
            "fc00::1",
            "fd00::1",
            "fd00:ec2::254",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff05::1:3",
        ] {
            assert!(refused(s), "{s} should be refused");
        }
    }

    #[test]
    fn policy_allows_public_addresses() {
        for s in [
            "93.184.216.34",
            "172.32.0.1",
            "172.15.255.255",
            "100.63.255.255",
            "100.128.0.1",
            "8.8.8.8",
            "1.1.1.1",
            "192.0.3.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(!refused(s), "{s} should be allowed");
        }
    }

    #[test]
    fn policy_metadata_refused_even_with_allow_private() {
        let p = NetworkPolicy::allow_private();
        for s in [
            "169.254.169.254",
            "169.254.170.2",
            "100.100.100.200",
            "192.0.0.192",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert_eq!(p.refusal(s.parse().unwrap()), Some(METADATA), "{s}");
        }
        assert!(p.refusal("127.0.0.1".parse().unwrap()).is_none());
        assert!(p.refusal("10.0.0.1".parse().unwrap()).is_none());
        for u in [
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.google.internal./",
            "http://metadata/",
            "http://instance-data/latest/meta-data/",
            "http://instance-data.ec2.internal/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
            "http://192.0.0.192/",
        ] {
            let url = Url::parse(u).unwrap();
            let e = p.check_url(&url).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{u}");
        }
    }

    #[test]
    fn policy_alternative_ipv4_spellings_are_refused() {
        let p = NetworkPolicy::public_only();
        for s in [
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0x7F.0.0.1/",
            "http://0177.0.0.1/",
            "http://017700000001/",
            "http://127.1/",
            "http://127.0.1/",
            "http://127.0.0.1./",
            "http://0x7f.1/",
            "http://%31%32%37.0.0.1/",
            "http://[::ffff:7f00:1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[0:0:0:0:0:ffff:7f00:1]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::127.0.0.1]/",
            "http://0/",
            "http://0.0.0.0/",
            "http://10.1/",
            "http://3232235777/",
            "http://0xa9fea9fe/",
            "http://2852039166/",
            "https://0251.0376.0251.0376/",
            "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/",
        ] {
            let u = Url::parse(s).unwrap();
            let e = p.check_url(&u).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{s} -> {u}");
        }
    }

    #[test]
    fn policy_loose_ipv4_parser_matches_inet_aton() {
        for (s, want) in [
            ("2130706433", "127.0.0.1"),
            ("0x7f000001", "127.0.0.1"),
            ("0177.0.0.1", "127.0.0.1"),
            ("127.1", "127.0.0.1"),
            ("0x7f.1", "127.0.0.1"),
            ("10.1.2", "10.1.0.2"),
        ] {
            assert_eq!(parse_loose_ipv4(s), Some(want.parse().unwrap()), "{s}");
        }
        for s in ["example", "1.2.3.4.5", "256.1.1.1", "08.1.1.1", "", "1..1"] {
            assert_eq!(parse_loose_ipv4(s), None, "{s}");
        }
    }

    #[test]
    fn policy_localhost_names_refused_without_dns() {
        let p = NetworkPolicy::public_only();
        for s in [
            "http://localhost/",
            "http://LOCALHOST./",
            "http://foo.localhost/",
            "http://a.b.localhost:8080/",
            "http://localhost.localdomain/",
            "http://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}/",
        ] {
            let u = Url::parse(s).unwrap();
            assert_eq!(
                p.check_url(&u).unwrap_err().kind(),
                ErrorKind::PolicyRefused,
                "{s}"
            );
        }
        let q = NetworkPolicy::allow_private();
        assert!(q
            .check_url(&Url::parse("http://localhost:8080/").unwrap())
            .is_ok());
        // Names that merely contain the word are fine.
        assert!(p
            .check_url(&Url::parse("http://localhost.example.com/").unwrap())
            .is_ok());
        assert!(p
            .check_url(&Url::parse("http://mylocalhost/").unwrap())
            .is_ok());
    }

    #[test]
    fn policy_lambda_runtime_api_refused() {
        let p = NetworkPolicy::public_only();
        for s in [
            "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next",
            "http://localhost:2773/systemsmanager/parameters/get",
            "http://localhost:9001/",
        ] {
            let u = Url::parse(s).unwrap();
            assert_eq!(
                p.check_url(&u).unwrap_err().kind(),
                ErrorKind::PolicyRefused,
                "{s}"
            );
        }
    }

    #[test]
    fn policy_refuses_other_schemes_and_credentials() {
        let p = NetworkPolicy::allow_private();
        for s in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
            "data:text/html,hi",
            "http://user:pass@example.com/",
            "http://user@example.com/",
        ] {
            let u = Url::parse(s).unwrap();
            assert_eq!(
                p.check_url(&u).unwrap_err().kind(),
                ErrorKind::PolicyRefused,
                "{s}"
            );
        }
    }

    #[derive(Debug)]
    struct Stub(Vec<&'static str>, AtomicUsize);

    #[async_trait]
    impl Resolver for Stub {
        async fn lookup(&self, _host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Ok(self
                .0
                .iter()
                .map(|s| SocketAddr::new(s.parse().unwrap(), port))
                .collect())
        }
    }

    #[tokio::test]
    async fn policy_resolve_refuses_mixed_public_private_answers() {
        let p = NetworkPolicy::public_only();
        let stub = Stub(vec!["93.184.216.34", "10.0.0.1"], AtomicUsize::new(0));
        let u = Url::parse("http://mixed.example/").unwrap();
        let e = p.resolve_with(&u, &stub).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused);
        assert!(e.to_string().contains("10.0.0.1"), "{e}");
        assert_eq!(stub.1.load(Ordering::SeqCst), 1);

        let ok = Stub(
            vec!["93.184.216.34", "2606:4700::1111"],
            AtomicUsize::new(0),
        );
        let addrs = p.resolve_with(&u, &ok).await.unwrap();
        assert_eq!(addrs.len(), 2);
        assert!(addrs.iter().all(|a| a.port() == 80));
    }

    #[tokio::test]
    async fn policy_resolve_refuses_names_without_lookup() {
        let p = NetworkPolicy::allow_private();
        let stub = Stub(vec!["93.184.216.34"], AtomicUsize::new(0));
        for h in ["metadata.google.internal", "metadata", "instance-data"] {
            let e = p.resolve_host(h, 80, &stub).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{h}");
        }
        let q = NetworkPolicy::public_only();
        let e = q.resolve_host("localhost", 80, &stub).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused);
        assert_eq!(stub.1.load(Ordering::SeqCst), 0, "no DNS for refused names");
        let e = q.resolve_host("127.0.0.1", 80, &stub).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused);
        let e = q.resolve_host("[::1]", 80, &stub).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused);
    }

    #[tokio::test]
    async fn policy_resolve_with_no_answers_is_a_network_error() {
        let p = NetworkPolicy::public_only();
        let stub = Stub(vec![], AtomicUsize::new(0));
        let u = Url::parse("http://empty.example/").unwrap();
        let e = p.resolve_with(&u, &stub).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Network);
        assert!(e.is_temporary());
    }
}

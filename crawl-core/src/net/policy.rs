//! IP classification and host resolution under the network policy.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

use crate::error::{Error, ErrorKind, Result};

/// Which addresses may be reached. By default everything that is not public is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct NetworkPolicy {
    /// Allow loopback, private, link-local and other non-public addresses (intranets, tests).
    /// Cloud metadata addresses stay refused even then.
    pub allow_private: bool,
}

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
        if self.allow_private && why != "cloud metadata" {
            None
        } else {
            Some(why)
        }
    }

    /// Checks scheme, credentials and IP-literal hosts of `url` (no DNS).
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
            Some(Host::Domain(d)) => match d.trim_end_matches('.').parse::<IpAddr>() {
                Ok(ip) => ip,
                Err(_) => return Ok(()),
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

    /// Resolves `url`'s host once and returns the addresses to connect to; refuses the host
    /// when any answer is refused.
    pub async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>> {
        self.check_url(url)?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(v4)) => vec![SocketAddr::new(IpAddr::V4(v4), port)],
            Some(Host::Ipv6(v6)) => vec![SocketAddr::new(IpAddr::V6(v6), port)],
            Some(Host::Domain(d)) => tokio::net::lookup_host((d, port))
                .await
                .map_err(|e| {
                    Error::new(ErrorKind::Network, format!("DNS lookup of '{d}' failed"))
                        .with_url(url)
                        .with_source(e)
                })?
                .collect(),
            None => Vec::new(),
        };
        if addrs.is_empty() {
            return Err(Error::new(ErrorKind::Network, "host has no address").with_url(url));
        }
        for a in &addrs {
            if let Some(why) = self.refusal(a.ip()) {
                return Err(Error::new(
                    ErrorKind::PolicyRefused,
                    format!("host resolves to {} ({why})", a.ip()),
                )
                .with_url(url));
            }
        }
        Ok(addrs)
    }
}

/// Why an address is not public, or `None` for a public address.
pub fn ip_refusal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_refusal(v4),
        IpAddr::V6(v6) => v6_refusal(v6),
    }
}

fn v4_refusal(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if o == [169, 254, 169, 254] || o == [100, 100, 100, 200] || o == [192, 0, 0, 192] {
        return Some("cloud metadata");
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
        [192, 88, 99, _] => "6to4 relay",
        [192, 168, ..] => "private",
        [198, b, ..] if b == 18 || b == 19 => "benchmarking",
        [a, ..] if a >= 224 => "multicast, reserved or broadcast",
        _ => return None,
    })
}

fn v6_refusal(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_refusal(v4).or(Some("IPv4-compatible"));
    }
    // NAT64 64:ff9b::/96 and 64:ff9b:1::/48
    if s[0] == 0x64 && s[1] == 0xff9b {
        let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
        return v4_refusal(v4).or(Some("NAT64"));
    }
    // 6to4 2002:a.b.c.d::/48
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return v4_refusal(v4).or(Some("6to4"));
    }
    if ip.segments() == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] {
        return Some("cloud metadata");
    }
    Some(match s[0] {
        x if x & 0xfe00 == 0xfc00 => "unique local",
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xff00 == 0xff00 => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        0x2001 if s[1] < 0x0200 => "IETF special purpose (Teredo, ORCHIDv2...)",
        0x0100 if s[1..4] == [0, 0, 0] => "discard-only",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_refused() {
        for s in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "fd00:ec2::254",
        ] {
            let ip: IpAddr = s.parse().unwrap();
            assert!(ip_refusal(ip).is_some(), "{s} should be refused");
        }
        for s in ["93.184.216.34", "172.32.0.1", "2606:4700::1111", "8.8.8.8"] {
            let ip: IpAddr = s.parse().unwrap();
            assert!(ip_refusal(ip).is_none(), "{s} should be allowed");
        }
    }

    #[test]
    fn allow_private_still_refuses_metadata() {
        let p = NetworkPolicy::allow_private();
        assert!(p.refusal("127.0.0.1".parse().unwrap()).is_none());
        assert!(p.refusal("169.254.169.254".parse().unwrap()).is_some());
    }

    #[test]
    fn alternative_ipv4_spellings_are_caught() {
        let p = NetworkPolicy::public_only();
        for s in [
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://127.0.0.1./",
            "http://[::ffff:7f00:1]/",
            "http://0/",
        ] {
            let u = Url::parse(s).unwrap();
            assert!(p.check_url(&u).is_err(), "{s} -> {u}");
        }
    }
}

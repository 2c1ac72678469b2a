//! The guard against internal targets (SSRF): webhook receivers and CRM addresses name hosts
//! chosen by a customer, so the service must never be made to call its own network. Every
//! address a request would connect to is checked, after DNS resolution for names (in the HTTP
//! client's resolver, so the address checked is the address connected to) and before any I/O
//! for IP literals (which the client does not resolve). Private, loopback, link-local, shared,
//! multicast, documentation and reserved ranges, and the IPv6 forms that translate to IPv4
//! through a local translator, are refused unless the operator's allow-list
//! (`OUTBOUND_ALLOW_PRIVATE_TARGETS`) covers them.

use ipnet::IpNet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Which internal addresses an operator allows (on-premises receivers, tests).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PrivateTargets {
    /// None: every internal address is refused (the default).
    #[default]
    Refused,
    /// Every address is allowed.
    All,
    /// Only internal addresses inside these networks are allowed.
    Networks(Vec<IpNet>),
}

impl PrivateTargets {
    /// Parses `false`, `true`, or a comma-separated list of networks and addresses
    /// (`10.20.0.0/16,127.0.0.1,::1`).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let raw = raw.trim();
        match raw.to_ascii_lowercase().as_str() {
            "" | "false" | "0" | "no" | "off" => return Ok(Self::Refused),
            "true" | "1" | "yes" | "on" => return Ok(Self::All),
            _ => {}
        }
        let mut nets = Vec::new();
        for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let net = match (part.parse::<IpNet>(), part.parse::<IpAddr>()) {
                (Ok(net), _) => net,
                (_, Ok(ip)) => IpNet::from(ip),
                _ => {
                    let expected = "true, false, an IP address or a network like 10.0.0.0/8";
                    return Err(format!("'{part}' is not {expected}"));
                }
            };
            nets.push(net.trunc());
        }
        if nets.is_empty() {
            return Err("names no network".to_owned());
        }
        Ok(Self::Networks(nets))
    }

    fn allows(&self, ip: IpAddr) -> bool {
        match self {
            Self::Refused => false,
            Self::All => true,
            Self::Networks(nets) => nets.iter().any(|n| n.contains(&ip)),
        }
    }

    /// `Ok` when a delivery may connect to `ip`; otherwise why not.
    pub fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        let ip = canonical(ip);
        match internal_kind(ip) {
            Some(kind) if !self.allows(ip) => Err(Refused {
                target: ip.to_string(),
                reason: kind.to_owned(),
            }),
            _ => Ok(()),
        }
    }

    /// Refuses a host that is obviously internal without resolving it: an internal IP literal,
    /// or `localhost` (and names under `.localhost`, which resolve to loopback by definition).
    /// Used when a subscription is created; names are checked again at each delivery.
    pub fn check_host(&self, host: &url::Host<&str>) -> Result<(), Refused> {
        match host {
            url::Host::Ipv4(ip) => self.check(IpAddr::V4(*ip)),
            url::Host::Ipv6(ip) => self.check(IpAddr::V6(*ip)),
            url::Host::Domain(name) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                let loopback_allowed = self.allows(IpAddr::V4(Ipv4Addr::LOCALHOST))
                    || self.allows(IpAddr::V6(Ipv6Addr::LOCALHOST));
                if (name == "localhost" || name.ends_with(".localhost")) && !loopback_allowed {
                    return Err(Refused {
                        target: name,
                        reason: "a name for the loopback interface".to_owned(),
                    });
                }
                Ok(())
            }
        }
    }
}

/// A target the guard refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub target: String,
    pub reason: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused target {}: {} (internal addresses are not delivered to)",
            self.target, self.reason
        )
    }
}

impl std::error::Error for Refused {}

/// An IPv4 address written as IPv6 (mapped `::ffff:a.b.c.d`) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// What kind of internal address `ip` is, or `None` for a public one.
pub fn internal_kind(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
}

fn internal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (127, _, _) => "a loopback address",
        (10, _, _) | (192, 168, _) => "a private address",
        (172, b, _) if (16..=31).contains(&b) => "a private address",
        (169, 254, _) => "a link-local address (cloud metadata lives here)",
        (100, b, _) if (64..=127).contains(&b) => "a shared (carrier-grade NAT) address",
        (0, _, _) => "a 'this network' address",
        (192, 0, 0) => "an IETF protocol address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, b, _) if b == 18 || b == 19 => "a benchmarking address",
        (192, 88, 99) => "a 6to4 relay address",
        (a, _, _) if (224..=239).contains(&a) => "a multicast address",
        (a, _, _) if a >= 240 => "a reserved or broadcast address",
        _ => return None,
    })
}

fn internal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    if ip.is_unspecified() {
        return Some("the unspecified address");
    }
    // Addresses that embed an IPv4 address reach that address: judge the IPv4 one.
    let embedded =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        // NAT64 (64:ff9b::/96).
        return internal_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        // Local-use NAT64 (64:ff9b:1::/48): the operator's own translator decides where such an
        // address leads, with any embedding, so none of it is public.
        return Some("a local-use NAT64 address");
    }
    if s[..4] == [0, 0, 0, 0] && s[4] == 0xffff && s[5] == 0 {
        // IPv4-translated (SIIT, ::ffff:0:a.b.c.d): reaches the IPv4 address through a local
        // translator; no public service is addressed this way.
        return Some("an IPv4-translated (SIIT) address");
    }
    if s[0] == 0x2002 {
        // 6to4 (2002::/16) carries the IPv4 address in segments 1 and 2.
        return internal_v4(embedded(s[1], s[2]));
    }
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        // Deprecated IPv4-compatible (::a.b.c.d).
        return Some("an IPv4-compatible address");
    }
    Some(match s[0] {
        x if x & 0xfe00 == 0xfc00 => "a unique local (private) address",
        x if x & 0xffc0 == 0xfe80 => "a link-local address",
        x if x & 0xffc0 == 0xfec0 => "a site-local address",
        x if x & 0xff00 == 0xff00 => "a multicast address",
        0x2001 if s[1] == 0x0db8 => "a documentation address",
        0x2001 if s[1] < 0x0200 => "an IETF protocol address",
        0x0100 if s[1..4] == [0, 0, 0] => "a discard address",
        _ => return None,
    })
}

/// How names are looked up; the system resolver in service, a fixed table in tests.
pub type Lookup = Arc<
    dyn Fn(String) -> futures::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>>
        + Send
        + Sync,
>;

/// The system resolver (getaddrinfo through tokio).
pub fn system_lookup() -> Lookup {
    Arc::new(|name: String| {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((name.as_str(), 0))
                .await?
                .collect::<Vec<_>>())
        })
    })
}

/// A resolver for the HTTP client that drops every address the policy refuses, and fails the
/// request with [`Refused`] when none is left. Only the addresses it returns are connected to,
/// so a name that resolves to both a public and an internal address can reach only the public
/// one, and a later answer (DNS rebinding) is checked again.
pub struct GuardedResolver {
    pub policy: Arc<PrivateTargets>,
    pub lookup: Lookup,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let lookup = self.lookup.clone();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = lookup(name.clone()).await?;
            let (allowed, refused): (Vec<SocketAddr>, Vec<SocketAddr>) = addrs
                .into_iter()
                .partition(|a| policy.check(a.ip()).is_ok());
            if allowed.is_empty() {
                let err: Box<dyn std::error::Error + Send + Sync> = match refused.first() {
                    Some(addr) => {
                        let why = policy.check(addr.ip()).err().map(|r| r.reason);
                        Box::new(Refused {
                            target: format!("{name} ({})", addr.ip()),
                            reason: why.unwrap_or_else(|| "an internal address".to_owned()),
                        })
                    }
                    None => format!("{name} did not resolve to any address").into(),
                };
                return Err(err);
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn internal_ranges_are_refused_and_public_ones_pass() {
        let p = PrivateTargets::Refused;
        for bad in [
            "127.0.0.1",
            "127.8.9.10",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "fc12::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "64:ff9b:1::a00:1",
            "64:ff9b:1::808:808",
            "64:ff9b:1:ffff::1",
            "::ffff:0:7f00:1",
            "::ffff:0:808:808",
            "2002:7f00:1::",
            "2001:db8::1",
        ] {
            assert!(p.check(ip(bad)).is_err(), "{bad} must be refused");
        }
        for good in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(p.check(ip(good)).is_ok(), "{good} is public");
        }
        let refused = p.check(ip("169.254.169.254")).unwrap_err().to_string();
        assert!(
            refused.contains("169.254.169.254") && refused.contains("link-local"),
            "{refused}"
        );
    }

    #[test]
    fn the_allow_list_opens_only_what_it_names() {
        assert_eq!(
            PrivateTargets::parse("false").unwrap(),
            PrivateTargets::Refused
        );
        assert_eq!(PrivateTargets::parse(" ").unwrap(), PrivateTargets::Refused);
        assert_eq!(PrivateTargets::parse("true").unwrap(), PrivateTargets::All);
        let p = PrivateTargets::parse("127.0.0.1, 10.20.0.0/16,::1").unwrap();
        assert!(p.check(ip("127.0.0.1")).is_ok());
        assert!(p.check(ip("127.0.0.2")).is_err());
        assert!(p.check(ip("10.20.3.4")).is_ok());
        assert!(p.check(ip("10.21.0.1")).is_err());
        assert!(p.check(ip("::1")).is_ok());
        assert!(p.check(ip("169.254.169.254")).is_err());
        assert!(PrivateTargets::All.check(ip("169.254.169.254")).is_ok());
        for bad in ["maybe", "10.0.0.0/33", "10.0.0", ","] {
            assert!(PrivateTargets::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn obviously_internal_hosts_are_refused_without_resolving() {
        let p = PrivateTargets::Refused;
        let host = |s: &str| url::Url::parse(s).unwrap();
        for bad in [
            "https://127.0.0.1/x",
            "https://[::1]/x",
            "https://10.0.0.1/",
            "https://169.254.169.254/latest/meta-data",
            "https://localhost:8443/",
            "https://LOCALHOST./",
            "https://api.localhost/",
            // The URL parser normalises other spellings of an IPv4 address.
            "https://2130706433/",
            "https://0x7f.1/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:0:127.0.0.1]/",
            "https://[64:ff9b:1::a9fe:a9fe]/",
        ] {
            let u = host(bad);
            assert!(p.check_host(&u.host().unwrap()).is_err(), "{bad}");
        }
        for good in ["https://hooks.example.com/x", "https://93.184.216.34/"] {
            let u = host(good);
            assert!(p.check_host(&u.host().unwrap()).is_ok(), "{good}");
        }
        let loopback = PrivateTargets::parse("127.0.0.0/8").unwrap();
        let u = host("https://localhost:8443/");
        assert!(loopback.check_host(&u.host().unwrap()).is_ok());
    }

    #[tokio::test]
    async fn the_resolver_drops_internal_answers() {
        use reqwest::dns::Resolve as _;
        let table: Lookup = Arc::new(|name: String| {
            Box::pin(async move {
                let ips: Vec<&str> = match name.as_str() {
                    "internal.example" => vec!["10.0.0.1"],
                    "metadata.example" => vec!["169.254.169.254"],
                    "mixed.example" => vec!["127.0.0.1", "93.184.216.34"],
                    "public.example" => vec!["93.184.216.34"],
                    _ => vec![],
                };
                Ok(ips
                    .into_iter()
                    .map(|s| SocketAddr::new(s.parse().unwrap(), 0))
                    .collect())
            })
        });
        let resolver = GuardedResolver {
            policy: Arc::new(PrivateTargets::Refused),
            lookup: table,
        };
        let resolve = |n: &str| resolver.resolve(n.parse().unwrap());
        let err = resolve("internal.example").await.err().unwrap().to_string();
        assert!(err.contains("10.0.0.1") && err.contains("private"), "{err}");
        let err = resolve("metadata.example").await.err().unwrap().to_string();
        assert!(err.contains("link-local"), "{err}");
        let mixed: Vec<SocketAddr> = resolve("mixed.example").await.ok().unwrap().collect();
        assert_eq!(mixed, vec![SocketAddr::new(ip("93.184.216.34"), 0)]);
        assert!(resolve("public.example").await.is_ok());
        assert!(resolve("nothing.example").await.is_err());
    }
}

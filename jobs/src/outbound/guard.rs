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
                        // The customer reads this text (a delivery's attempt log): it names the
                        // kind of address, never the address, so internal hosts do not show
                        // where they live. The operator's log has it.
                        tracing::warn!(host = %name, address = %addr.ip(), "outbound request refused: the host resolves to an internal address");
                        Box::new(Refused {
                            target: name.clone(),
                            reason: why.map_or_else(
                                || "it resolves to an internal address".to_owned(),
                                |r| format!("it resolves to {r}"),
                            ),
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
mod tests;

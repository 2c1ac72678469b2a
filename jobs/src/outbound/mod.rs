//! Every request to an address a customer chose (webhook receivers, CRM pulls) is made by a
//! client built here, so the rules hold for all of them at once: HTTPS only (public roots plus
//! `OUTBOUND_CA_FILE`), internal addresses refused after DNS resolution (see `guard`) and IP
//! literals before any I/O, no redirect followed (a 3xx is an answer: following it would let the
//! other side point the service anywhere), no proxy from the environment, a connect and a total
//! time limit, and answers read as a stream up to a cap.

pub mod guard;

use crate::config::OutboundSettings;
use crate::error::ValidationError;
use guard::{GuardedResolver, Lookup, PrivateTargets, Refused};
use std::sync::Arc;
use std::time::Duration;

/// Longest address a customer may give, in bytes.
pub const MAX_URL_CHARS: usize = 2048;

/// How long a client may take: to connect, and for the whole request.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub connect: Duration,
    pub total: Duration,
}

/// Builds the client of one kind of outbound request.
pub fn client(
    settings: &OutboundSettings,
    lookup: Lookup,
    limits: Limits,
    user_agent: &str,
) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .https_only(true)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(limits.total)
        .connect_timeout(limits.connect)
        .user_agent(user_agent)
        .dns_resolver(Arc::new(GuardedResolver {
            policy: Arc::new(settings.private_targets.clone()),
            lookup,
        }));
    if let Some(pem) = &settings.extra_roots_pem {
        for cert in reqwest::Certificate::from_pem_bundle(pem)? {
            builder = builder.add_root_certificate(cert);
        }
    }
    builder.build()
}

/// Why a target is refused before any connection is tried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    NotHttps,
    NoHost,
    Credentials,
    Internal(Refused),
}

/// The checks made before a request: the client does not resolve IP literals, so they are
/// judged here; names are judged by the client's resolver.
pub fn check_target(url: &url::Url, policy: &PrivateTargets) -> Result<(), Blocked> {
    if url.scheme() != "https" {
        return Err(Blocked::NotHttps);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Blocked::Credentials);
    }
    match url.host() {
        Some(host @ (url::Host::Ipv4(_) | url::Host::Ipv6(_))) => {
            policy.check_host(&host).map_err(Blocked::Internal)
        }
        Some(url::Host::Domain(_)) => Ok(()),
        None => Err(Blocked::NoHost),
    }
}

/// Checks an address a customer gives (`field` names it in the error): absolute `https://`, at
/// most [`MAX_URL_CHARS`] bytes, no user name or password, and not an obviously internal host (IP
/// literal or loopback name) unless the operator allows it. Names are not resolved here (the
/// answer can change); every request checks the addresses it connects to.
pub fn parse_https_url(
    field: &str,
    raw: &str,
    policy: &PrivateTargets,
) -> Result<url::Url, ValidationError> {
    let bad = |m: String| ValidationError::new(field, m);
    let raw = raw.trim();
    if raw.len() > MAX_URL_CHARS {
        return Err(bad(format!(
            "must be a URL of at most {MAX_URL_CHARS} characters"
        )));
    }
    let url =
        url::Url::parse(raw).map_err(|e| bad(format!("must be an absolute https:// URL ({e})")))?;
    if url.scheme() != "https" {
        return Err(bad(format!(
            "must be an https:// URL, got {}://",
            url.scheme()
        )));
    }
    let host = url
        .host()
        .ok_or_else(|| bad("must name a host".to_owned()))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not carry a user name or password".to_owned()));
    }
    policy
        .check_host(&host)
        .map_err(|refused| bad(refused.to_string()))?;
    Ok(url)
}

/// What went wrong with a request, in the terms callers report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The guard refused every address of the name.
    Refused(Refused),
    Timeout,
    /// No connection (refused, unreachable, TLS failed); the deepest cause for logs.
    Connect(String),
    /// Anything else; the deepest cause for logs.
    Other(String),
}

pub fn classify(e: &reqwest::Error) -> Failure {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut deepest = e.to_string();
    while let Some(s) = source {
        if let Some(refused) = s.downcast_ref::<Refused>() {
            return Failure::Refused(refused.clone());
        }
        deepest = s.to_string();
        source = s.source();
    }
    if e.is_timeout() {
        Failure::Timeout
    } else if e.is_connect() {
        Failure::Connect(deepest)
    } else {
        Failure::Other(deepest)
    }
}

/// Reading an answer under a cap failed.
#[derive(Debug)]
pub enum ReadError {
    /// The answer is longer than the cap (announced, or seen while reading).
    TooLarge,
    Body(reqwest::Error),
}

/// Reads the whole answer, stopping as soon as it passes `cap` bytes: never more than `cap`
/// plus one chunk is held.
pub async fn read_capped(
    response: &mut reqwest::Response,
    cap: usize,
) -> Result<Vec<u8>, ReadError> {
    if response
        .content_length()
        .is_some_and(|n| n > u64::try_from(cap).unwrap_or(u64::MAX))
    {
        return Err(ReadError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Body)? {
        if body.len() + chunk.len() > cap {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads at most `limit` bytes of the answer and leaves the rest unread; a read error after
/// some bytes keeps them.
pub async fn read_prefix(
    response: &mut reqwest::Response,
    limit: usize,
) -> (Vec<u8>, Option<reqwest::Error>) {
    let mut prefix = Vec::new();
    while prefix.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => prefix.extend_from_slice(&chunk),
            Ok(None) => break,
            Err(e) => return (truncated(prefix, limit), Some(e)),
        }
    }
    (truncated(prefix, limit), None)
}

fn truncated(mut bytes: Vec<u8>, limit: usize) -> Vec<u8> {
    bytes.truncate(limit);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_checked_before_any_io() {
        let p = PrivateTargets::Refused;
        let url = |s: &str| url::Url::parse(s).unwrap();
        assert_eq!(
            check_target(&url("http://crm.example.com/"), &p),
            Err(Blocked::NotHttps)
        );
        assert_eq!(
            check_target(&url("https://u:p@crm.example.com/"), &p),
            Err(Blocked::Credentials)
        );
        assert!(matches!(
            check_target(&url("https://[::ffff:0:10.0.0.1]/"), &p),
            Err(Blocked::Internal(_))
        ));
        // Names pass here: the resolver judges what they resolve to.
        assert_eq!(check_target(&url("https://localhost/"), &p), Ok(()));
        assert_eq!(check_target(&url("https://93.184.216.34/"), &p), Ok(()));
    }

    #[test]
    fn customer_urls_are_https_without_credentials() {
        let p = PrivateTargets::Refused;
        let e =
            parse_https_url("base_url", "https://user:hunter2@crm.example.com", &p).unwrap_err();
        assert_eq!(e.path, "base_url");
        assert!(!e.message.contains("hunter2"), "{e}");
        assert!(parse_https_url("base_url", "http://crm.example.com", &p).is_err());
        assert!(parse_https_url("base_url", "https://[64:ff9b:1::1]/", &p).is_err());
        let long = format!("https://crm.example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(parse_https_url("base_url", &long, &p).is_err());
        let ok = parse_https_url("base_url", " https://CRM.example.com/api ", &p).unwrap();
        assert_eq!(ok.as_str(), "https://crm.example.com/api");
    }
}

//! The HTTP client of webhook deliveries and one signed attempt.
//!
//! The client is an outbound client (see `crate::outbound`: HTTPS only, internal targets
//! refused, no redirect followed, no proxy), bounded per attempt by `WEBHOOK_TIMEOUT_MS` (10 s)
//! for connecting and for the whole attempt.

use crate::config::{OutboundSettings, WebhookSettings};
use crate::outbound::guard::{Lookup, PrivateTargets};
use crate::outbound::{self, Blocked, Failure, Limits};
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The most of a receiver's answer kept in the attempt log.
pub const RESPONSE_EXCERPT_BYTES: usize = 1024;

/// `sha256=<hex>`: the HMAC-SHA256 of the raw body keyed with the subscription secret (the
/// secret string's UTF-8 bytes, prefix included).
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// One request to send.
pub struct Outgoing<'a> {
    pub url: &'a str,
    pub event: &'a str,
    pub delivery_id: Uuid,
    /// The exact bytes sent and signed.
    pub body: &'a str,
    pub secret: &'a SecretString,
}

/// What one attempt gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptResult {
    /// The receiver answered 2xx.
    pub delivered: bool,
    pub http_status: Option<u16>,
    /// Why the attempt failed (`None` when delivered).
    pub error: Option<String>,
    /// The first KiB of the answer's body.
    pub response_excerpt: Option<String>,
    pub duration: Duration,
}

#[derive(Clone)]
pub struct WebhookClient {
    http: reqwest::Client,
    policy: Arc<PrivateTargets>,
    settings: Arc<WebhookSettings>,
}

impl WebhookClient {
    pub fn new(
        outbound: &OutboundSettings,
        settings: &WebhookSettings,
    ) -> Result<Self, reqwest::Error> {
        Self::with_lookup(outbound, settings, outbound::guard::system_lookup())
    }

    /// A client resolving names through `lookup` (tests give a fixed table).
    pub fn with_lookup(
        outbound: &OutboundSettings,
        settings: &WebhookSettings,
        lookup: Lookup,
    ) -> Result<Self, reqwest::Error> {
        let http = outbound::client(
            outbound,
            lookup,
            Limits {
                connect: settings.timeout,
                total: settings.timeout,
            },
            concat!("self-storage-pricing-webhooks/", env!("CARGO_PKG_VERSION")),
        )?;
        Ok(Self {
            http,
            policy: Arc::new(outbound.private_targets.clone()),
            settings: Arc::new(settings.clone()),
        })
    }

    /// The settings the client was built with (timeout, retry schedule, allow-list).
    pub fn settings(&self) -> &WebhookSettings {
        &self.settings
    }

    /// Sends one signed attempt. Never fails: every problem is a failed attempt with its reason.
    pub async fn send(&self, out: &Outgoing<'_>) -> AttemptResult {
        let start = Instant::now();
        let failed = |error: String, start: Instant| AttemptResult {
            delivered: false,
            http_status: None,
            error: Some(error),
            response_excerpt: None,
            duration: start.elapsed(),
        };
        let url = match url::Url::parse(out.url) {
            Ok(u) => u,
            Err(e) => return failed(format!("the target URL does not parse: {e}"), start),
        };
        if let Err(blocked) = outbound::check_target(&url, &self.policy) {
            let why = match blocked {
                Blocked::NotHttps => "the target is not an https:// URL".to_owned(),
                Blocked::NoHost => "the target URL has no host".to_owned(),
                Blocked::Credentials => "the target URL carries a user name or password".to_owned(),
                Blocked::Internal(refused) => refused.to_string(),
            };
            return failed(why, start);
        }
        let timestamp = chrono::Utc::now().timestamp().to_string();
        let response = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("X-Service-Event", out.event)
            .header("X-Service-Delivery", out.delivery_id.to_string())
            .header(
                "X-Service-Signature",
                signature(out.secret.expose_secret(), out.body.as_bytes()),
            )
            .header("X-Service-Timestamp", timestamp)
            .body(out.body.to_owned())
            .send()
            .await;
        let mut response = match response {
            Ok(r) => r,
            Err(e) => return failed(self.describe(&e), start),
        };
        let status = response.status();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // The first KiB of the answer; the rest is not read.
        let (excerpt, body_error) =
            outbound::read_prefix(&mut response, RESPONSE_EXCERPT_BYTES).await;
        let body_error = body_error.map(|e| self.describe(&e));
        // PostgreSQL text cannot hold NUL characters; a receiver may send them.
        let response_excerpt = (!excerpt.is_empty())
            .then(|| String::from_utf8_lossy(&excerpt).replace('\0', "\u{fffd}"));
        let delivered = status.is_success();
        let error = if delivered {
            // The receiver accepted the delivery; a broken answer body does not undo that.
            None
        } else if status.is_redirection() {
            Some(format!(
                "the receiver answered {status} and redirects are not followed{}",
                location
                    .map(|l| format!(" (Location: {})", l.chars().take(300).collect::<String>()))
                    .unwrap_or_default()
            ))
        } else {
            Some(match body_error {
                Some(e) => {
                    format!("the receiver answered {status}; reading its answer failed: {e}")
                }
                None => format!("the receiver answered {status}"),
            })
        };
        AttemptResult {
            delivered,
            http_status: Some(status.as_u16()),
            error,
            response_excerpt,
            duration: start.elapsed(),
        }
    }

    /// A failed request in words a receiver's owner can act on.
    fn describe(&self, e: &reqwest::Error) -> String {
        match outbound::classify(e) {
            Failure::Refused(refused) => refused.to_string(),
            Failure::Timeout => format!(
                "no complete answer within {} ms (timeout)",
                self.settings.timeout.as_millis()
            ),
            Failure::Connect(deepest) => format!("could not connect: {deepest}"),
            Failure::Other(deepest) => format!("request failed: {deepest}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_is_hex_hmac_sha256_of_the_raw_body() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_ne!(
            signature("Jefe", b"what do ya want for nothing!"),
            signature("Jefe", b"what do ya want for nothing?")
        );
    }
}

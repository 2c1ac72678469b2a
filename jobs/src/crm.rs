//! CRM pulls: the provider framework (`provider`), the adapters (`generic_json`, `storedge`),
//! and the requests they make through one [`Session`] and what they may report.
//!
//! The CRM's address is a customer's choice, so the request is an outbound one (see
//! `crate::outbound`) and whatever goes wrong is reported as one of a fixed set of messages of
//! ours ([`PullError`]): never a text from the answer's body, from a low-level error (which
//! would tell an open port from a closed one) or from a value in a snapshot.

pub mod connection_tests;
pub mod generic_json;
pub mod oauth1;
pub mod provider;
pub mod storedge;

use crate::config::{CrmSettings, OutboundSettings};
use crate::error::ValidationError;
use crate::outbound::guard::{Lookup, PrivateTargets};
use crate::outbound::{self, Blocked, Failure, Limits, ReadError};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most snapshots accepted from one pull.
pub const MAX_SNAPSHOTS: usize = 10_000;
/// Most requests one pull makes (pages, facilities, dates, retries together).
pub const MAX_REQUESTS: usize = 2_000;
/// Longest time one pull may take, all of its requests and waits together.
pub const PULL_BUDGET: Duration = Duration::from_secs(600);
/// Attempts of one request answered with 429 or a 5xx status.
const MAX_ATTEMPTS: u32 = 4;
/// Wait before the second attempt of a request answered with a 5xx (doubling after).
const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Longest wait honoured from a `Retry-After` header.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Connecting never waits longer than this, whatever `CRM_PULL_TIMEOUT_MS` says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a pull failed, in the words stored in `last_error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PullError {
    #[error("the CRM address is not an https:// URL")]
    NotHttps,
    #[error("the CRM address carries a user name or password")]
    Credentials,
    #[error("the CRM address is not a valid URL")]
    BadUrl,
    /// The address is an internal IP literal (seen without any lookup). A name that resolves
    /// to an internal address is reported as [`PullError::Connect`], like one that does not
    /// resolve at all, so the answer cannot be used to find which internal names exist.
    #[error("the CRM address is an internal network address")]
    Internal,
    #[error("could not connect to the CRM")]
    Connect,
    #[error("the CRM did not answer within {}", human_duration(*.0))]
    Timeout(Duration),
    #[error("the CRM request failed")]
    Request,
    #[error("the CRM refused the credential (HTTP {0})")]
    Credential(u16),
    #[error("the CRM answered HTTP {0}")]
    Status(u16),
    #[error("the CRM's answer exceeds {}", human_bytes(*.0))]
    TooLarge(usize),
    #[error("the CRM's answer is not JSON")]
    NotJson,
    #[error("the CRM's answer is not a list of snapshots")]
    NotAList,
    #[error("the CRM's answer has more than {MAX_SNAPSHOTS} snapshots")]
    TooMany,
    #[error("the CRM's answer is not a {0} list as documented")]
    Shape(&'static str),
    #[error("the pull needed more than {MAX_REQUESTS} requests to the CRM")]
    TooManyRequests,
    #[error("the pull took longer than {}", human_duration(PULL_BUDGET))]
    TooLong,
    /// `reason` is built from the field's path and a fixed phrase (see [`snapshot_error`]).
    #[error("snapshot {index}: {reason}")]
    Snapshot { index: usize, reason: String },
}

impl PullError {
    /// Whether a later attempt may succeed (the CRM busy or unreachable for now).
    pub fn retryable(&self) -> bool {
        match self {
            Self::Connect | Self::Timeout(_) | Self::Request => true,
            Self::Status(code) => *code >= 500 || *code == 408 || *code == 429,
            _ => false,
        }
    }
}

fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

fn human_bytes(n: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

/// Describes a snapshot the sync rules refuse by the field's path and a fixed phrase: a
/// validation message may quote the offending value, which came from the CRM's answer.
pub fn snapshot_error(index: usize, e: &ValidationError) -> PullError {
    let safe_path = !e.path.is_empty()
        && e.path.len() <= 100
        && e.path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'));
    let field = if safe_path {
        e.path.as_str()
    } else {
        "a field"
    };
    let reason = if e.path == "body" {
        if e.message.contains("\\u0000") {
            "contains a NUL character, which cannot be stored".to_owned()
        } else {
            "is not a snapshot object".to_owned()
        }
    } else if e.message == "is required" {
        format!("{field} is missing")
    } else if e.message.starts_with("invalid type") {
        format!("{field} has the wrong type")
    } else if e.message.starts_with("unknown variant") {
        format!("{field} is not one of the accepted values")
    } else {
        format!("{field} has a value that is not accepted")
    };
    PullError::Snapshot { index, reason }
}

/// The client of CRM pulls.
#[derive(Clone)]
pub struct CrmClient {
    http: reqwest::Client,
    policy: Arc<PrivateTargets>,
    settings: CrmSettings,
    tests: connection_tests::ConnectionTests,
}

impl CrmClient {
    pub fn new(
        outbound: &OutboundSettings,
        settings: &CrmSettings,
    ) -> Result<Self, reqwest::Error> {
        Self::with_lookup(outbound, settings, outbound::guard::system_lookup())
    }

    /// A client resolving names through `lookup` (tests give a fixed table).
    pub fn with_lookup(
        outbound: &OutboundSettings,
        settings: &CrmSettings,
        lookup: Lookup,
    ) -> Result<Self, reqwest::Error> {
        let http = outbound::client(
            outbound,
            lookup,
            Limits {
                connect: settings.timeout.min(CONNECT_TIMEOUT),
                total: settings.timeout,
            },
            concat!("self-storage-pricing-crm/", env!("CARGO_PKG_VERSION")),
        )?;
        Ok(Self {
            http,
            policy: Arc::new(outbound.private_targets.clone()),
            settings: settings.clone(),
            tests: connection_tests::ConnectionTests::new(settings),
        })
    }

    /// The same client counting its connection tests in `tests` (the process's shared count).
    pub fn with_connection_tests(mut self, tests: connection_tests::ConnectionTests) -> Self {
        self.tests = tests;
        self
    }

    /// The running connection tests this client counts in.
    pub fn connection_tests(&self) -> &connection_tests::ConnectionTests {
        &self.tests
    }

    pub fn settings(&self) -> &CrmSettings {
        &self.settings
    }

    /// A session for one pull: its requests share the limits.
    pub fn session(&self) -> Session {
        Session {
            client: self.clone(),
            read: 0,
            requests: 0,
            attempts: MAX_ATTEMPTS,
            deadline: Instant::now() + PULL_BUDGET,
        }
    }

    /// A session for one connection test: one attempt per request (a 429 or a 5xx is the
    /// answer, not waited out), within `CRM_TEST_TIMEOUT_MS` (the caller bounds the whole
    /// test by it too).
    pub fn test_session(&self) -> Session {
        Session {
            client: self.clone(),
            read: 0,
            requests: 0,
            attempts: 1,
            deadline: Instant::now() + self.settings.test_timeout,
        }
    }

    fn failure(&self, e: &reqwest::Error) -> PullError {
        match outbound::classify(e) {
            Failure::Refused(refused) => {
                // The reason stays in the log: telling it would tell which names resolve.
                tracing::info!(%refused, "CRM address refused after resolution");
                PullError::Connect
            }
            Failure::Timeout => PullError::Timeout(self.settings.timeout),
            Failure::Connect(deepest) => {
                tracing::info!(cause = deepest, "CRM connection failed");
                PullError::Connect
            }
            Failure::Other(deepest) => {
                tracing::info!(cause = deepest, "CRM request failed");
                PullError::Request
            }
        }
    }
}

/// How a request proves who is asking.
#[derive(Clone, Copy)]
pub enum Auth<'a> {
    /// `Authorization: Bearer <key>`.
    Bearer(&'a str),
    /// One-legged OAuth 1.0 with HMAC-SHA1 (key and secret as the consumer's).
    OAuth1 { key: &'a str, secret: &'a str },
}

/// The requests of one pull: every answer counts towards one size cap
/// (`CRM_PULL_MAX_BYTES`), and the pull makes at most [`MAX_REQUESTS`] requests within
/// [`PULL_BUDGET`]. A 429 (after its `Retry-After`, at most [`MAX_RETRY_AFTER`]) or a 5xx (after
/// a doubling backoff) is tried again, [`MAX_ATTEMPTS`] times in all.
pub struct Session {
    client: CrmClient,
    read: usize,
    requests: usize,
    /// Attempts of a request answered with 429 or a 5xx.
    attempts: u32,
    deadline: Instant,
}

impl Session {
    /// GETs `url` and gives its JSON answer.
    pub async fn get_json(&mut self, url: url::Url, auth: Auth<'_>) -> Result<Value, PullError> {
        outbound::check_target(&url, &self.client.policy).map_err(|blocked| match blocked {
            Blocked::NotHttps => PullError::NotHttps,
            Blocked::Credentials => PullError::Credentials,
            Blocked::NoHost => PullError::BadUrl,
            Blocked::Internal(_) => PullError::Internal,
        })?;
        let mut attempt = 1;
        let mut response = loop {
            if self.requests >= MAX_REQUESTS {
                return Err(PullError::TooManyRequests);
            }
            self.requests += 1;
            let mut request = self
                .client
                .http
                .get(url.clone())
                .header(reqwest::header::ACCEPT, "application/json");
            request = match auth {
                Auth::Bearer(key) => request.bearer_auth(key),
                Auth::OAuth1 { key, secret } => {
                    let signer = oauth1::Signer {
                        consumer_key: key,
                        consumer_secret: secret,
                        token: None,
                    };
                    request.header(
                        reqwest::header::AUTHORIZATION,
                        signer.authorization("GET", &url),
                    )
                }
            };
            let response = request.send().await.map_err(|e| self.client.failure(&e))?;
            let status = response.status().as_u16();
            if status == 401 || status == 403 {
                return Err(PullError::Credential(status));
            }
            if response.status().is_success() {
                break response;
            }
            // A 3xx lands here too: redirects are not followed.
            let busy = status == 429 || status >= 500;
            if !busy || attempt >= self.attempts {
                return Err(PullError::Status(status));
            }
            let wait = retry_after(response.headers())
                .unwrap_or(BACKOFF_BASE * 2u32.pow(attempt - 1))
                .min(MAX_RETRY_AFTER);
            if Instant::now() + wait > self.deadline {
                return Err(PullError::TooLong);
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        };
        if Instant::now() > self.deadline {
            return Err(PullError::TooLong);
        }
        let cap = self.client.settings.max_answer_bytes;
        let body = outbound::read_capped(&mut response, cap - self.read)
            .await
            .map_err(|e| match e {
                ReadError::TooLarge => PullError::TooLarge(cap),
                ReadError::Body(e) => self.client.failure(&e),
            })?;
        self.read += body.len();
        serde_json::from_slice(&body).map_err(|_| PullError::NotJson)
    }
}

/// Whether a path segment would be read as `.` or `..` (also percent-encoded): such a segment
/// would be dropped or climb a level when the address is resolved, so a value from a customer
/// or a CRM answer that becomes a path segment must not be one.
pub fn is_dot_segment(segment: &str) -> bool {
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    matches!(&*decoded, "." | "..")
}

/// `Retry-After` in seconds (an HTTP date is not honoured: the backoff applies).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The snapshots address: path and query set through the URL API, so nothing in the base
/// address (a `?`, a `#`, an encoded slash) can change which resource is asked for.
pub fn snapshots_url(base_url: &str, date: chrono::NaiveDate) -> Result<url::Url, PullError> {
    let mut url = url::Url::parse(base_url).map_err(|_| PullError::BadUrl)?;
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|()| PullError::BadUrl)?
        .pop_if_empty()
        .push("snapshots");
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "date")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.query_pairs_mut()
        .clear()
        .extend_pairs(kept)
        .append_pair("date", &date.format("%Y-%m-%d").to_string());
    Ok(url)
}

/// The snapshots of a generic JSON answer: a list, or an object with a `snapshots` list.
pub fn snapshots_of(answer: Value) -> Result<Vec<Value>, PullError> {
    let snapshots = match answer {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("snapshots") {
            Some(Value::Array(items)) => items,
            _ => return Err(PullError::NotAList),
        },
        _ => return Err(PullError::NotAList),
    };
    if snapshots.len() > MAX_SNAPSHOTS {
        return Err(PullError::TooMany);
    }
    Ok(snapshots)
}

#[cfg(test)]
mod tests;

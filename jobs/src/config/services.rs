//! Settings of the outbound client, CRM pulls, the HTTP server and webhook deliveries.

use super::{err, parse_num, var, var_or_alias, ConfigError};
use std::time::Duration;

/// Settings shared by every request to an address a customer chose (webhooks, CRM pulls).
#[derive(Clone, Debug)]
pub struct OutboundSettings {
    /// Internal addresses requests may reach anyway (on-premises receivers, tests).
    pub private_targets: crate::outbound::guard::PrivateTargets,
    /// Extra trusted root certificates (PEM), already checked to hold at least one.
    pub extra_roots_pem: Option<Vec<u8>>,
}

impl OutboundSettings {
    pub(super) fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let (name, raw) = var_or_alias(
            get,
            "OUTBOUND_ALLOW_PRIVATE_TARGETS",
            "WEBHOOK_ALLOW_PRIVATE_TARGETS",
        )?;
        let private_targets =
            crate::outbound::guard::PrivateTargets::parse(&raw.unwrap_or_default())
                .map_err(|problem| err(name, problem))?;
        let (name, path) = var_or_alias(get, "OUTBOUND_CA_FILE", "WEBHOOK_CA_FILE")?;
        let extra_roots_pem = match path {
            None => None,
            Some(path) => {
                let pem = std::fs::read(path.trim())
                    .map_err(|e| err(name, format!("cannot read {path}: {e}")))?;
                match reqwest::Certificate::from_pem_bundle(&pem) {
                    Ok(certs) if !certs.is_empty() => Some(pem),
                    Ok(_) => return Err(err(name, format!("{path} holds no PEM certificate"))),
                    Err(e) => {
                        return Err(err(
                            name,
                            format!("{path} is not a PEM certificate bundle: {e}"),
                        ))
                    }
                }
            }
        };
        Ok(Self {
            private_targets,
            extra_roots_pem,
        })
    }
}

/// Settings of CRM pulls.
#[derive(Clone, Debug)]
pub struct CrmSettings {
    /// Limit of each request of a pull, connection to last byte read.
    pub timeout: Duration,
    /// Most bytes read in one pull, all of its answers together; a pull passing it fails
    /// without reading further.
    pub max_answer_bytes: usize,
    /// Limit of a whole connection test (one attempt, no retries), connection to last byte.
    pub test_timeout: Duration,
    /// Connection tests running at once in one process; more are refused (429).
    pub tests_per_process: usize,
    /// Connection tests of one company running at once in one process; more are refused (429).
    pub tests_per_company: usize,
}

impl CrmSettings {
    pub(super) fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        Ok(Self {
            timeout: parse_num(get, "CRM_PULL_TIMEOUT_MS", 30_000u64, |v| {
                (100..=300_000).contains(v)
            })
            .map(Duration::from_millis)?,
            max_answer_bytes: parse_num(get, "CRM_PULL_MAX_BYTES", 32 * 1024 * 1024, |v| {
                (1024..=1024 * 1024 * 1024).contains(v)
            })?,
            test_timeout: parse_num(get, "CRM_TEST_TIMEOUT_MS", 15_000u64, |v| {
                (100..=120_000).contains(v)
            })
            .map(Duration::from_millis)?,
            tests_per_process: parse_num(get, "CRM_TESTS_PER_PROCESS", 8usize, |v| {
                (1..=1000).contains(v)
            })?,
            tests_per_company: parse_num(get, "CRM_TESTS_PER_COMPANY", 2usize, |v| {
                (1..=100).contains(v)
            })?,
        })
    }
}

/// Limits on how long and how much a client may take, so slow or idle clients hold no more
/// than a socket for a bounded time.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    /// From a request's first byte, the time its request line and headers may take.
    pub header_timeout: Duration,
    /// The time a request body may take to arrive, counted while the server waits on it.
    pub body_timeout: Duration,
    /// How long a keep-alive connection may sit between requests.
    pub idle_timeout: Duration,
    /// Largest request line plus headers, in bytes (431 above).
    pub max_header_bytes: usize,
}

impl HttpSettings {
    pub(super) fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let ms = |name: &'static str, default: u64| -> Result<Duration, ConfigError> {
            parse_num(get, name, default, |v| (100..=3_600_000).contains(v))
                .map(Duration::from_millis)
        };
        Ok(Self {
            header_timeout: ms("HTTP_HEADER_TIMEOUT_MS", 10_000)?,
            body_timeout: ms("HTTP_BODY_TIMEOUT_MS", 120_000)?,
            idle_timeout: ms("HTTP_IDLE_TIMEOUT_MS", 75_000)?,
            // hyper reads at least 8 KiB at a time; more than 256 KiB of headers is abuse.
            max_header_bytes: parse_num(get, "HTTP_MAX_HEADER_BYTES", 32_768usize, |v| {
                (8_192..=262_144).contains(v)
            })?,
        })
    }
}

/// Settings of outbound webhook deliveries.
#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// Waits between a delivery's attempts: one fewer than the attempts (the interface's 5).
    pub retry_schedule: Vec<Duration>,
    /// Limit of one attempt, connection to last byte read.
    pub timeout: Duration,
}

impl WebhookSettings {
    /// The interface's waits between attempts: 1 min, 5 min, 30 min, 2 h.
    pub const DEFAULT_SCHEDULE: &'static str = "1m,5m,30m,2h";
    /// The interface's bound on attempts per delivery.
    pub const MAX_ATTEMPTS: usize = 5;

    /// Attempts per delivery: the first plus one per wait.
    pub fn max_attempts(&self) -> i32 {
        i32::try_from(self.retry_schedule.len() + 1).unwrap_or(i32::MAX)
    }

    /// The wait after failed attempt `attempt` (1-based), or `None` after the last.
    pub fn wait_after(&self, attempt: i32) -> Option<Duration> {
        let i = usize::try_from(attempt).ok()?.checked_sub(1)?;
        self.retry_schedule.get(i).copied()
    }

    pub(super) fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let schedule_raw =
            var(get, "WEBHOOK_RETRY_SCHEDULE").unwrap_or_else(|| Self::DEFAULT_SCHEDULE.to_owned());
        let retry_schedule = parse_schedule(&schedule_raw)
            .map_err(|problem| err("WEBHOOK_RETRY_SCHEDULE", problem))?;
        let timeout = parse_num(get, "WEBHOOK_TIMEOUT_MS", 10_000u64, |v| {
            (100..=120_000).contains(v)
        })
        .map(Duration::from_millis)?;
        Ok(Self {
            retry_schedule,
            timeout,
        })
    }
}

/// Parses a retry schedule such as `1m,5m,30m,2h` (units `ms`, `s`, `m`, `h`): exactly one wait
/// fewer than [`WebhookSettings::MAX_ATTEMPTS`], each from 1 ms to 7 days.
fn parse_schedule(raw: &str) -> Result<Vec<Duration>, String> {
    let mut waits = Vec::new();
    for part in raw.split(',').map(str::trim) {
        let split = part
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(|| format!("'{part}' has no unit (ms, s, m or h)"))?;
        let (digits, unit) = part.split_at(split);
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("'{part}' does not start with a whole number"))?;
        let ms_per = match unit.trim() {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            other => return Err(format!("'{other}' in '{part}' is not ms, s, m or h")),
        };
        let ms = n.saturating_mul(ms_per);
        if ms == 0 || ms > 7 * 86_400_000 {
            return Err(format!("'{part}' must be from 1 ms to 7 days"));
        }
        waits.push(Duration::from_millis(ms));
    }
    if waits.len() != WebhookSettings::MAX_ATTEMPTS - 1 {
        return Err(format!(
            "must list exactly {} waits (a delivery has at most {} attempts), got {}",
            WebhookSettings::MAX_ATTEMPTS - 1,
            WebhookSettings::MAX_ATTEMPTS,
            waits.len()
        ));
    }
    Ok(waits)
}

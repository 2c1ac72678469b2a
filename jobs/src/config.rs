//! Typed configuration, read and checked once at start-up (12-factor: everything from the
//! environment). A missing or malformed variable stops the process with the variable's name.

mod services;
pub use services::{CrmSettings, HttpSettings, OutboundSettings, WebhookSettings};

use base64::Engine as _;
use secrecy::{ExposeSecret, SecretBox, SecretString};
use std::fmt;
use std::time::Duration;

/// Where the process runs; only `development` accepts the built-in development master key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEnv {
    Development,
    Test,
    Production,
}

/// The master key that seals secrets at rest, the previous ones still accepted while a rotation
/// rolls out (`MASTER_KEY_PREVIOUS`), and the key the API-key pepper derives from
/// (`API_KEY_HASH_KEY`, the master key unless set); all kept out of `Debug` output.
#[derive(Clone)]
pub struct MasterKey(std::sync::Arc<Keys>);

struct Keys {
    current: SecretBox<[u8; 32]>,
    previous: Vec<SecretBox<[u8; 32]>>,
    hashing: Option<SecretBox<[u8; 32]>>,
}

impl MasterKey {
    pub fn new(bytes: [u8; 32]) -> Self {
        Self::with_keys(bytes, Vec::new(), None)
    }

    /// The current key, previous keys that still open sealed values, and the API-key hashing key.
    pub fn with_keys(
        current: [u8; 32],
        previous: Vec<[u8; 32]>,
        hashing: Option<[u8; 32]>,
    ) -> Self {
        let boxed = |k: [u8; 32]| SecretBox::new(Box::new(k));
        Self(std::sync::Arc::new(Keys {
            current: boxed(current),
            previous: previous.into_iter().map(boxed).collect(),
            hashing: hashing.map(boxed),
        }))
    }

    /// The key sealing new values.
    pub fn bytes(&self) -> &[u8; 32] {
        self.0.current.expose_secret()
    }

    /// Every key that may open a sealed value: the current one first.
    pub fn opening_keys(&self) -> impl Iterator<Item = &[u8; 32]> {
        std::iter::once(self.bytes()).chain(self.0.previous.iter().map(|k| k.expose_secret()))
    }

    /// The key the API-key hashing pepper derives from: it must outlive master key rotations,
    /// since a key's hash cannot be recomputed without the key.
    pub fn hashing_bytes(&self) -> &[u8; 32] {
        self.0
            .hashing
            .as_ref()
            .map_or_else(|| self.bytes(), |k| k.expose_secret())
    }
}

/// A base64 key of 32 bytes, `name` naming it in the error.
pub fn parse_key(name: &'static str, raw: &str) -> Result<[u8; 32], ConfigError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(raw.trim())
        .map_err(|_| err(name, "is not valid base64"))?;
    bytes
        .try_into()
        .map_err(|_| err(name, "must decode to exactly 32 bytes"))
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey([redacted])")
    }
}

/// The development-only master key. It is public, so it is refused outside `APP_ENV=development`.
const DEVELOPMENT_MASTER_KEY: [u8; 32] = *b"development-only-master-key-0001";

/// Settings of the job platform (worker and the api's pushes).
#[derive(Clone, Debug)]
pub struct JobSettings {
    /// How long a claimed job may run before another worker may take it over.
    pub lease: Duration,
    /// Backoff base of a failed job (doubles per attempt, at most an hour).
    pub retry_base: Duration,
    /// How often the sweeper looks for due, lost or stuck jobs.
    pub sweep_interval: Duration,
    /// How long a queued job may wait after its push before the sweeper pushes it again.
    pub repush_after: Duration,
    /// How long finished jobs are kept (PostgreSQL rows and Redis task data).
    pub retention: Duration,
    /// How often an idle worker polls Redis for new work.
    pub poll_interval: Duration,
    /// apalis worker heartbeat; a worker silent for three heartbeats has its tasks handed on.
    pub heartbeat: Duration,
    /// Jobs run at once per queue per worker process.
    pub concurrency: usize,
    /// How long SIGTERM waits for running jobs.
    pub shutdown_timeout: Duration,
    /// How often the cron schedule is checked.
    pub cron_interval: Duration,
    /// Port of the worker's Prometheus metrics (`None`: off).
    pub metrics_port: Option<u16>,
    /// Whether the cron tick schedules each company's nightly ECRI fit and runs.
    pub ecri_nightly: bool,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub app_env: AppEnv,
    pub database_url: SecretString,
    pub database_max_connections: u32,
    pub redis_url: SecretString,
    /// Prefix of every Redis key this service writes, so several deployments (or test runs) can
    /// share one Redis.
    pub redis_key_prefix: String,
    pub port: u16,
    pub public_base_url: String,
    pub master_key: MasterKey,
    pub rate_limit_per_minute: u32,
    pub rate_limit_sync_per_minute: u32,
    pub trial_days: u32,
    /// Proxies in front of the api that append the client's address to `X-Forwarded-For`
    /// (a platform router counts as one). The client address is the entry that many places from
    /// the end; with 0 the header is ignored and the peer address is the client.
    pub trusted_proxies: usize,
    pub log_format: LogFormat,
    /// SMTP server for outgoing mail; without it mail is written to `mail_dir`.
    pub smtp_url: Option<SecretString>,
    pub mail_from: String,
    pub mail_dir: std::path::PathBuf,
    pub jobs: JobSettings,
    pub outbound: OutboundSettings,
    pub webhooks: WebhookSettings,
    pub crm: CrmSettings,
    pub http: HttpSettings,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    Pretty,
}

#[derive(Debug, thiserror::Error)]
#[error("configuration variable {name}: {problem}")]
pub struct ConfigError {
    pub name: &'static str,
    pub problem: String,
}

fn err(name: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        name,
        problem: problem.into(),
    }
}

/// Reads a variable; `Ok(None)` when unset or empty.
fn var(get: &dyn Fn(&str) -> Option<String>, name: &'static str) -> Option<String> {
    get(name).filter(|v| !v.trim().is_empty())
}

/// Reads a variable that also answers to an older name; gives the name actually set, so an
/// error names what the operator wrote. Both set to different values is an error: one of them
/// would be silently ignored.
fn var_or_alias(
    get: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    old: &'static str,
) -> Result<(&'static str, Option<String>), ConfigError> {
    match (var(get, name), var(get, old)) {
        (Some(new), Some(previous)) if new.trim() != previous.trim() => Err(err(
            name,
            format!("is set and so is its old name {old}, to a different value; keep one"),
        )),
        (Some(new), _) => Ok((name, Some(new))),
        (None, Some(previous)) => Ok((old, Some(previous))),
        (None, None) => Ok((name, None)),
    }
}

fn parse_num<T: std::str::FromStr>(
    get: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
    valid: impl Fn(&T) -> bool,
) -> Result<T, ConfigError> {
    match var(get, name) {
        None => Ok(default),
        Some(raw) => match raw.trim().parse::<T>() {
            Ok(v) if valid(&v) => Ok(v),
            _ => Err(err(name, format!("'{raw}' is not an accepted value"))),
        },
    }
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&|name| std::env::var(name).ok())
    }

    /// Reads configuration through `get`, so tests can build one without touching the
    /// process environment.
    pub fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let app_env = match var(get, "APP_ENV").as_deref().map(str::trim) {
            None | Some("production") => AppEnv::Production,
            Some("development") => AppEnv::Development,
            Some("test") => AppEnv::Test,
            Some(other) => {
                return Err(err(
                    "APP_ENV",
                    format!("'{other}' is not one of production, development, test"),
                ))
            }
        };
        let database_url =
            var(get, "DATABASE_URL").ok_or_else(|| err("DATABASE_URL", "is required"))?;
        if !(database_url.starts_with("postgres://") || database_url.starts_with("postgresql://")) {
            return Err(err("DATABASE_URL", "must be a postgres:// URL"));
        }
        let redis_url = match var(get, "REDIS_URL") {
            Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => url,
            Some(_) => return Err(err("REDIS_URL", "must be a redis:// or rediss:// URL")),
            None if app_env == AppEnv::Production => return Err(err("REDIS_URL", "is required")),
            None => "redis://127.0.0.1:6379".to_owned(),
        };
        let redis_key_prefix = var(get, "REDIS_KEY_PREFIX").unwrap_or_else(|| "ssp".to_owned());
        if redis_key_prefix.len() > 64 || redis_key_prefix.contains(char::is_whitespace) {
            return Err(err(
                "REDIS_KEY_PREFIX",
                "must be at most 64 characters without spaces",
            ));
        }
        let port = parse_num(get, "PORT", 8080u16, |_| true)?;
        let public_base_url = var(get, "PUBLIC_BASE_URL")
            .unwrap_or_else(|| format!("http://localhost:{port}"))
            .trim_end_matches('/')
            .to_owned();
        if !(public_base_url.starts_with("http://") || public_base_url.starts_with("https://")) {
            return Err(err("PUBLIC_BASE_URL", "must be an http(s) URL"));
        }
        let master_key = match var(get, "MASTER_KEY") {
            Some(raw) => {
                let previous = var(get, "MASTER_KEY_PREVIOUS")
                    .unwrap_or_default()
                    .split(',')
                    .filter(|k| !k.trim().is_empty())
                    .map(|k| parse_key("MASTER_KEY_PREVIOUS", k))
                    .collect::<Result<Vec<_>, _>>()?;
                let hashing = var(get, "API_KEY_HASH_KEY")
                    .map(|k| parse_key("API_KEY_HASH_KEY", &k))
                    .transpose()?;
                MasterKey::with_keys(parse_key("MASTER_KEY", &raw)?, previous, hashing)
            }
            None if app_env == AppEnv::Production => {
                return Err(err(
                    "MASTER_KEY",
                    "is required (base64 of 32 random bytes: `openssl rand -base64 32`)",
                ))
            }
            None => MasterKey::new(DEVELOPMENT_MASTER_KEY),
        };
        let per_minute = |v: &u32| (1..=1_000_000).contains(v);
        let log_format = match var(get, "LOG_FORMAT").as_deref() {
            None => {
                if app_env == AppEnv::Production {
                    LogFormat::Json
                } else {
                    LogFormat::Pretty
                }
            }
            Some("json") => LogFormat::Json,
            Some("pretty") => LogFormat::Pretty,
            Some(other) => {
                return Err(err(
                    "LOG_FORMAT",
                    format!("'{other}' is not json or pretty"),
                ))
            }
        };
        Ok(Self {
            app_env,
            database_url: database_url.into(),
            database_max_connections: parse_num(get, "DATABASE_MAX_CONNECTIONS", 10u32, |v| {
                (1..=500).contains(v)
            })?,
            redis_url: redis_url.into(),
            redis_key_prefix,
            port,
            public_base_url,
            master_key,
            rate_limit_per_minute: parse_num(get, "RATE_LIMIT_PER_MINUTE", 120u32, per_minute)?,
            rate_limit_sync_per_minute: parse_num(
                get,
                "RATE_LIMIT_SYNC_PER_MINUTE",
                60u32,
                per_minute,
            )?,
            trial_days: parse_num(get, "TRIAL_DAYS", 14u32, |v| *v <= 3650)?,
            trusted_proxies: parse_num(get, "TRUSTED_PROXIES", 0usize, |v| *v <= 10)?,
            log_format,
            smtp_url: match var(get, "SMTP_URL") {
                Some(url) if url.starts_with("smtp://") || url.starts_with("smtps://") => {
                    Some(url.into())
                }
                Some(_) => return Err(err("SMTP_URL", "must be an smtp:// or smtps:// URL")),
                None => None,
            },
            mail_from: var(get, "MAIL_FROM")
                .unwrap_or_else(|| "Self-Storage Pricing <no-reply@localhost>".to_owned()),
            mail_dir: var(get, "MAIL_DIR")
                .unwrap_or_else(|| ".local/mail".to_owned())
                .into(),
            jobs: JobSettings::from_lookup(get)?,
            outbound: OutboundSettings::from_lookup(get)?,
            webhooks: WebhookSettings::from_lookup(get)?,
            crm: CrmSettings::from_lookup(get)?,
            http: HttpSettings::from_lookup(get)?,
        })
    }
}

impl JobSettings {
    fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let ms = |name: &'static str, default: u64, min: u64| -> Result<Duration, ConfigError> {
            parse_num(get, name, default, |v| *v >= min && *v <= 86_400_000 * 365)
                .map(Duration::from_millis)
        };
        let secs = |name: &'static str, default: u64| -> Result<Duration, ConfigError> {
            parse_num(get, name, default, |v| *v >= 1 && *v <= 86_400 * 3650)
                .map(Duration::from_secs)
        };
        let metrics_port = parse_num(get, "METRICS_PORT", 9464u16, |_| true)?;
        Ok(Self {
            lease: secs("JOB_LEASE_SECS", 60)?,
            retry_base: ms("JOB_RETRY_BASE_MS", 10_000, 1)?,
            sweep_interval: ms("SWEEP_INTERVAL_MS", 1_000, 10)?,
            repush_after: ms("JOB_REPUSH_AFTER_MS", 5_000, 10)?,
            retention: secs("JOB_RETENTION_SECS", 14 * 86_400)?,
            poll_interval: ms("WORKER_POLL_INTERVAL_MS", 100, 10)?,
            heartbeat: secs("WORKER_HEARTBEAT_SECS", 5)?,
            concurrency: parse_num(get, "WORKER_CONCURRENCY", 4usize, |v| (1..=256).contains(v))?,
            shutdown_timeout: secs("WORKER_SHUTDOWN_TIMEOUT_SECS", 30)?,
            cron_interval: ms("CRON_INTERVAL_MS", 1_000, 10)?,
            metrics_port: (metrics_port != 0).then_some(metrics_port),
            ecri_nightly: parse_num(get, "ECRI_NIGHTLY", true, |_| true)?,
        })
    }
}

#[cfg(test)]
mod tests;

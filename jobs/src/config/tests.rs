use super::*;
use std::collections::HashMap;

fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Config::from_lookup(&move |k| map.get(k).cloned())
}

#[test]
fn production_requires_master_key_and_redis() {
    let e = config(&[
        ("DATABASE_URL", "postgres://x/y"),
        ("REDIS_URL", "redis://h"),
    ])
    .unwrap_err();
    assert_eq!(e.name, "MASTER_KEY");
    let e = config(&[("DATABASE_URL", "postgres://x/y")]).unwrap_err();
    assert_eq!(e.name, "REDIS_URL");
}

#[test]
fn development_defaults() {
    let c = config(&[
        ("DATABASE_URL", "postgres://x/y"),
        ("APP_ENV", "development"),
    ])
    .unwrap();
    assert_eq!(c.port, 8080);
    assert_eq!(c.rate_limit_per_minute, 120);
    assert_eq!(c.rate_limit_sync_per_minute, 60);
    assert_eq!(c.trial_days, 14);
    assert_eq!(c.trusted_proxies, 0);
    assert_eq!(c.public_base_url, "http://localhost:8080");
    assert_eq!(c.http.header_timeout, Duration::from_secs(10));
    assert_eq!(c.http.body_timeout, Duration::from_secs(120));
    assert_eq!(c.http.idle_timeout, Duration::from_secs(75));
    assert_eq!(c.http.max_header_bytes, 32_768);
    assert!(!format!("{c:?}").contains("development-only"));
}

#[test]
fn bad_values_name_their_variable() {
    for (name, value) in [
        ("PORT", "eighty"),
        ("RATE_LIMIT_PER_MINUTE", "0"),
        ("MASTER_KEY", "c2hvcnQ="),
        ("APP_ENV", "staging"),
        ("LOG_FORMAT", "xml"),
        ("WEBHOOK_RETRY_SCHEDULE", "1m,5m,30m"),
        ("WEBHOOK_RETRY_SCHEDULE", "1m,5m,30m,2d"),
        ("WEBHOOK_RETRY_SCHEDULE", "1m,0s,30m,2h"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "sometimes"),
        ("WEBHOOK_CA_FILE", "/nonexistent/ca.pem"),
        ("WEBHOOK_TIMEOUT_MS", "0"),
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "sometimes"),
        ("OUTBOUND_CA_FILE", "/nonexistent/ca.pem"),
        ("CRM_PULL_TIMEOUT_MS", "0"),
        ("CRM_PULL_MAX_BYTES", "12"),
        ("HTTP_HEADER_TIMEOUT_MS", "50"),
        ("HTTP_BODY_TIMEOUT_MS", "soon"),
        ("HTTP_IDLE_TIMEOUT_MS", "3600001"),
        ("HTTP_MAX_HEADER_BYTES", "1024"),
    ] {
        let e = config(&[
            ("DATABASE_URL", "postgres://x/y"),
            ("APP_ENV", "test"),
            (name, value),
        ])
        .map(|_| ())
        .unwrap_err();
        assert_eq!(e.name, name, "{value}");
    }
    let e = config(&[("DATABASE_URL", "mysql://x")]).unwrap_err();
    assert_eq!(e.name, "DATABASE_URL");
}

#[test]
fn webhook_settings() {
    let base = [("DATABASE_URL", "postgres://x/y"), ("APP_ENV", "test")];
    let c = config(&base).unwrap();
    let min = Duration::from_secs(60);
    assert_eq!(
        c.webhooks.retry_schedule,
        vec![min, 5 * min, 30 * min, 120 * min]
    );
    assert_eq!(c.webhooks.max_attempts(), 5);
    assert_eq!(c.webhooks.wait_after(1), Some(min));
    assert_eq!(c.webhooks.wait_after(4), Some(120 * min));
    assert_eq!(c.webhooks.wait_after(5), None);
    assert_eq!(c.webhooks.timeout, Duration::from_secs(10));
    assert_eq!(
        c.outbound.private_targets,
        crate::outbound::guard::PrivateTargets::Refused
    );
    let c = config(&[
        base[0],
        base[1],
        ("WEBHOOK_RETRY_SCHEDULE", "200ms, 1s,2s ,3s"),
    ])
    .unwrap();
    assert_eq!(c.webhooks.wait_after(2), Some(Duration::from_secs(1)));
    // A file that is not PEM is refused with the variable's name.
    let path = std::env::temp_dir().join(format!("not-pem-{}.txt", std::process::id()));
    std::fs::write(&path, "hello").unwrap();
    let e = config(&[
        base[0],
        base[1],
        ("WEBHOOK_CA_FILE", path.to_str().unwrap()),
    ])
    .map(|_| ())
    .unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(e.name, "WEBHOOK_CA_FILE");
}

#[test]
fn outbound_settings_take_their_old_webhook_names_too() {
    use crate::outbound::guard::PrivateTargets;
    let base = [("DATABASE_URL", "postgres://x/y"), ("APP_ENV", "test")];
    let loopback = PrivateTargets::parse("127.0.0.1").unwrap();
    for name in [
        "OUTBOUND_ALLOW_PRIVATE_TARGETS",
        "WEBHOOK_ALLOW_PRIVATE_TARGETS",
    ] {
        let c = config(&[base[0], base[1], (name, "127.0.0.1")]).unwrap();
        assert_eq!(c.outbound.private_targets, loopback, "{name}");
    }
    let same = config(&[
        base[0],
        base[1],
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.1"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", " 127.0.0.1"),
    ])
    .unwrap();
    assert_eq!(same.outbound.private_targets, loopback);
    let e = config(&[
        base[0],
        base[1],
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.1"),
        ("WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
    ])
    .map(|_| ())
    .unwrap_err();
    assert_eq!(e.name, "OUTBOUND_ALLOW_PRIVATE_TARGETS");
    assert!(e.problem.contains("WEBHOOK_ALLOW_PRIVATE_TARGETS"), "{e}");
    let c = config(&base).unwrap();
    assert_eq!(c.crm.timeout, Duration::from_secs(30));
    assert_eq!(c.crm.max_answer_bytes, 32 * 1024 * 1024);
}

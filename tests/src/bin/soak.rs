//! The soak run: the whole system under a steady nightly load for a fixed time while its parts
//! fail, then a drain and a table of what happened.
//!
//! It starts a private PostgreSQL cluster and a private Redis (so the faults never touch a
//! shared server), 2 `api` processes on two ports and 3 `worker` processes (the real binaries,
//! production settings and rate limits), a local HTTPS webhook receiver that fails one delivery
//! attempt in ten, and a local HTTPS CRM. Companies push nightly-shaped syncs (one realistic
//! payload per facility per night, nights compressed to `--night-secs`), every tenth company
//! also has its CRM pulled each night, and every company reads its status. Clients spread
//! requests over both api processes and send a request again after a refused connection or a
//! 503 (on the other process) or after a 429 (after its `Retry-After`).
//!
//! Faults, each once, at 20 %, 40 %, 60 % and 80 % of the run: kill -9 of a worker (a new one
//! is started), SIGTERM of an api (started again when it has exited), a Redis restart (killed,
//! back empty) and a PostgreSQL restart (`pg_ctl restart -m fast`). After the run the load
//! stops and the jobs drain; then it prints the table (markdown, then one JSON line).
//!
//! `scripts/soak --duration 10m`

use anyhow::Context as _;
use clap::Parser;
use e2e::fleet::{
    config_of, create_migrated_database, free_port, wait_ready, PrivatePostgres, Proc,
};
use e2e::receiver::{Hit, Receiver, Reply, TestCa};
use e2e::{workspace_bin, PrivateRedis};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

#[derive(Parser, Clone)]
struct Args {
    /// How long the load runs (`90s`, `10m`); the drain comes after.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    duration: Duration,
    /// Companies pushing.
    #[arg(long, default_value_t = 300)]
    companies: usize,
    /// Facilities per company (one sync each per night).
    #[arg(long, default_value_t = 2)]
    facilities: usize,
    /// Length of a night: each company pushes its facilities once per night.
    #[arg(long, default_value_t = 60)]
    night_secs: u64,
    /// Every n-th company also has a CRM connected and pulled each night.
    #[arg(long, default_value_t = 10)]
    crm_every: usize,
    /// Longest wait for the jobs to drain after the load stops.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    drain_limit: Duration,
}

fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let (digits, unit) = raw.split_at(raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len()));
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{raw}' is not a duration such as 90s or 10m"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!("'{raw}': the unit is s, m or h")),
    }
}

const CRM_KEY: &str = "soak-crm-read-only-key";
/// A production master key for the run's throwaway database (32 bytes, base64).
const MASTER_KEY: &str = "c29hay1ydW4tbWFzdGVyLWtleS0zMi1ieXRlcy1vayE=";

/// Answers by status code; `conn` is a request that got no HTTP answer.
#[derive(Default)]
struct Tally {
    by_status: BTreeMap<String, u64>,
}

/// The clients' side: round-robin over the api processes, with retries.
struct Clients {
    http: reqwest::Client,
    bases: Vec<String>,
    next: AtomicUsize,
    tally: Mutex<Tally>,
}

impl Clients {
    fn note(&self, what: String) {
        *self
            .tally
            .lock()
            .expect("tally")
            .by_status
            .entry(what)
            .or_default() += 1;
    }

    /// Sends one request, again after a refused connection, a 502/503/504 or a 429, for at
    /// most two minutes; the last answer.
    async fn send(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Option<(u16, Value)> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let base = &self.bases[self.next.fetch_add(1, Ordering::Relaxed) % self.bases.len()];
            let mut req = self
                .http
                .request(method.clone(), format!("{base}{path}"))
                .bearer_auth(key)
                .timeout(Duration::from_secs(30));
            if let Some(b) = body {
                req = req.json(b);
            }
            let pause = match req.send().await {
                Ok(r) => {
                    let status = r.status().as_u16();
                    let retry_after = r
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<u64>().ok());
                    let text = r.text().await.unwrap_or_default();
                    self.note(status.to_string());
                    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
                    match status {
                        429 => Duration::from_secs(retry_after.unwrap_or(1).clamp(1, 60)),
                        502..=504 => Duration::from_millis(200 * u64::from(attempt.min(10))),
                        _ => return Some((status, value)),
                    }
                }
                Err(_) => {
                    self.note("no answer".to_owned());
                    Duration::from_millis(100 * u64::from(attempt.min(10)))
                }
            };
            if Instant::now() + pause > deadline {
                return None;
            }
            tokio::time::sleep(pause).await;
        }
    }
}

struct Company {
    index: usize,
    key: String,
    data_source: Option<Uuid>,
}

/// The processes of the run; replaced ones are kept for their peak memory.
#[derive(Default)]
struct Fleet {
    apis: Vec<Option<Proc>>,
    workers: Vec<Proc>,
    retired: Vec<(String, u64)>,
}

impl Fleet {
    fn sample(&mut self) {
        for p in self
            .apis
            .iter_mut()
            .flatten()
            .chain(self.workers.iter_mut())
        {
            p.sample_rss();
        }
    }

    fn retire(&mut self, mut p: Proc, how: &str) {
        p.sample_rss();
        self.retired
            .push((format!("{} ({how})", p.name), p.peak_rss_kib));
    }
}

struct Env {
    vars: BTreeMap<String, String>,
    logs: PathBuf,
}

impl Env {
    fn api(&self, n: usize, port: u16) -> anyhow::Result<Proc> {
        let mut vars = self.vars.clone();
        vars.insert("PORT".into(), port.to_string());
        Proc::spawn(
            &format!("api-{n}"),
            &workspace_bin("api"),
            &["serve", "--no-migrate"],
            &vars,
            &self.logs,
        )
    }

    fn worker(&self, n: usize) -> anyhow::Result<Proc> {
        Proc::spawn(
            &format!("worker-{n}"),
            &workspace_bin("worker"),
            &[],
            &self.vars,
            &self.logs,
        )
    }
}

fn night_date(night: u64) -> String {
    (chrono::NaiveDate::from_ymd_opt(2024, 1, 1).expect("date")
        + chrono::Duration::days(night as i64))
    .to_string()
}

/// One company's nights: its facilities' syncs, its CRM pull, a status read; the ingest job
/// ids of the accepted syncs.
async fn company_load(
    clients: Arc<Clients>,
    c: Arc<Company>,
    args: Args,
    start: Instant,
    end: Instant,
) -> Vec<Uuid> {
    let night = Duration::from_secs(args.night_secs);
    let offset = night.mul_f64(c.index as f64 / args.companies as f64);
    let mut jobs = Vec::new();
    for n in 0u64.. {
        let at = start + offset + night * n as u32;
        if at >= end {
            break;
        }
        tokio::time::sleep_until(at.into()).await;
        let date = night_date(n);
        for f in 0..args.facilities {
            let body = e2e::payload(&format!("Site {f}"), &date, 20, 15, 20);
            if let Some((200, res)) = clients
                .send(&c.key, Method::POST, "/api/v1/sync", Some(&body))
                .await
            {
                if let Some(id) = res["job"]["id"].as_str().and_then(|s| s.parse().ok()) {
                    jobs.push(id);
                }
            }
        }
        if let Some(ds) = c.data_source {
            clients
                .send(
                    &c.key,
                    Method::POST,
                    &format!("/api/v1/data-sources/{ds}/pull"),
                    Some(&json!({})),
                )
                .await;
        }
        clients
            .send(&c.key, Method::GET, "/api/v1/status", None)
            .await;
    }
    jobs
}

/// The CRM: two snapshots for the asked date, for the company named by the path; 401 without
/// the key.
fn crm_answer(_: usize, hit: &Hit) -> Reply {
    if hit.header("authorization") != Some(&format!("Bearer {CRM_KEY}")) {
        return Reply::status(401);
    }
    let date = hit
        .query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .find_map(|p| p.strip_prefix("date="))
        .unwrap_or_default()
        .to_owned();
    let who = hit.path.split('/').nth(2).unwrap_or("x").to_owned();
    Reply {
        body: json!({ "snapshots": [
            { "facility": { "external_id": format!("{who}-A"), "source_system": "crm", "name": format!("CRM {who} A") }, "date": date, "occupancy_pct": 91 },
            { "facility": { "external_id": format!("{who}-B"), "source_system": "crm", "name": format!("CRM {who} B") }, "date": date, "occupancy_pct": 55 }
        ]})
        .to_string(),
        ..Reply::status(200)
    }
}

/// Pushes one sync for the canary company (retrying) and waits until its ingest and the
/// pricing run it leads to have succeeded; false after `limit`.
async fn canary(clients: &Clients, db: &sqlx::PgPool, key: &str, n: u64, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let body = e2e::payload("Canary", &night_date(n), 5, 3, 5);
    let Some((200, res)) = clients
        .send(key, Method::POST, "/api/v1/sync", Some(&body))
        .await
    else {
        return false;
    };
    let Some(job) = res["job"]["id"]
        .as_str()
        .and_then(|s| s.parse::<Uuid>().ok())
    else {
        return false;
    };
    while Instant::now() < deadline {
        let done: Result<Option<bool>, _> = sqlx::query_scalar(
            "SELECT p.status = 'succeeded' FROM job_runs i
               JOIN job_runs p ON p.id = (i.result->>'pricing_run')::uuid
             WHERE i.id = $1 AND i.status = 'succeeded'",
        )
        .bind(job)
        .fetch_optional(db)
        .await;
        if let Ok(Some(true)) = done {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

struct FaultOutcome {
    fault: &'static str,
    at_s: f64,
    recovered_s: Option<f64>,
    note: String,
    /// For a killed worker: (its jobs running at the kill, seconds until all were taken over).
    takeover: Option<tokio::task::JoinHandle<(i64, Option<f64>)>>,
}

async fn all_ready(http: &reqwest::Client, bases: &[String], limit: Duration) -> bool {
    for b in bases {
        if !wait_ready(http, b, limit).await {
            return false;
        }
    }
    true
}

#[allow(clippy::too_many_arguments)]
async fn inject(
    which: usize,
    fleet: &Mutex<Fleet>,
    env: &Env,
    ports: &[u16],
    pg: &Arc<PrivatePostgres>,
    redis: &tokio::sync::Mutex<PrivateRedis>,
    clients: &Clients,
    db: &sqlx::PgPool,
    canary_key: &str,
    run_start: Instant,
) -> anyhow::Result<FaultOutcome> {
    let limit = Duration::from_secs(300);
    let t0 = Instant::now();
    let at_s = (t0 - run_start).as_secs_f64();
    let mut note = String::new();
    let mut takeover = None;
    let fault = match which {
        0 => {
            // The victim is a worker caught holding jobs (the first one after 30 s without).
            let pids: Vec<u32> = fleet
                .lock()
                .expect("fleet")
                .workers
                .iter()
                .map(Proc::pid)
                .collect();
            let mut index = 0;
            let look = Instant::now();
            'find: while look.elapsed() < Duration::from_secs(30) {
                let holders: Vec<String> = sqlx::query_scalar(
                    "SELECT DISTINCT claimed_by FROM job_runs WHERE status = 'running'",
                )
                .fetch_all(db)
                .await
                .unwrap_or_default();
                for (i, pid) in pids.iter().enumerate() {
                    if holders.iter().any(|h| h.contains(&format!("-{pid}-"))) {
                        index = i;
                        break 'find;
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let mut victim = fleet.lock().expect("fleet").workers.remove(index);
            let pid = victim.pid();
            victim.kill9();
            let next = {
                let f = fleet.lock().expect("fleet");
                f.workers.len() + f.retired.len() + 2
            };
            let fresh = env.worker(next)?;
            {
                let mut f = fleet.lock().expect("fleet");
                f.retire(victim, "killed");
                f.workers.push(fresh);
            }
            // Its claimed jobs wait for their lease to expire; then the sweeper hands them on.
            // Watched in the background so the next faults keep their times.
            let db = db.clone();
            takeover = Some(tokio::spawn(async move {
                let mut held = 0i64;
                while t0.elapsed() < limit {
                    let open: Result<i64, _> = sqlx::query_scalar(
                        "SELECT count(*) FROM job_runs WHERE status = 'running' AND claimed_by LIKE '%-' || $1 || '-%'",
                    )
                    .bind(pid.to_string())
                    .fetch_one(&db)
                    .await;
                    if let Ok(n) = open {
                        held = held.max(n);
                        if n == 0 {
                            return (held, Some(t0.elapsed().as_secs_f64()));
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                (held, None)
            }));
            "kill -9 of a worker (a new one started)"
        }
        1 => {
            let mut victim = fleet.lock().expect("fleet").apis[0]
                .take()
                .context("api 1 runs")?;
            let clean = victim.terminate(Duration::from_secs(60)).await;
            note = format!(
                "exited {} after {:.1} s; ",
                if clean { "cleanly" } else { "only when killed" },
                t0.elapsed().as_secs_f64()
            );
            let fresh = env.api(1, ports[0])?;
            let mut f = fleet.lock().expect("fleet");
            f.retire(victim, "terminated");
            f.apis[0] = Some(fresh);
            "SIGTERM of an api (started again)"
        }
        2 => {
            redis.lock().await.restart().await;
            "Redis restart (killed, back empty)"
        }
        _ => {
            let pg = pg.clone();
            tokio::task::spawn_blocking(move || pg.restart()).await??;
            note = format!("pg_ctl restart took {:.1} s; ", t0.elapsed().as_secs_f64());
            "PostgreSQL restart (pg_ctl restart -m fast)"
        }
    };
    let ready = all_ready(&clients.http, &clients.bases, limit).await;
    let processed = canary(clients, db, canary_key, 700 + which as u64, limit).await;
    let recovered_s = (ready && processed).then(|| t0.elapsed().as_secs_f64());
    if !ready {
        note.push_str("an api never became ready; ");
    }
    if !processed {
        note.push_str("the canary sync was not processed; ");
    }
    Ok(FaultOutcome {
        fault,
        at_s,
        recovered_s,
        note: note.trim_end_matches("; ").to_owned(),
        takeover,
    })
}

async fn count(db: &sqlx::PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(db).await.unwrap_or(-1)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // On Ctrl-C or SIGTERM the run is dropped, which stops every process and server it started.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = run(args) => result,
        _ = tokio::signal::ctrl_c() => anyhow::bail!("interrupted"),
        _ = term.recv() => anyhow::bail!("terminated"),
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let run_id = Uuid::new_v4().simple().to_string();
    eprintln!("soak: starting private PostgreSQL and Redis");
    let pg = Arc::new(PrivatePostgres::start()?);
    let redis = PrivateRedis::start().await;
    let redis_url = redis.url();
    let redis = tokio::sync::Mutex::new(redis);
    let ca = TestCa::new();
    // Every tenth attempt fails with a 500.
    let receiver = Receiver::start(&ca, |n, _| {
        Reply::status(if n % 10 == 9 { 500 } else { 200 })
    })
    .await;
    let crm = Receiver::start(&ca, crm_answer).await;
    let logs = std::env::temp_dir().join(format!("soak-{run_id}"));
    std::fs::create_dir_all(&logs)?;

    let vars: BTreeMap<String, String> = [
        ("APP_ENV", "production".to_owned()),
        ("MASTER_KEY", MASTER_KEY.to_owned()),
        ("DATABASE_URL", format!("{}/ssp", pg.server_url())),
        ("REDIS_URL", redis_url),
        ("LOG_FORMAT", "json".to_owned()),
        ("RUST_LOG", "warn".to_owned()),
        ("METRICS_PORT", "0".to_owned()),
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8".to_owned()),
        ("OUTBOUND_CA_FILE", ca.pem_path().to_owned()),
        // The production waits (1 m, 5 m, 30 m, 2 h) would outlast the drain.
        ("WEBHOOK_RETRY_SCHEDULE", "2s,5s,10s,20s".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    create_migrated_database(&pg.server_url(), "ssp", &vars).await?;
    let db = sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(10))
        .connect(&format!("{}/ssp", pg.server_url()))
        .await?;
    let config = config_of(&vars);
    let hasher = jobs::tenancy::KeyHasher::new(&config.master_key);
    let env = Env {
        vars,
        logs: logs.clone(),
    };

    let ports = [free_port(), free_port()];
    let mut fleet = Fleet::default();
    for (i, port) in ports.iter().enumerate() {
        fleet.apis.push(Some(env.api(i + 1, *port)?));
    }
    for i in 0..3 {
        fleet.workers.push(env.worker(i + 1)?);
    }
    let fleet = Arc::new(Mutex::new(fleet));
    let bases: Vec<String> = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}"))
        .collect();
    let clients = Arc::new(Clients {
        http: reqwest::Client::builder().no_proxy().build()?,
        bases: bases.clone(),
        next: AtomicUsize::new(0),
        tally: Mutex::default(),
    });
    anyhow::ensure!(
        all_ready(&clients.http, &bases, Duration::from_secs(60)).await,
        "the api did not start"
    );

    eprintln!("soak: creating {} companies", args.companies);
    let mut companies = Vec::new();
    for index in 0..=args.companies {
        let created = jobs::tenancy::create_company(
            &db,
            &hasher,
            jobs::tenancy::NewCompany {
                name: &format!("Soak {index}"),
                email: &format!("soak{index}@example.com"),
                password: None,
                trial_days: 3650,
            },
        )
        .await?;
        companies.push(Company {
            index,
            key: created.api_key,
            data_source: None,
        });
    }
    // The last company is the canary of the recovery measurements.
    let canary_company = companies.pop().context("canary")?;
    for c in &mut companies {
        let (s, res) = clients
            .send(
                &c.key,
                Method::POST,
                "/api/v1/webhooks",
                Some(&json!({ "url": receiver.url(&format!("/hooks/{}", c.index)) })),
            )
            .await
            .context("webhook subscription")?;
        anyhow::ensure!(s == 201, "webhook subscription: {s} {res}");
        if args.crm_every > 0 && c.index % args.crm_every == 0 {
            let (s, res) = clients
                .send(&c.key, Method::POST, "/api/v1/data-sources", Some(&json!({
                    "provider": "generic_json", "verify": false, "base_url": crm.url(&format!("/crm/{}", c.index)), "api_key": CRM_KEY
                })))
                .await
                .context("data source")?;
            anyhow::ensure!(s == 201, "data source: {s} {res}");
            c.data_source = res["id"].as_str().and_then(|s| s.parse().ok());
        }
    }
    *clients.tally.lock().expect("tally") = Tally::default();

    eprintln!("soak: load for {} s", args.duration.as_secs());
    let start = Instant::now();
    let end = start + args.duration;
    let sampler = tokio::spawn({
        let fleet = fleet.clone();
        async move {
            loop {
                fleet.lock().expect("fleet").sample();
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    });
    let mut load = tokio::task::JoinSet::new();
    for c in companies {
        load.spawn(company_load(
            clients.clone(),
            Arc::new(c),
            args.clone(),
            start,
            end,
        ));
    }
    let mut faults = Vec::new();
    for which in 0..4 {
        tokio::time::sleep_until((start + args.duration.mul_f64(0.2 * (which + 1) as f64)).into())
            .await;
        eprintln!(
            "soak: fault {which} at {:.0} s",
            start.elapsed().as_secs_f64()
        );
        let outcome = inject(
            which,
            &fleet,
            &env,
            &ports,
            &pg,
            &redis,
            &clients,
            &db,
            &canary_company.key,
            start,
        )
        .await?;
        eprintln!(
            "soak:   {} recovered in {:?} s {}",
            outcome.fault, outcome.recovered_s, outcome.note
        );
        faults.push(outcome);
    }
    let mut accepted: Vec<Uuid> = Vec::new();
    while let Some(done) = load.join_next().await {
        accepted.extend(done?);
    }
    let load_secs = start.elapsed().as_secs_f64();
    for f in &mut faults {
        if let Some(watch) = f.takeover.take() {
            let (held, after) = watch.await?;
            let taken = after.map_or("never".to_owned(), |s| format!("after {s:.1} s"));
            f.note = format!("{held} jobs it held taken over {taken}; {}", f.note)
                .trim_end_matches("; ")
                .to_owned();
            f.recovered_s = f.recovered_s.zip(after).map(|(a, b)| a.max(b));
        }
    }

    eprintln!("soak: draining");
    let drain_start = Instant::now();
    while drain_start.elapsed() < args.drain_limit
        && count(
            &db,
            "SELECT count(*) FROM job_runs WHERE status IN ('queued', 'running')",
        )
        .await
            != 0
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let drain_secs = drain_start.elapsed().as_secs_f64();
    sampler.abort();

    // Jobs.
    let by_kind: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT kind, status, count(*) FROM job_runs GROUP BY 1, 2 ORDER BY 1, 2")
            .fetch_all(&db)
            .await?;
    let found: HashSet<Uuid> =
        sqlx::query_scalar("SELECT id FROM job_runs WHERE id = ANY($1) AND status = 'succeeded'")
            .bind(&accepted)
            .fetch_all(&db)
            .await?
            .into_iter()
            .collect();
    let lost = accepted.iter().filter(|id| !found.contains(id)).count();
    // Duplicate effects: pricing runs per ingest.
    let runs_stored = count(
        &db,
        "SELECT count(*) FROM recommendation_runs WHERE trigger = 'sync'",
    )
    .await;
    let runs_named = count(
        &db,
        "SELECT count(DISTINCT result->>'pricing_run') FROM job_runs WHERE kind = 'ingest' AND status = 'succeeded'",
    )
    .await;
    let runs_unnamed = count(
        &db,
        "SELECT count(*) FROM recommendation_runs r WHERE r.trigger = 'sync' AND NOT EXISTS
           (SELECT 1 FROM job_runs i WHERE i.kind = 'ingest' AND i.result->>'pricing_run' = r.id::text)",
    )
    .await;
    let max_runs_per_ingest = count(
        &db,
        "SELECT coalesce(max(n), 0) FROM (SELECT count(r.id) AS n FROM job_runs i
           JOIN recommendation_runs r ON r.id::text = i.result->>'pricing_run'
          WHERE i.kind = 'ingest' GROUP BY i.id) x",
    )
    .await;
    // Webhooks at the receiver.
    let hits = receiver.hits();
    let mut ok_per_delivery: HashMap<String, u64> = HashMap::new();
    let mut deliveries_per_run: HashMap<(String, String), HashSet<String>> = HashMap::new();
    for (n, h) in hits.iter().enumerate() {
        let delivery = h
            .header("x-service-delivery")
            .unwrap_or_default()
            .to_owned();
        if n % 10 != 9 {
            *ok_per_delivery.entry(delivery.clone()).or_default() += 1;
        }
        let body = h.json();
        let run = body["recommendation_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        deliveries_per_run
            .entry((h.path.clone(), run))
            .or_default()
            .insert(delivery);
    }
    let duplicate_acks = ok_per_delivery.values().filter(|n| **n > 1).count();
    // When each repeated acceptance came (to tell which fault caused it).
    let mut seen: HashSet<String> = HashSet::new();
    let mut repeats_at: Vec<String> = Vec::new();
    for (n, h) in hits.iter().enumerate() {
        let delivery = h
            .header("x-service-delivery")
            .unwrap_or_default()
            .to_owned();
        if n % 10 != 9 && !seen.insert(delivery) {
            repeats_at.push(format!(
                "{:.0} s",
                h.at.saturating_duration_since(start).as_secs_f64()
            ));
        }
    }
    let duplicate_run_deliveries = deliveries_per_run.values().filter(|d| d.len() > 1).count();
    let deliveries_complete = count(
        &db,
        "SELECT count(*) FROM webhook_deliveries WHERE status = 'complete'",
    )
    .await;
    let deliveries_failed = count(
        &db,
        "SELECT count(*) FROM webhook_deliveries WHERE status = 'failed'",
    )
    .await;
    let deliveries_open = count(
        &db,
        "SELECT count(*) FROM webhook_deliveries WHERE status IN ('queued', 'retrying')",
    )
    .await;
    let runs_with_delivery = count(
        &db,
        "SELECT count(DISTINCT subject_id) FROM webhook_deliveries",
    )
    .await;
    let crm_pulls_ok = count(
        &db,
        "SELECT count(*) FROM job_runs WHERE kind = 'crm_pull' AND status = 'succeeded'",
    )
    .await;

    // Processes.
    let mut rss: Vec<(String, u64)> = Vec::new();
    let mut errors: Vec<(String, BTreeMap<String, usize>, bool)> = Vec::new();
    {
        let mut f = fleet.lock().expect("fleet");
        f.sample();
        let f = &mut *f;
        for p in f.apis.iter_mut().flatten().chain(f.workers.iter_mut()) {
            rss.push((p.name.clone(), p.peak_rss_kib));
            let log = p.log_text();
            let mut messages: BTreeMap<String, usize> = BTreeMap::new();
            for line in log.lines().filter(|l| l.contains("\"level\":\"ERROR\"")) {
                let v: Value = serde_json::from_str(line).unwrap_or_default();
                let cause = v["error"].as_str().or(v["cause"].as_str());
                let text = format!(
                    "{} {} {} {}",
                    v["message"].as_str().unwrap_or(line),
                    v["status"]
                        .as_u64()
                        .map(|s| s.to_string())
                        .unwrap_or_default(),
                    v["span"]["path"].as_str().unwrap_or_default(),
                    cause.unwrap_or_default()
                );
                *messages
                    .entry(text.chars().take(160).collect())
                    .or_default() += 1;
            }
            errors.push((p.name.clone(), messages, log.contains("panicked")));
        }
        rss.extend(f.retired.iter().cloned());
    }
    let tally = std::mem::take(&mut clients.tally.lock().expect("tally").by_status);
    let answers: u64 = tally
        .iter()
        .filter(|(k, _)| k.parse::<u16>().is_ok())
        .map(|(_, v)| v)
        .sum();
    let five_xx: u64 = tally
        .iter()
        .filter(|(k, _)| k.parse::<u16>().is_ok_and(|s| s >= 500))
        .map(|(_, v)| v)
        .sum();
    let five_hundreds = tally.get("500").copied().unwrap_or(0);

    // The table.
    let mut out = String::new();
    out.push_str(&format!(
        "Soak: {} companies x {} facilities, a night every {} s, CRM on every {}th company; load {:.0} s, drain {:.0} s\n\n",
        args.companies, args.facilities, args.night_secs, args.crm_every, load_secs, drain_secs
    ));
    out.push_str("| Requests | Count |\n|---|---|\n");
    for (k, v) in &tally {
        out.push_str(&format!("| {k} | {v} |\n"));
    }
    out.push_str(&format!(
        "| all answers | {answers} |\n| 5xx | {five_xx} |\n| 500 | {five_hundreds} |\n\n"
    ));
    out.push_str(
        "| Jobs after the drain | queued | running | succeeded | failed |\n|---|---|---|---|---|\n",
    );
    let kinds: Vec<String> = by_kind
        .iter()
        .map(|(k, _, _)| k.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for kind in &kinds {
        let n = |s: &str| {
            by_kind
                .iter()
                .find(|(k, st, _)| k == kind && st == s)
                .map_or(0, |r| r.2)
        };
        out.push_str(&format!(
            "| {kind} | {} | {} | {} | {} |\n",
            n("queued"),
            n("running"),
            n("succeeded"),
            n("failed")
        ));
    }
    out.push_str(&format!(
        "\nSyncs accepted (200): {}; their ingest jobs not succeeded (lost): {lost}. CRM pulls succeeded: {crm_pulls_ok}.\n\n",
        accepted.len()
    ));
    out.push_str("| Duplicate effects | Count |\n|---|---|\n");
    out.push_str(&format!(
        "| pricing runs stored (sync-triggered) | {runs_stored} |\n| distinct pricing runs named by ingests | {runs_named} |\n| pricing runs no ingest names (extra) | {runs_unnamed} |\n| most pricing runs for one ingest | {max_runs_per_ingest} |\n"
    ));
    out.push_str(&format!(
        "| webhook attempts at the receiver | {} |\n| deliveries recorded: complete / failed / open | {deliveries_complete} / {deliveries_failed} / {deliveries_open} |\n| runs with a delivery | {runs_with_delivery} |\n| deliveries accepted more than once at the receiver (same delivery id) | {duplicate_acks}{} |\n| runs delivered under more than one delivery id | {duplicate_run_deliveries} |\n\n",
        hits.len(),
        if repeats_at.is_empty() {
            String::new()
        } else {
            format!(" (again at {})", repeats_at.join(", "))
        }
    ));
    out.push_str("| Fault | At (s) | Recovered after (s) | Note |\n|---|---|---|---|\n");
    for f in &faults {
        out.push_str(&format!(
            "| {} | {:.0} | {} | {} |\n",
            f.fault,
            f.at_s,
            f.recovered_s
                .map_or("not recovered".to_owned(), |s| format!("{s:.1}")),
            f.note
        ));
    }
    out.push_str("\n| Process | Peak RSS (MiB) |\n|---|---|\n");
    for (name, kib) in &rss {
        out.push_str(&format!("| {name} | {:.1} |\n", *kib as f64 / 1024.0));
    }
    for (name, messages, panicked) in &errors {
        if *panicked {
            out.push_str(&format!("\n{name} panicked"));
        }
        for (m, n) in messages {
            out.push_str(&format!("\n{name}: {n} x ERROR {m}"));
        }
    }
    println!("{out}");
    println!(
        "{}",
        json!({
            "requests": tally, "five_xx": five_xx, "five_hundreds": five_hundreds,
            "jobs": by_kind.iter().map(|(k, s, n)| json!({"kind": k, "status": s, "count": n})).collect::<Vec<_>>(),
            "syncs_accepted": accepted.len(), "lost": lost,
            "pricing_runs": { "stored": runs_stored, "named": runs_named, "extra": runs_unnamed, "max_per_ingest": max_runs_per_ingest },
            "webhooks": { "attempts": hits.len(), "complete": deliveries_complete, "failed": deliveries_failed, "open": deliveries_open,
                          "duplicate_acks": duplicate_acks, "repeats_at": repeats_at, "duplicate_run_deliveries": duplicate_run_deliveries },
            "faults": faults.iter().map(|f| json!({"fault": f.fault, "at_s": f.at_s, "recovered_s": f.recovered_s, "note": f.note})).collect::<Vec<_>>(),
            "peak_rss_kib": rss,
            "load_secs": load_secs, "drain_secs": drain_secs,
        })
    );
    drop(fleet);
    let _ = std::fs::remove_dir_all(&logs);
    Ok(())
}

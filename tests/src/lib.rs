//! Test harness: the real api on port 0 against a fresh PostgreSQL database (copied from a
//! migrated template) and a private Redis key prefix per test.
//!
//! Environment: `TEST_DATABASE_URL` (server URL without a database name; default
//! `postgres://postgres@127.0.0.1:5432`) and `TEST_REDIS_URL` (default `redis://127.0.0.1:6379`).

pub mod browser;
pub mod cli;
pub mod fleet;
pub mod logs;
pub mod oauth1;
pub mod raw;
pub mod receiver;
pub mod storedge;

use jobs::config::Config;
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, Executor, PgConnection, PgPool};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::oneshot;
use uuid::Uuid;

pub fn pg_server_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
}

pub fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

/// Name of the template database for the current set of migrations.
fn template_name() -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in jobs::db::MIGRATOR.iter() {
        m.version.hash(&mut h);
        m.checksum.hash(&mut h);
    }
    format!("ssp_template_{:016x}", h.finish())
}

/// Creates (once per migration set, safely across processes) the migrated template database.
async fn ensure_template() -> anyhow::Result<String> {
    let name = template_name();
    let mut admin = PgConnection::connect(&format!("{}/postgres", pg_server_url())).await?;
    admin.execute("SELECT pg_advisory_lock(7212026)").await?;
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_optional(&mut admin)
        .await?;
    let result = async {
        if exists.is_none() {
            admin
                .execute(format!("CREATE DATABASE {name}").as_str())
                .await?;
            let pool = PgPoolOptions::new()
                .max_connections(1)
                .connect(&format!("{}/{name}", pg_server_url()))
                .await?;
            if let Err(e) = jobs::db::migrate(&pool).await {
                pool.close().await;
                admin
                    .execute(format!("DROP DATABASE {name}").as_str())
                    .await?;
                return Err(anyhow::Error::from(e));
            }
            pool.close().await;
        }
        anyhow::Ok(())
    }
    .await;
    admin.execute("SELECT pg_advisory_unlock(7212026)").await?;
    result?;
    Ok(name)
}

/// A fresh, migrated database; returns its name.
pub async fn fresh_database() -> anyhow::Result<String> {
    let template = ensure_template().await?;
    let name = format!("ssp_test_{}", Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&format!("{}/postgres", pg_server_url())).await?;
    // Concurrent copies of one template can briefly collide; retry a few times.
    let mut attempt = 0;
    loop {
        match admin
            .execute(format!("CREATE DATABASE {name} TEMPLATE {template}").as_str())
            .await
        {
            Ok(_) => return Ok(name),
            Err(e) if attempt < 20 => {
                attempt += 1;
                let _ = e;
                tokio::time::sleep(std::time::Duration::from_millis(50 * attempt)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Drops a test database and deletes a Redis prefix; used on drop, off the async runtime.
fn cleanup(db_name: String, redis_prefix: String) {
    let work = std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        rt.block_on(async move {
            if let Ok(mut admin) =
                PgConnection::connect(&format!("{}/postgres", pg_server_url())).await
            {
                let _ = admin
                    .execute(format!("DROP DATABASE IF EXISTS {db_name} WITH (FORCE)").as_str())
                    .await;
            }
            if let Ok(client) = redis::Client::open(redis_url()) {
                if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
                    let keys: Vec<String> = redis::cmd("KEYS")
                        .arg(format!("{redis_prefix}:*"))
                        .query_async(&mut conn)
                        .await
                        .unwrap_or_default();
                    if !keys.is_empty() {
                        let _: Result<(), _> =
                            redis::cmd("DEL").arg(keys).query_async(&mut conn).await;
                    }
                }
            }
        });
    });
    let _ = work.join();
}

/// Builds a configuration for tests; `overrides` replace the defaults (rate limits are raised
/// so they only bite in the tests about them).
pub fn test_config(db_name: &str, redis_prefix: &str, overrides: &[(&str, &str)]) -> Config {
    let mut vars: HashMap<String, String> = [
        ("APP_ENV", "test".to_owned()),
        ("DATABASE_URL", format!("{}/{db_name}", pg_server_url())),
        ("REDIS_URL", redis_url()),
        ("REDIS_KEY_PREFIX", redis_prefix.to_owned()),
        ("RATE_LIMIT_PER_MINUTE", "100000".to_owned()),
        ("RATE_LIMIT_SYNC_PER_MINUTE", "100000".to_owned()),
        ("DATABASE_MAX_CONNECTIONS", "10".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for (k, v) in overrides {
        vars.insert((*k).to_owned(), (*v).to_owned());
    }
    Config::from_lookup(&move |k| vars.get(k).cloned()).expect("test configuration is valid")
}

/// The shared parts of one test's world: database and Redis prefix, dropped at the end.
pub struct World {
    pub db_name: String,
    pub redis_prefix: String,
    pub db: PgPool,
}

impl World {
    pub async fn new() -> Self {
        let db_name = fresh_database()
            .await
            .expect("test database can be created");
        let db = PgPoolOptions::new()
            .max_connections(5)
            .connect(&format!("{}/{db_name}", pg_server_url()))
            .await
            .expect("test database is reachable");
        Self {
            redis_prefix: format!("test:{}", Uuid::new_v4().simple()),
            db_name,
            db,
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        cleanup(self.db_name.clone(), self.redis_prefix.clone());
    }
}

/// One running api process (in this test process, on its own port).
pub struct Server {
    pub base: String,
    pub state: api::AppState,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub async fn start(world: &World, overrides: &[(&str, &str)]) -> Self {
        let config = test_config(&world.db_name, &world.redis_prefix, overrides);
        let state = api::AppState::connect(config)
            .await
            .expect("api state connects");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("port 0 binds");
        let base = format!("http://{}", listener.local_addr().expect("bound address"));
        let (stop, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(api::server::serve(listener, state.clone(), async move {
            let _ = stopped.await;
        }));
        Self {
            base,
            state,
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    /// Stops accepting, lets requests in flight finish, and waits.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(h) = self.handle.take() {
            let _ = h.await;
        }
    }
}

/// A company with a working key.
#[derive(Clone, Debug)]
pub struct Tenant {
    pub company_id: Uuid,
    pub api_key: String,
    /// The first user's login e-mail (password `correct horse battery`).
    pub email: String,
}

/// The app under test: a world, one server, one tenant, and an HTTP client.
///
/// Background work is run by the test itself ([`TestApp::run_jobs`]), the way a worker would
/// run it; a real `worker` process is started only by the tests about the worker. A test that
/// ends with a job due and not run fails (see the `Drop` below): what a request set in motion
/// must be seen through, not left behind.
pub struct TestApp {
    pub server: Server,
    pub tenant: Tenant,
    pub http: reqwest::Client,
    pub world: Arc<World>,
    /// Whether dropping the app checks that no due job is left undone (on by default).
    pub check_jobs: bool,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(&[]).await
}

pub async fn spawn_app_with(overrides: &[(&str, &str)]) -> TestApp {
    let world = Arc::new(World::new().await);
    let server = Server::start(&world, overrides).await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client builds");
    let mut app = TestApp {
        server,
        tenant: Tenant {
            company_id: Uuid::nil(),
            api_key: String::new(),
            email: String::new(),
        },
        http,
        world,
        check_jobs: true,
    };
    app.tenant = app.create_tenant("Acme Storage").await;
    app
}

impl TestApp {
    pub fn db(&self) -> &PgPool {
        &self.world.db
    }

    /// The context a worker gives job handlers, for this app's database, Redis prefix and
    /// configuration.
    pub fn job_context(&self) -> jobs::handlers::JobContext {
        let config = &self.server.state.config;
        jobs::handlers::JobContext {
            db: self.world.db.clone(),
            queues: self.server.state.queues.clone(),
            worker: Arc::from(format!("test-{}", std::process::id())),
            settings: config.jobs.clone(),
            master_key: config.master_key.clone(),
            crm: jobs::crm::CrmClient::new(&config.outbound, &config.crm)
                .expect("the CRM client builds"),
            webhooks: jobs::webhooks::client::WebhookClient::new(
                &config.outbound,
                &config.webhooks,
            )
            .expect("the webhook client builds"),
        }
    }

    /// Runs every due job in this process through the worker's own path
    /// (`jobs::handlers::execute`), follow-up work included, until none is due; how many runs
    /// were made.
    pub async fn run_jobs(&self) -> usize {
        jobs::handlers::run_due(&self.job_context(), 10_000)
            .await
            .expect("due jobs can be run")
    }

    /// Runs the due jobs, asks for a new ECRI run of the facility and runs it, as the worker
    /// would after a change the test made behind the service's back (a backdated row).
    pub async fn ecri_now(&self, facility: impl std::fmt::Display) {
        let facility: Uuid = facility.to_string().parse().expect("a facility id");
        self.run_jobs().await;
        let company: Uuid = sqlx::query_scalar("SELECT company_id FROM facilities WHERE id = $1")
            .bind(facility)
            .fetch_one(self.db())
            .await
            .expect("the facility exists");
        let who = jobs::door::Who::system(company.into(), "test");
        jobs::ecri::runs::run_now(self.db(), &who, facility.into())
            .await
            .expect("an ECRI run can be asked for")
            .into_value();
        self.run_jobs().await;
    }

    /// The facility's ECRI answer (`GET /api/v1/facilities/:id/ecri` as `who`) after a run made
    /// now ([`Self::ecri_now`]).
    pub async fn ecri_as(&self, who: &Tenant, facility: &str) -> Value {
        self.ecri_now(facility).await;
        let r = self
            .req_as(
                who,
                Method::GET,
                &format!("/api/v1/facilities/{facility}/ecri"),
            )
            .send()
            .await
            .expect("the request is sent");
        assert_eq!(r.status(), 200);
        r.json().await.expect("a JSON answer")
    }

    pub async fn create_tenant(&self, name: &str) -> Tenant {
        let email = format!("{}@example.com", Uuid::new_v4().simple());
        let created = jobs::tenancy::create_company(
            self.db(),
            &self.server.state.hasher,
            jobs::tenancy::NewCompany {
                name,
                email: &email,
                password: Some("correct horse battery"),
                trial_days: 14,
            },
        )
        .await
        .expect("company is created");
        Tenant {
            company_id: created.company_id.uuid(),
            api_key: created.api_key,
            email,
        }
    }

    /// Turns recorded sign-up and password-reset requests into mail and writes every due mail
    /// into `dir` as `.eml` files, as the worker's mail loop does (links point at this app);
    /// how many were written.
    pub async fn deliver_mail(&self, dir: &std::path::Path) -> usize {
        let config = &self.server.state.config;
        let (db, key, base) = (self.db(), &config.master_key, &self.server.base);
        jobs::sign_up::process_requests(db, key, base, 100)
            .await
            .expect("sign-up requests are handled");
        jobs::password_reset::process_requests(db, key, base, 100)
            .await
            .expect("reset requests are handled");
        let mailer = jobs::mail::Mailer::new(None, &config.mail_from, dir.to_owned())
            .expect("the folder mailer is made");
        jobs::mail::deliver_due(db, &mailer, key, 100)
            .await
            .expect("due mail is written")
    }

    /// The text of a dashboard page fetched with a session `cookie` (see [`Self::session_cookie`]).
    pub async fn page_text(&self, cookie: &str, path: &str) -> String {
        self.http
            .get(self.url(path))
            .header("cookie", cookie)
            .send()
            .await
            .expect("the page answers")
            .text()
            .await
            .expect("the page has a text body")
    }

    /// A dashboard session cookie (`name=value`) of the tenant's user, for plain HTTP requests
    /// to the pages.
    pub async fn session_cookie(&self) -> String {
        let http = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client builds");
        let r = http
            .post(self.url("/login"))
            .form(&[
                ("email", self.tenant.email.as_str()),
                ("password", "correct horse battery"),
            ])
            .send()
            .await
            .expect("the login page answers");
        assert_eq!(r.status(), 303, "the tenant's user signs in");
        r.headers()["set-cookie"]
            .to_str()
            .expect("a cookie is text")
            .split(';')
            .next()
            .expect("a cookie has a value")
            .to_owned()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base)
    }

    /// A request with this app's tenant key.
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(&self.tenant.api_key)
    }

    pub fn req_as(&self, tenant: &Tenant, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(&tenant.api_key)
    }

    pub async fn get(&self, path: &str) -> Response {
        self.req(Method::GET, path)
            .send()
            .await
            .expect("request is sent")
    }

    pub async fn post(&self, path: &str, body: &Value) -> Response {
        self.req(Method::POST, path)
            .json(body)
            .send()
            .await
            .expect("request is sent")
    }

    pub async fn put(&self, path: &str, body: &Value) -> Response {
        self.req(Method::PUT, path)
            .json(body)
            .send()
            .await
            .expect("request is sent")
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.req(Method::DELETE, path)
            .send()
            .await
            .expect("request is sent")
    }

    pub async fn sync(&self, body: &Value) -> Response {
        self.post("/api/v1/sync", body).await
    }

    /// Creates an empty facility through the API for the app's tenant; its id.
    pub async fn create_facility(&self, name: &str) -> String {
        self.create_facility_as(&self.tenant, name).await
    }

    /// Creates an empty facility through the API for `tenant`; its id.
    pub async fn create_facility_as(&self, tenant: &Tenant, name: &str) -> String {
        let (s, f) = status_json(
            self.req_as(tenant, Method::POST, "/api/v1/facilities")
                .json(&serde_json::json!({ "name": name }))
                .send()
                .await
                .expect("the request is sent"),
        )
        .await;
        assert_eq!(s, 201, "{f}");
        f["id"].as_str().expect("a facility id").to_owned()
    }

    /// Number of rows of a table (for "nothing was written" assertions).
    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
            .fetch_one(self.db())
            .await
            .expect("count query runs")
    }

    /// The api's connections to this test's database that are inside a transaction, as
    /// (statement, state), after waiting up to `settle` for there to be none. In full runs a
    /// single look has, rarely, seen one such connection that a second look no longer saw; a
    /// transaction held on behalf of a waiting client stays, and is what this returns.
    pub async fn api_transactions(&self, settle: std::time::Duration) -> Vec<(String, String)> {
        let deadline = std::time::Instant::now() + settle;
        loop {
            let open: Vec<(String, String)> = sqlx::query_as(
                "SELECT query, coalesce(state, '') FROM pg_stat_activity
                 WHERE datname = current_database()
                   AND application_name = 'self-storage-pricing-api'
                   AND xact_start IS NOT NULL",
            )
            .fetch_all(self.db())
            .await
            .expect("pg_stat_activity is readable");
            if open.is_empty() || std::time::Instant::now() >= deadline {
                return open;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if !self.check_jobs || std::thread::panicking() {
            return;
        }
        let db_name = self.world.db_name.clone();
        let undone = std::thread::spawn(move || -> anyhow::Result<i64> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async move {
                let pool = PgPoolOptions::new()
                    .max_connections(1)
                    .connect(&format!("{}/{db_name}", pg_server_url()))
                    .await?;
                let n = jobs::runs::undone(&pool).await?;
                pool.close().await;
                Ok(n)
            })
        })
        .join();
        if let Ok(Ok(n)) = undone {
            assert!(
                n == 0,
                "the test ended with {n} due job(s) not run: call app.run_jobs().await"
            );
        }
    }
}

/// Pushes a sync that must succeed; its answer.
pub async fn push_ok(app: &TestApp, body: Value) -> Value {
    let (s, res) = status_json(app.sync(&body).await).await;
    assert_eq!(s, 200, "{res}");
    res
}

/// Pushes a sync as another tenant that must succeed; the id of the facility it named.
pub async fn push_ok_as(app: &TestApp, tenant: &Tenant, body: Value) -> String {
    let (s, res) = status_json(
        app.req_as(tenant, Method::POST, "/api/v1/sync")
            .json(&body)
            .send()
            .await
            .expect("the request is sent"),
    )
    .await;
    assert_eq!(s, 200, "{res}");
    res["facility"]["id"]
        .as_str()
        .expect("a facility id")
        .to_owned()
}

/// A GET that must answer 200; its body.
pub async fn get_ok(app: &TestApp, path: &str) -> Value {
    let (s, body) = status_json(app.get(path).await).await;
    assert_eq!(s, 200, "{path}: {body}");
    body
}

/// Reads an answer as (status, JSON body); a JSON body must not repeat a key in any object
/// (a client's parser may keep either value).
pub async fn status_json(r: Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap_or_default();
    match serde_json::from_str(&text) {
        Ok(body) => {
            if let Some(key) = duplicate_key(&text) {
                panic!("the answer repeats the key {key:?} in one object: {text}");
            }
            (status, body)
        }
        Err(_) => (status, Value::String(text)),
    }
}

/// The first key that appears twice in one JSON object of `text`, if any.
pub fn duplicate_key(text: &str) -> Option<String> {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::cell::RefCell;
    struct Check<'a>(&'a RefCell<Option<String>>);
    impl<'de> DeserializeSeed<'de> for Check<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Check<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key.clone()) && self.0.borrow().is_none() {
                    *self.0.borrow_mut() = Some(key);
                }
                map.next_value_seed(Check(self.0))?;
            }
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Check(self.0))?.is_some() {}
            Ok(())
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
    }
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    Check(&found).deserialize(&mut de).ok()?;
    found.into_inner()
}

/// A realistic daily payload: `unit_types` unit types, `competitors` competitor rates and
/// `rents` tenant-rent rows.
pub fn payload(
    facility_name: &str,
    date: &str,
    unit_types: usize,
    competitors: usize,
    rents: usize,
) -> Value {
    let sizes = [
        "5x5", "5x10", "10x10", "10x15", "10x20", "10x30", "7.5x10", "10x25", "12x30", "15x20",
    ];
    let tiers = ["climate", "drive-up"];
    let ut: Vec<Value> = (0..unit_types)
        .map(|i| {
            serde_json::json!({
                "size": sizes[i % sizes.len()], "tier": format!("{}-{}", tiers[i % 2], i / sizes.len()),
                "street_rate": 60.0 + 10.0 * i as f64, "occupancy_pct": 85.0 + (i % 10) as f64,
                "move_ins_mtd": i % 5, "total_units": 40 + i, "occupied_units": 30 + i,
            })
        })
        .collect();
    let comps: Vec<Value> = (0..competitors)
        .map(|i| {
            serde_json::json!({
                "competitor": format!("Competitor {}", i % 5), "size": sizes[i % 3 + 1],
                "rate": 100.0 + i as f64, "promo": if i % 3 == 0 { Value::from("First month free") } else { Value::Null },
                "source_url": "https://example.com/rates",
            })
        })
        .collect();
    let tr: Vec<Value> = (0..rents)
        .map(|i| {
            serde_json::json!({
                "size": sizes[i % sizes.len()], "avg_rent": 90.0 + i as f64, "tenant_count": 10 + i,
                "months_since_last_increase": 8, "original_rent": 80,
            })
        })
        .collect();
    serde_json::json!({
        "facility": { "name": facility_name },
        "date": date,
        "occupancy_pct": 88.5,
        "move_ins": { "daily": 2, "mtd": 21, "target_monthly": 40 },
        "move_outs": { "daily": 1, "mtd": 15 },
        "unit_types": ut,
        "promotions": [{ "name": "First month free", "depth_pct": 100, "applies_to": "10x10" }],
        "competitor_rates": comps,
        "tenant_rents": tr,
        "leads": [{ "channel": "web", "count": 4 }, { "channel": "phone", "count": 2 }],
    })
}

/// A binary of the workspace, built next to the running test binary (cargo builds every binary
/// before it runs the tests).
pub fn workspace_bin(name: &str) -> std::path::PathBuf {
    let mut dir = std::env::current_exe().expect("test binary path");
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is not built: run the tests through cargo",
        bin.display()
    );
    bin
}

/// Settings that make the job platform quick enough to test: short leases, frequent sweeps.
/// The nightly ECRI work is off: a test that wants it calls `jobs::ecri::fit::nightly_tick`
/// with the time it chooses, so no test depends on the hour it runs at.
pub const FAST_JOBS: [(&str, &str); 9] = [
    ("JOB_LEASE_SECS", "3"),
    ("SWEEP_INTERVAL_MS", "200"),
    ("JOB_REPUSH_AFTER_MS", "2000"),
    ("WORKER_HEARTBEAT_SECS", "1"),
    ("WORKER_POLL_INTERVAL_MS", "50"),
    ("CRON_INTERVAL_MS", "200"),
    ("JOB_RETRY_BASE_MS", "200"),
    ("METRICS_PORT", "0"),
    ("ECRI_NIGHTLY", "false"),
];

/// A real `worker` process on this test's database and Redis prefix.
pub struct WorkerProcess {
    child: std::process::Child,
    pub log: std::path::PathBuf,
}

impl WorkerProcess {
    pub fn start(world: &World, overrides: &[(&str, &str)]) -> Self {
        let log = std::env::temp_dir().join(format!("worker-{}.log", Uuid::new_v4().simple()));
        let file = std::fs::File::create(&log).expect("log file");
        let mut cmd = std::process::Command::new(workspace_bin("worker"));
        cmd.env_clear()
            .env("APP_ENV", "test")
            .env(
                "DATABASE_URL",
                format!("{}/{}", pg_server_url(), world.db_name),
            )
            .env("REDIS_URL", redis_url())
            .env("REDIS_KEY_PREFIX", &world.redis_prefix)
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info,sqlx=warn")
            .env("DATABASE_MAX_CONNECTIONS", "8");
        for (k, v) in FAST_JOBS.iter().chain(overrides) {
            cmd.env(k, v);
        }
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(file)
            .spawn()
            .expect("worker starts");
        Self { child, log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn sigterm(&self) {
        let status = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits for the process to exit (at most `limit`); its exit status.
    pub async fn wait(&mut self, limit: std::time::Duration) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "worker did not exit; log: {}",
                self.log_text()
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// Polls `check` every 50 ms until it holds; fails the test with `what` after `limit`. This is a
/// deadline for a test that would otherwise hang, not a performance assertion.
pub async fn wait_until<F, Fut>(what: &str, limit: std::time::Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + limit;
    while !check().await {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Job rows by status, as (status, count).
pub async fn job_statuses(db: &PgPool) -> Vec<(String, i64)> {
    sqlx::query_as("SELECT status, count(*) FROM job_runs GROUP BY status ORDER BY status")
        .fetch_all(db)
        .await
        .expect("job status query")
}

/// Whether every job row is finished (succeeded or failed).
pub async fn all_jobs_finished(db: &PgPool) -> bool {
    let open: i64 =
        sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE status IN ('queued', 'running')")
            .fetch_one(db)
            .await
            .expect("open jobs query");
    open == 0
}

/// Deletes every Redis key of a deployment prefix: for that deployment, the same as FLUSHALL,
/// without touching the other tests that share the Redis server.
pub async fn wipe_redis_prefix(prefix: &str) {
    let client = redis::Client::open(redis_url()).expect("redis url");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("redis connects");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut conn)
        .await
        .expect("KEYS");
    if !keys.is_empty() {
        let _: () = redis::cmd("DEL")
            .arg(keys)
            .query_async(&mut conn)
            .await
            .expect("DEL");
    }
}

/// A Redis server of the test's own, on a free loopback port, that the test may flush, kill and
/// restart without disturbing tests that share the default Redis.
pub struct PrivateRedis {
    port: u16,
    child: Option<std::process::Child>,
}

impl PrivateRedis {
    pub async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut me = Self { port, child: None };
        me.launch().await;
        me
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn launch(&mut self) {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let url = self.url();
        wait_until(
            "the private Redis answers",
            std::time::Duration::from_secs(10),
            || {
                let url = url.clone();
                async move {
                    let Ok(client) = redis::Client::open(url) else {
                        return false;
                    };
                    let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
                        return false;
                    };
                    redis::cmd("PING")
                        .query_async::<String>(&mut conn)
                        .await
                        .is_ok()
                }
            },
        )
        .await;
    }

    /// Runs one command (e.g. `FLUSHALL`).
    pub async fn cmd(&self, name: &str) {
        let client = redis::Client::open(self.url()).expect("redis url");
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .expect("redis connects");
        let _: redis::Value = redis::cmd(name)
            .query_async(&mut conn)
            .await
            .expect("redis command");
    }

    /// SIGKILL: every connection breaks, every key is gone.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A new, empty server on the same port.
    pub async fn restart(&mut self) {
        self.kill9();
        self.launch().await;
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.kill9();
    }
}

#[cfg(test)]
mod duplicate_key_tests {
    #[test]
    fn finds_a_repeated_key_at_any_depth() {
        assert_eq!(
            super::duplicate_key(r#"{"a":1,"b":{"c":1,"c":2}}"#),
            Some("c".into())
        );
        assert_eq!(super::duplicate_key(r#"[{"a":1},{"a":2}]"#), None);
        assert_eq!(
            super::duplicate_key(r#"{"a":[1,{"x":null,"x":true}]}"#),
            Some("x".into())
        );
    }
}

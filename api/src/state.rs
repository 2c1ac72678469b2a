//! The state every handler shares, built once at start-up.

use crate::ratelimit::RateLimiter;
use jobs::config::Config;
use jobs::tenancy::KeyHasher;
use redis::aio::ConnectionManager;
use sqlx::PgPool;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub db: PgPool,
    pub redis: ConnectionManager,
    pub hasher: KeyHasher,
    pub limiter: RateLimiter,
    pub queues: jobs::queue::Queues,
    /// The CRM connection tests running in this process (their limits are per process).
    pub connection_tests: jobs::crm::connection_tests::ConnectionTests,
}

impl AppState {
    /// Connects to Redis (lazily retried by the connection manager) and prepares the pool.
    pub async fn connect(config: Config) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        use secrecy::ExposeSecret as _;
        let db = jobs::db::pool(
            &config.database_url,
            config.database_max_connections,
            jobs::db::API_APPLICATION,
        )
        .context("DATABASE_URL could not be parsed")?;
        let client = redis::Client::open(config.redis_url.expose_secret())
            .context("REDIS_URL could not be parsed")?;
        // Fail fast when Redis is away: a request must not wait through a long reconnect
        // backoff (rate limits fail open and pushes are repaired by the sweeper).
        let manager = redis::aio::ConnectionManagerConfig::new()
            .set_number_of_retries(1)
            .set_min_delay(std::time::Duration::from_millis(50))
            .set_max_delay(std::time::Duration::from_millis(200))
            .set_connection_timeout(Some(std::time::Duration::from_secs(1)))
            .set_response_timeout(Some(std::time::Duration::from_secs(2)));
        let redis = ConnectionManager::new_with_config(client, manager)
            .await
            .context("could not connect to Redis")?;
        Ok(Self::new(config, db, redis))
    }

    pub fn new(config: Config, db: PgPool, redis: ConnectionManager) -> Self {
        let limiter = RateLimiter::new(
            redis.clone(),
            &config.redis_key_prefix,
            config.rate_limit_per_minute,
            config.rate_limit_sync_per_minute,
        );
        let queues = jobs::queue::Queues::new(
            redis.clone(),
            &config.redis_key_prefix,
            config.jobs.heartbeat,
        );
        Self {
            connection_tests: jobs::crm::connection_tests::ConnectionTests::new(&config.crm),
            queues,
            hasher: KeyHasher::new(&config.master_key),
            config: Arc::new(config),
            db,
            redis,
            limiter,
        }
    }
}

impl AppState {
    /// The outbound client of CRM connection tests (the same rules as the worker's pulls).
    pub fn crm_client(&self) -> Result<jobs::crm::CrmClient, crate::error::ApiError> {
        jobs::crm::CrmClient::new(&self.config.outbound, &self.config.crm)
            .map(|c| c.with_connection_tests(self.connection_tests.clone()))
            .map_err(|e| {
                crate::error::ApiError::Internal(anyhow::Error::new(e).context("CRM client"))
            })
    }

    /// The Redis counters of the per-client and per-account limits of the public use cases.
    pub fn counters(&self) -> jobs::password_reset::Counters<'_> {
        jobs::password_reset::Counters {
            redis: &self.redis,
            prefix: &self.config.redis_key_prefix,
        }
    }

    /// Finishes a use case that changed something: its transaction has committed with its
    /// audit entry; the jobs it recorded are pushed to their queues (a failed push is only
    /// logged: the rows are in PostgreSQL and the worker's sweeper pushes them again). Every
    /// change a route or page makes ends here.
    pub async fn finish<T>(&self, done: jobs::door::Committed<T>) -> T {
        let (value, jobs) = done.into_parts();
        self.queues.push_jobs(&jobs).await;
        value
    }
}

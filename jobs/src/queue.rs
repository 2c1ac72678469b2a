//! The Redis side of the job platform: one apalis queue per job kind, each carrying only the id
//! of a `job_runs` row. Redis is never the truth: a lost push or a flushed Redis is repaired by
//! the sweeper from PostgreSQL.
//!
//! Two facts about apalis-redis 1.0 shape this module (see docs/jobs.md):
//! - every push lands in the queue's `scheduled` sorted set, and a worker's fetch promotes *all*
//!   due ids with one Lua `unpack`, which fails beyond about 8,000 ids and stops the worker. So
//!   each push is followed by a promotion of due ids in bounded chunks, and the set never grows;
//! - a pushed task id that already exists is silently dropped, so every push gets a fresh task id
//!   (the job row id travels in the payload).

use apalis::prelude::TaskSink;
use apalis_redis::{ConnectionManager, RedisStorage};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// The payload of every apalis task: the id of the `job_runs` row to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobRef {
    pub id: Uuid,
}

/// The kinds of durable work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Ingest,
    PricingRun,
    WebhookDelivery,
    CrmPull,
    EcriRun,
    EcriFit,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Ingest,
        Kind::PricingRun,
        Kind::WebhookDelivery,
        Kind::CrmPull,
        Kind::EcriRun,
        Kind::EcriFit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ingest => "ingest",
            Self::PricingRun => "pricing_run",
            Self::WebhookDelivery => "webhook_delivery",
            Self::CrmPull => "crm_pull",
            Self::EcriRun => "ecri_run",
            Self::EcriFit => "ecri_fit",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// The Redis queue name of a kind, under the deployment's key prefix.
pub fn queue_name(prefix: &str, kind: Kind) -> String {
    format!("{prefix}:queue:{}", kind.as_str())
}

/// apalis configuration of a queue. `heartbeat` also bounds how long a job fetched by a dead
/// worker sits in Redis before apalis itself hands it on (3 missed heartbeats); the sweeper does
/// the same from PostgreSQL.
pub fn config(prefix: &str, kind: Kind, heartbeat: Duration) -> apalis_redis::Config {
    apalis_redis::Config::default()
        .queue(queue_name(prefix, kind))
        .batch_size(10)
        .heartbeat_interval(heartbeat)
        .missed_heartbeats(3)
}

/// Moves due ids from `scheduled` to `active` in chunks (see the module comment).
static PROMOTE: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #ids > 0 then
  redis.call('RPUSH', KEYS[2], unpack(ids))
  redis.call('ZREM', KEYS[1], unpack(ids))
end
return #ids
",
    )
});

/// Handles to push job ids onto the queues.
#[derive(Clone)]
pub struct Queues {
    conn: ConnectionManager,
    prefix: Arc<str>,
    heartbeat: Duration,
}

#[derive(Debug, thiserror::Error)]
#[error("queue push failed: {0}")]
pub struct PushError(String);

impl Queues {
    pub fn new(conn: ConnectionManager, prefix: &str, heartbeat: Duration) -> Self {
        Self {
            conn,
            prefix: prefix.into(),
            heartbeat,
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn connection(&self) -> ConnectionManager {
        self.conn.clone()
    }

    pub fn storage(&self, kind: Kind) -> RedisStorage<JobRef> {
        RedisStorage::new(self.conn.clone()).with_config(config(&self.prefix, kind, self.heartbeat))
    }

    /// Pushes the jobs a committed change recorded, each kind to its queue. A failure is only
    /// logged: the rows are in PostgreSQL and the worker's sweeper pushes them again.
    pub async fn push_jobs(&self, jobs: &crate::door::Jobs) {
        for (kind, ids) in jobs.grouped() {
            if let Err(e) = self.push(kind, &ids).await {
                tracing::warn!(error = %e, kind = kind.as_str(), jobs = ids.len(), "job push failed; the sweeper will push it");
            }
        }
    }

    /// Pushes job ids of one kind and promotes them at once.
    pub async fn push(&self, kind: Kind, ids: &[Uuid]) -> Result<(), PushError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut storage = self.storage(kind);
        for chunk in ids.chunks(500) {
            let jobs: Vec<JobRef> = chunk.iter().map(|&id| JobRef { id }).collect();
            storage
                .push_bulk(jobs)
                .await
                .map_err(|e| PushError(e.to_string()))?;
            self.promote(kind)
                .await
                .map_err(|e| PushError(e.to_string()))?;
        }
        Ok(())
    }

    /// Promotes every due id of a queue, 1,000 at a time.
    pub async fn promote(&self, kind: Kind) -> redis::RedisResult<usize> {
        let cfg = config(&self.prefix, kind, self.heartbeat);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut conn = self.conn.clone();
        let mut total = 0;
        loop {
            let n: usize = PROMOTE
                .key(cfg.scheduled_jobs_set())
                .key(cfg.active_jobs_list())
                .arg(now)
                .arg(1000)
                .invoke_async(&mut conn)
                .await?;
            total += n;
            if n < 1000 {
                return Ok(total);
            }
        }
    }

    /// Ids waiting in Redis for a kind (scheduled plus active), for metrics.
    pub async fn depth(&self, kind: Kind) -> redis::RedisResult<u64> {
        let cfg = config(&self.prefix, kind, self.heartbeat);
        let (scheduled, active): (u64, u64) = redis::pipe()
            .zcard(cfg.scheduled_jobs_set())
            .llen(cfg.active_jobs_list())
            .query_async(&mut self.conn.clone())
            .await?;
        Ok(scheduled + active)
    }
}

/// Deletes Redis task data of finished tasks older than `older_than`, and their ids from the
/// queue's `done` and `dead` sets (apalis keeps both forever). Only finished tasks are touched:
/// handlers never report failure to apalis, so no task waits in Redis for an apalis retry.
pub async fn vacuum(queues: &Queues, kind: Kind, older_than: Duration) -> anyhow::Result<usize> {
    use apalis_core::backend::Vacuum as _;
    let mut storage = queues.storage(kind);
    let removed = storage.vacuum_before(older_than).await?;
    let cfg = config(&queues.prefix, kind, queues.heartbeat);
    let mut conn = queues.connection();
    for set in [cfg.done_jobs_set(), cfg.dead_jobs_set()] {
        let mut cursor: u64 = 0;
        loop {
            let (next, ids): (u64, Vec<String>) = redis::cmd("SSCAN")
                .arg(&set)
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await?;
            if !ids.is_empty() {
                let mut pipe = redis::pipe();
                for id in &ids {
                    pipe.hexists(cfg.job_data_hash(), id);
                }
                let exists: Vec<bool> = pipe.query_async(&mut conn).await?;
                let gone: Vec<&String> = ids
                    .iter()
                    .zip(exists)
                    .filter(|(_, e)| !e)
                    .map(|(id, _)| id)
                    .collect();
                if !gone.is_empty() {
                    let _: () = redis::cmd("SREM")
                        .arg(&set)
                        .arg(gone)
                        .query_async(&mut conn)
                        .await?;
                }
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
    }
    Ok(removed)
}

//! Master key rotation: re-seals every secret at rest (CRM credentials, webhook secrets, reset
//! mails waiting to be sent) under the current key, in one transaction. Run with the new key as
//! current and the old one among the previous keys (`api admin rotate-master-key`); services that
//! hold both keys keep working throughout (see the README's configuration).

use crate::config::MasterKey;
use crate::crypto;
use crate::error::Result;
use serde::Serialize;
use sqlx::PgPool;
use uuid::Uuid;

/// What a rotation did, per kind of secret.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct Rotated {
    pub data_sources: u64,
    pub webhook_subscriptions: u64,
    pub mails: u64,
    /// Values that opened with no key given (left as they are; named in the log).
    pub unreadable: u64,
}

/// The rows whose value opens, sealed again under the current key; the others are counted in
/// `unreadable` and named in the log.
fn resealed(
    keys: &MasterKey,
    what: &str,
    rows: Vec<(Uuid, Vec<u8>)>,
    unreadable: &mut u64,
) -> Vec<(Uuid, Vec<u8>)> {
    rows.into_iter()
        .filter_map(
            |(id, sealed)| match crypto::open(keys, id.as_bytes(), &sealed) {
                Ok(plain) => Some((id, crypto::seal(keys, id.as_bytes(), &plain))),
                Err(_) => {
                    tracing::warn!(%id, what, "a sealed value opens with no key given; left as is");
                    *unreadable += 1;
                    None
                }
            },
        )
        .collect()
}

pub async fn reseal_all(pool: &PgPool, keys: &MasterKey) -> Result<Rotated> {
    let mut done = Rotated::default();
    let mut tx = pool.begin().await?;
    let rows = sqlx::query!("SELECT id, credentials_sealed FROM data_sources FOR UPDATE")
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .map(|r| (r.id, r.credentials_sealed))
        .collect();
    for (id, sealed) in resealed(keys, "data source credential", rows, &mut done.unreadable) {
        sqlx::query!(
            "UPDATE data_sources SET credentials_sealed = $2 WHERE id = $1",
            id,
            sealed
        )
        .execute(&mut *tx)
        .await?;
        done.data_sources += 1;
    }
    let rows = sqlx::query!("SELECT id, secret_sealed FROM webhook_subscriptions FOR UPDATE")
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .map(|r| (r.id, r.secret_sealed))
        .collect();
    for (id, sealed) in resealed(keys, "webhook secret", rows, &mut done.unreadable) {
        sqlx::query!(
            "UPDATE webhook_subscriptions SET secret_sealed = $2 WHERE id = $1",
            id,
            sealed
        )
        .execute(&mut *tx)
        .await?;
        done.webhook_subscriptions += 1;
    }
    let rows = sqlx::query!(
        r#"SELECT id, body_sealed AS "body_sealed!" FROM mail_outbox WHERE body_sealed IS NOT NULL FOR UPDATE"#
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.id, r.body_sealed))
    .collect();
    for (id, sealed) in resealed(keys, "mail body", rows, &mut done.unreadable) {
        sqlx::query!(
            "UPDATE mail_outbox SET body_sealed = $2 WHERE id = $1",
            id,
            sealed
        )
        .execute(&mut *tx)
        .await?;
        done.mails += 1;
    }
    tx.commit().await?;
    Ok(done)
}

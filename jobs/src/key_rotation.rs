//! Master key rotation: re-seals every secret at rest (CRM credentials, webhook secrets, reset
//! mails waiting to be sent) under the current key, in one transaction. Run with the new key as
//! current and the old one among the previous keys (`api admin rotate-master-key`); services that
//! hold both keys keep working throughout (see the README's configuration).

use crate::config::MasterKey;
use crate::crypto;
use crate::error::Result;
use serde::Serialize;
use sqlx::PgPool;

/// What a rotation did, per kind of secret.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct Rotated {
    pub data_sources: u64,
    pub webhook_subscriptions: u64,
    pub mails: u64,
    /// Values that opened with no key given (left as they are; named in the log).
    pub unreadable: u64,
}

/// A value opened and sealed again under the current key; `None` when no key opens it.
fn reseal(keys: &MasterKey, row_id: uuid::Uuid, sealed: &[u8]) -> Option<Vec<u8>> {
    let plain = crypto::open(keys, row_id.as_bytes(), sealed).ok()?;
    Some(crypto::seal(keys, row_id.as_bytes(), &plain))
}

pub async fn reseal_all(pool: &PgPool, keys: &MasterKey) -> Result<Rotated> {
    let mut done = Rotated::default();
    let mut tx = pool.begin().await?;
    let rows = sqlx::query!("SELECT id, credentials_sealed FROM data_sources FOR UPDATE")
        .fetch_all(&mut *tx)
        .await?;
    for row in rows {
        let Some(sealed) = reseal(keys, row.id, &row.credentials_sealed) else {
            tracing::warn!(data_source = %row.id, "credential opens with no key given; left as is");
            done.unreadable += 1;
            continue;
        };
        sqlx::query!(
            "UPDATE data_sources SET credentials_sealed = $2 WHERE id = $1",
            row.id,
            sealed
        )
        .execute(&mut *tx)
        .await?;
        done.data_sources += 1;
    }
    let rows = sqlx::query!("SELECT id, secret_sealed FROM webhook_subscriptions FOR UPDATE")
        .fetch_all(&mut *tx)
        .await?;
    for row in rows {
        let Some(sealed) = reseal(keys, row.id, &row.secret_sealed) else {
            tracing::warn!(subscription = %row.id, "webhook secret opens with no key given; left as is");
            done.unreadable += 1;
            continue;
        };
        sqlx::query!(
            "UPDATE webhook_subscriptions SET secret_sealed = $2 WHERE id = $1",
            row.id,
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
    .await?;
    for row in rows {
        let Some(sealed) = reseal(keys, row.id, &row.body_sealed) else {
            tracing::warn!(mail = %row.id, "mail body opens with no key given; left as is");
            done.unreadable += 1;
            continue;
        };
        sqlx::query!(
            "UPDATE mail_outbox SET body_sealed = $2 WHERE id = $1",
            row.id,
            sealed
        )
        .execute(&mut *tx)
        .await?;
        done.mails += 1;
    }
    tx.commit().await?;
    Ok(done)
}

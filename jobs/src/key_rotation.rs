//! Master key rotation: re-seals every secret at rest (CRM credentials, webhook secrets, reset
//! mails waiting to be sent) under the current key, in one transaction. Run with the new key as
//! current and the old one among the previous keys (`api admin rotate-master-key`); services that
//! hold both keys keep working throughout (see the README's configuration).

use crate::config::MasterKey;
use crate::crypto;
use crate::error::Result;
use crate::{data_sources, mail, webhooks};
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
    let rows = data_sources::sealed_for_update(&mut tx).await?;
    let values = resealed(keys, "data source credential", rows, &mut done.unreadable);
    done.data_sources = data_sources::store_sealed(&mut tx, &values).await?;
    let rows = webhooks::sealed_for_update(&mut tx).await?;
    let values = resealed(keys, "webhook secret", rows, &mut done.unreadable);
    done.webhook_subscriptions = webhooks::store_sealed(&mut tx, &values).await?;
    let rows = mail::sealed_for_update(&mut tx).await?;
    let values = resealed(keys, "mail body", rows, &mut done.unreadable);
    done.mails = mail::store_sealed(&mut tx, &values).await?;
    // Every company's secrets are now under the new key: each company's audit log says so.
    crate::audit::record_in_every_company(&mut tx, "master-key rotation").await?;
    tx.commit().await?;
    Ok(done)
}

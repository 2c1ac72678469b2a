//! The holdout of a new batch: the control group drawn at random from its eligible tenants and
//! stored apart from its lines, so the outcome can measure the lift against it.

use crate::ecri::TenantLine;
use crate::error::Result;
use rand::seq::SliceRandom;
use sqlx::PgConnection;
use std::collections::BTreeMap;
use uuid::Uuid;

/// Draws the control group: `pct` % of the lines (rounded), a customer's units together, at
/// random. Returns (kept, held out).
pub(super) fn draw_holdout(
    lines: Vec<&TenantLine>,
    pct: f64,
) -> (Vec<&TenantLine>, Vec<&TenantLine>) {
    if pct <= 0.0 || lines.is_empty() {
        return (lines, Vec::new());
    }
    // A customer's units stay together, so the customer rule holds in both groups.
    let mut groups: BTreeMap<String, Vec<&TenantLine>> = BTreeMap::new();
    for l in lines {
        let g = l
            .input
            .customer_id
            .clone()
            .map_or_else(|| format!("t:{}", l.input.tenant_id), |c| format!("c:{c}"));
        groups.entry(g).or_default().push(l);
    }
    let total: usize = groups.values().map(Vec::len).sum();
    let want = ((total as f64) * pct / 100.0).round() as usize;
    let mut order: Vec<Vec<&TenantLine>> = groups.into_values().collect();
    order.shuffle(&mut rand::thread_rng());
    let (mut kept, mut held) = (Vec::new(), Vec::new());
    for g in order {
        if held.len() + g.len() <= want {
            held.extend(g);
        } else {
            kept.extend(g);
        }
    }
    let by_order = |a: &&TenantLine, b: &&TenantLine| {
        (a.size.as_str(), a.input.tenant_id.as_str())
            .cmp(&(b.size.as_str(), b.input.tenant_id.as_str()))
    };
    kept.sort_by(by_order);
    held.sort_by(by_order);
    (kept, held)
}

pub(super) async fn insert_controls(
    conn: &mut PgConnection,
    batch_id: Uuid,
    held: &[&TenantLine],
) -> Result<()> {
    if held.is_empty() {
        return Ok(());
    }
    let tenant: Vec<String> = held.iter().map(|l| l.input.tenant_id.clone()).collect();
    let size: Vec<String> = held.iter().map(|l| l.size.clone()).collect();
    let rent: Vec<f64> = held.iter().map(|l| l.suggestion.current_rent).collect();
    let suggested: Vec<f64> = held.iter().map(|l| l.suggestion.new_rent).collect();
    sqlx::query!(
        "INSERT INTO ecri_batch_controls (batch_id, tenant_id, size, current_rent, suggested_rent)
         SELECT $1, u.t, u.s, u.r, u.n
         FROM UNNEST($2::text[], $3::text[], $4::float8[], $5::float8[]) AS u(t, s, r, n)",
        batch_id,
        &tenant,
        &size,
        &rent,
        &suggested
    )
    .execute(conn)
    .await?;
    Ok(())
}

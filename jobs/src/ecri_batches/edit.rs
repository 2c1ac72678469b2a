//! Editing a draft's lines: a new rent, weighed by the engine's guardrails and stay model of
//! now, or a line left out (or back in). All or nothing: one bad edit writes nothing.

use super::{
    get, key, lock_draft, money, probability, recheck, Batch, Line, LineEdit, Status, MAX_EDITS,
};
use crate::actor::Actor;
use crate::audit::Change;
use crate::decisions;
use crate::door::{self, Committed, Jobs, Who};
use crate::ecri::{self, FacilityEcri};
use crate::error::{Error, Result, ValidationError};
use domain::ecri::reprice;
use domain::ids::{CompanyId, FacilityId};
use domain::values::round2;
use sqlx::{PgConnection, PgPool};
use std::collections::BTreeSet;
use uuid::Uuid;

/// Edits a draft's lines: a new rent (checked against every guardrail, with the stay model of
/// now) or a line left out (or back in). All or nothing: one bad edit writes nothing.
pub async fn edit(
    pool: &PgPool,
    who: &Who,
    facility_id: FacilityId,
    id: Uuid,
    edits: &[LineEdit],
) -> Result<Committed<Batch>> {
    let (company_id, actor) = (who.company, &who.actor);
    if edits.is_empty() {
        return Err(ValidationError::new("lines", "must hold at least one edit").into());
    }
    if edits.len() > MAX_EDITS {
        return Err(ValidationError::new("lines", format!("at most {MAX_EDITS} edits")).into());
    }
    let batch = get(pool, company_id, facility_id, id).await?;
    check(&batch, edits)?;
    // A new rent, or a line taken back in, is weighed with the facility's engine of now.
    let needs_engine = edits
        .iter()
        .any(|e| e.new_rent.is_some() || e.excluded == Some(false));
    let now = if needs_engine {
        Some(ecri::facility(pool, company_id, facility_id).await?)
    } else {
        None
    };
    let mut changed: Vec<Line> = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        changed.push(edited(&batch, i, e, now.as_ref())?);
    }
    let mut tx = pool.begin().await?;
    lock_draft(&mut tx, company_id, facility_id, id, "edited").await?;
    if let Some(now) = &now {
        check_now(&mut tx, company_id, &batch, edits, &changed, now).await?;
    }
    update_lines(&mut tx, id, &changed).await?;
    log_edited(&mut tx, company_id, facility_id, id, &changed, actor).await?;
    let change = Change::new("ecri_batch.edit")
        .target("ecri_batch", id)
        .facility(facility_id.uuid())
        .values(None, Some(serde_json::json!({ "lines": changed.iter().map(|l| serde_json::json!({
            "line": l.line, "tenant_id": l.tenant_id, "new_rent": l.new_rent, "excluded": l.excluded,
        })).collect::<Vec<_>>() })));
    let done = door::commit(tx, who, change, (), Jobs::none()).await?;
    let batch = get(pool, company_id, facility_id, id).await?;
    Ok(done.map(|()| batch))
}

/// The lines an edit sets a rent on or takes back in pass the checks an approval makes now
/// (the roll, flags and settings of now, other batches' increases and control groups), as if
/// sent today: an edit cannot set up a line that approval would refuse.
async fn check_now(
    conn: &mut PgConnection,
    company_id: CompanyId,
    batch: &Batch,
    edits: &[LineEdit],
    changed: &[Line],
    now: &FacilityEcri,
) -> Result<()> {
    let mut after = batch.clone();
    for l in changed {
        if let Some(slot) = after.lines.iter_mut().find(|x| x.line == l.line) {
            *slot = l.clone();
        }
    }
    let touched: Vec<i32> = edits
        .iter()
        .filter(|e| e.new_rent.is_some() || e.excluded == Some(false))
        .map(|e| e.line)
        .collect();
    let today = super::company_today(conn, company_id).await?;
    let dates = recheck::Dates::noticed(today, &now.settings);
    let history = recheck::history(conn, batch.facility_id, Some(batch.id)).await?;
    let failing = recheck::failing(&after, Some(&touched), now, &history, dates);
    if let Some(f) = failing.first() {
        let i = edits.iter().position(|e| e.line == f.line).unwrap_or(0);
        return Err(ValidationError::new(
            format!("lines[{i}]"),
            format!(
                "{} no longer passes{}",
                f.describe(),
                if failing.len() > 1 {
                    format!(" (and {} other lines)", failing.len() - 1)
                } else {
                    String::new()
                }
            ),
        )
        .into());
    }
    Ok(())
}

/// The batch is a draft, and each edit names a line of it once and changes something.
fn check(batch: &Batch, edits: &[LineEdit]) -> Result<()> {
    if batch.status != Status::Draft {
        return Err(Error::Conflict(format!(
            "the batch is {}: only a draft can be edited",
            batch.status.as_str()
        )));
    }
    let mut seen = BTreeSet::new();
    for (i, e) in edits.iter().enumerate() {
        if !seen.insert(e.line) {
            return Err(ValidationError::new(
                format!("lines[{i}].line"),
                format!("line {} is edited twice", e.line),
            )
            .into());
        }
        if e.new_rent.is_none() && e.excluded.is_none() {
            return Err(ValidationError::new(
                format!("lines[{i}]"),
                "must give new_rent or excluded",
            )
            .into());
        }
        if !batch.lines.iter().any(|l| l.line == e.line) {
            return Err(ValidationError::new(
                format!("lines[{i}].line"),
                format!("no line {} in the batch", e.line),
            )
            .into());
        }
    }
    Ok(())
}

/// The line the `i`th edit makes; `now`, the facility's engine of now, is given when any edit
/// sets a rent.
fn edited(batch: &Batch, i: usize, e: &LineEdit, now: Option<&FacilityEcri>) -> Result<Line> {
    let mut l = batch
        .lines
        .iter()
        .find(|l| l.line == e.line)
        .cloned()
        .expect("checked above");
    if let Some(x) = e.excluded {
        l.excluded = x;
    }
    if let Some(rent) = e.new_rent {
        let f = now.expect("read when a rent is edited");
        reprice_line(&mut l, i, rent, f)?;
    }
    Ok(l)
}

/// Sets the line's rent to `rent` once the engine finds it within every guardrail, with the
/// stay probability, expected gain and reasons it gives there.
fn reprice_line(l: &mut Line, i: usize, rent: f64, f: &FacilityEcri) -> Result<()> {
    let at = |what: &str| format!("lines[{i}].{what}");
    let input = f
        .lines
        .iter()
        .find(|t| {
            key(
                Some(t.input.tenant_id.as_str()),
                &t.size,
                t.months_since_last_increase,
            ) == key(
                l.tenant_id.as_deref(),
                &l.size,
                l.months_since_last_increase,
            )
        })
        .map(|t| t.input.clone())
        .ok_or_else(|| {
            ValidationError::new(
                at("line"),
                format!(
                    "line {}: {} is no longer in the rent roll{}",
                    l.line,
                    l.tenant_id.as_deref().map_or_else(
                        || format!("the {} cohort", l.size),
                        |t| format!("tenant {t}")
                    ),
                    f.as_of.map(|d| format!(" of {d}")).unwrap_or_default()
                ),
            )
        })?;
    let mut input = input;
    // The batch is about the rent it was made for.
    input.rent = l.current_rent;
    let market = domain::ecri::decide::market_for(&f.markets, &input).ok_or_else(|| {
        ValidationError::new(
            at("new_rent"),
            format!("line {}: no street rate for {}", l.line, l.size),
        )
    })?;
    let s = reprice(&input, market, &f.model.model, &f.settings, rent).map_err(|r| {
        ValidationError::new(
            at("new_rent"),
            format!(
                "line {}: {rent:.2} breaks the guardrail {}: {}",
                l.line,
                r.guardrail.name(),
                r.text
            ),
        )
    })?;
    l.new_rent = round2(rent);
    l.edited = true;
    l.stay_probability = probability(s.stay_probability);
    l.expected_gain = s.expected_gain;
    l.reasons = serde_json::to_value(&s.reasons).unwrap_or_default();
    Ok(())
}

/// Writes the changed lines.
async fn update_lines(conn: &mut PgConnection, id: Uuid, changed: &[Line]) -> Result<()> {
    for l in changed {
        sqlx::query!(
            "UPDATE ecri_batch_lines SET new_rent = $3, edited = $4, excluded = $5,
                    stay_probability = $6, expected_gain = $7, reasons = $8
             WHERE batch_id = $1 AND line_no = $2",
            id,
            l.line,
            l.new_rent,
            l.edited,
            l.excluded,
            l.stay_probability,
            l.expected_gain,
            l.reasons
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Records the edit in the facility's decision log, naming each line changed.
async fn log_edited(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: FacilityId,
    id: Uuid,
    changed: &[Line],
    actor: &Actor,
) -> Result<()> {
    let described: Vec<String> = changed
        .iter()
        .map(|l| {
            let who = l
                .tenant_id
                .clone()
                .unwrap_or_else(|| format!("{} cohort", l.size));
            if l.excluded {
                format!("line {} ({who}) left out", l.line)
            } else {
                format!("line {} ({who}) at {}", l.line, money(l.new_rent))
            }
        })
        .collect();
    decisions::record(
        conn,
        decisions::Entry {
            company_id,
            facility_id,
            action: "ecri_batch.edited",
            subject_id: id,
            summary: format!("Edited the ECRI batch: {}", described.join(", ")),
            detail: serde_json::json!({
                "lines": changed.iter().map(|l| serde_json::json!({
                    "line": l.line, "tenant_id": l.tenant_id, "new_rent": l.new_rent,
                    "excluded": l.excluded,
                })).collect::<Vec<_>>(),
            }),
            actor,
        },
    )
    .await
}

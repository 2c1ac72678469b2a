//! The rent roll in force per facility, and the events that changed it.
//!
//! A snapshot that carries `tenants` carries the whole roll. [`apply`] compares it with the
//! roll in force and writes only the differences: a tenant new to the roll moved in, one whose
//! rent differs had it changed, one of the roll in force that the new roll leaves out moved
//! out on the new roll's date. An unchanged roll writes nothing but the facility's roll date, so
//! storage grows with the events, not with days x tenants. A roll older than the one in force
//! (a late re-send) is not applied: it would undo later changes. A roll that would move out more
//! than the facility's share of the tenants in force is held until confirmed ([`held`]).

mod held;

pub use held::{
    confirm, set_hold_pct, state, HeldRoll, Hold, RollState, DEFAULT_HOLD_PCT, MIN_MOVE_OUTS_HELD,
};

use crate::error::Result;
use chrono::NaiveDate;
use domain::ids::CompanyId;
use domain::sync::payload::RollTenant;
use serde::Serialize;
use sqlx::PgConnection;
use std::collections::HashMap;
use uuid::Uuid;

/// A rent change smaller than this (half a cent) is rounding, not a change.
const RENT_EPSILON: f64 = 0.005;

/// What applying a roll did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RollOutcome {
    /// False when the roll was older than the one in force, or held, and left it as it was.
    pub applied: bool,
    /// Set when the roll was held: it would move out more than the facility's share.
    pub held: Option<Hold>,
    /// Tenants in the roll.
    pub tenants: usize,
    pub moved_in: usize,
    pub moved_out: usize,
    pub rent_changed: usize,
    /// Tenants whose other fields (size, tier, flags, customer, dates) changed.
    pub updated: usize,
    /// The date of the roll in force after this one.
    pub roll_date: Option<NaiveDate>,
}

/// A tenant as stored.
#[derive(Clone, Debug, PartialEq)]
struct Stored {
    size: String,
    tier: String,
    rent: f64,
    move_in_date: NaiveDate,
    last_increase_date: Option<NaiveDate>,
    customer_id: Option<String>,
    flags: Vec<String>,
    moved_out_on: Option<NaiveDate>,
    /// The unit's number and the customer's name and mailing address, for the letters.
    mailing: Mailing,
}

/// What a letter needs besides the rents: the unit's number, the customer's name and address.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mailing {
    pub unit_id: Option<String>,
    pub customer_name: Option<String>,
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub city: Option<String>,
    pub region: Option<String>,
    pub postal_code: Option<String>,
}

impl Stored {
    fn of(t: &RollTenant) -> Self {
        let mut flags: Vec<String> = t.flags.iter().map(|f| f.as_str().to_lowercase()).collect();
        flags.sort();
        flags.dedup();
        Self {
            size: t.size.to_string(),
            tier: t.tier_str().to_lowercase(),
            rent: t.rent.get(),
            move_in_date: t.move_in_date.0,
            last_increase_date: t.last_increase_date.map(|d| d.0),
            customer_id: t.customer_id.as_ref().map(|c| c.as_str().to_owned()),
            flags,
            moved_out_on: None,
            mailing: Mailing {
                unit_id: text(&t.unit_id),
                customer_name: text(&t.customer_name),
                address_line1: text(&t.address_line1),
                address_line2: text(&t.address_line2),
                city: text(&t.city),
                region: text(&t.region),
                postal_code: text(&t.postal_code),
            },
        }
    }
}

fn text<const N: usize>(t: &Option<domain::values::Text<N>>) -> Option<String> {
    t.as_ref().map(|t| t.as_str().to_owned())
}

/// Column arrays of the rows to upsert and the events to insert.
#[derive(Default)]
struct Writes {
    t_id: Vec<String>,
    t_size: Vec<String>,
    t_tier: Vec<String>,
    t_rent: Vec<f64>,
    t_move_in: Vec<NaiveDate>,
    t_raised: Vec<Option<NaiveDate>>,
    t_customer: Vec<Option<String>>,
    t_flags: Vec<String>,
    /// The mailing fields, one array per field in [`Mailing`]'s order.
    t_mail: [Vec<Option<String>>; 7],
    gone: Vec<String>,
    e_tenant: Vec<String>,
    e_date: Vec<NaiveDate>,
    e_kind: Vec<&'static str>,
    e_size: Vec<String>,
    e_before: Vec<Option<f64>>,
    e_after: Vec<Option<f64>>,
}

impl Writes {
    fn upsert(&mut self, id: &str, s: &Stored) {
        self.t_id.push(id.to_owned());
        self.t_size.push(s.size.clone());
        self.t_tier.push(s.tier.clone());
        self.t_rent.push(s.rent);
        self.t_move_in.push(s.move_in_date);
        self.t_raised.push(s.last_increase_date);
        self.t_customer.push(s.customer_id.clone());
        // One text per row (arrays of arrays must be rectangular): joined by a unit separator.
        self.t_flags.push(s.flags.join("\u{1f}"));
        let m = &s.mailing;
        for (col, v) in self.t_mail.iter_mut().zip([
            &m.unit_id,
            &m.customer_name,
            &m.address_line1,
            &m.address_line2,
            &m.city,
            &m.region,
            &m.postal_code,
        ]) {
            col.push(v.clone());
        }
    }

    fn event(
        &mut self,
        id: &str,
        on: NaiveDate,
        kind: &'static str,
        size: &str,
        before: Option<f64>,
        after: Option<f64>,
    ) {
        self.e_tenant.push(id.to_owned());
        self.e_date.push(on);
        self.e_kind.push(kind);
        self.e_size.push(size.to_owned());
        self.e_before.push(before);
        self.e_after.push(after);
    }

    /// The tenant moved in (on its move-in date) with the roll's values.
    fn moved_in(&mut self, id: &str, new: &Stored) {
        self.event(
            id,
            new.move_in_date,
            "moved_in",
            &new.size,
            None,
            Some(new.rent),
        );
        self.upsert(id, new);
    }

    /// The tenant was last in place before the roll of `on`.
    fn moved_out(&mut self, id: &str, on: NaiveDate, old: &Stored) {
        self.event(id, on, "moved_out", &old.size, Some(old.rent), None);
    }
}

/// Whether a roll that moves out more than the facility's share is held or applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Guard {
    /// A roll as it arrives (a push, an upload, a CRM pull): held past the share.
    Hold,
    /// A held roll someone confirmed: applied whatever it moves out.
    Confirmed,
}

/// Applies the roll of `date` to the facility's roll in force, on the caller's transaction,
/// unless it is older than the roll in force or `guard` holds it.
///
/// The facility's row is locked `FOR NO KEY UPDATE`: the rows a snapshot inserts before this
/// (its record, its sizes) hold key-share locks on it through their foreign keys, which this
/// mode does not conflict with, so two rolls of one facility wait on each other here instead of
/// deadlocking (a `FOR UPDATE` did, with the other's key-share lock). A push takes the same
/// lock first (`sync::write`), so this one is normally held already.
pub(crate) async fn apply_checked(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: Uuid,
    date: NaiveDate,
    roll: &[RollTenant],
    guard: Guard,
) -> Result<RollOutcome> {
    let facility = sqlx::query!(
        "SELECT rent_roll_date, move_out_hold_pct FROM facilities
         WHERE id = $1 AND company_id = $2 FOR NO KEY UPDATE",
        facility_id,
        company_id.uuid()
    )
    .fetch_optional(&mut *conn)
    .await?;
    let (in_force, hold_pct) = facility.map_or((None, DEFAULT_HOLD_PCT), |f| {
        (f.rent_roll_date, f.move_out_hold_pct)
    });
    let mut out = RollOutcome {
        tenants: roll.len(),
        roll_date: in_force,
        ..RollOutcome::default()
    };
    if in_force.is_some_and(|d| d > date) {
        return Ok(out);
    }
    let stored = stored_roll(&mut *conn, facility_id).await?;
    let mut counted = out.clone();
    let w = compare(&stored, roll, date, &mut counted);
    let in_place = stored.values().filter(|s| s.moved_out_on.is_none()).count();
    if guard == Guard::Hold && held::exceeds(counted.moved_out, in_place, hold_pct) {
        let h = Hold {
            roll_date: date,
            tenants: roll.len(),
            in_force: in_place,
            moving_out: counted.moved_out,
            hold_pct,
        };
        held::hold(&mut *conn, company_id, facility_id, roll, &h).await?;
        out.held = Some(h);
        return Ok(out);
    }
    let mut out = counted;
    write(&mut *conn, company_id, facility_id, date, &w).await?;
    held::release_up_to(&mut *conn, facility_id, date).await?;
    if in_force != Some(date) {
        sqlx::query!(
            "UPDATE facilities SET rent_roll_date = $2 WHERE id = $1",
            facility_id,
            date
        )
        .execute(&mut *conn)
        .await?;
    }
    out.applied = true;
    out.roll_date = Some(date);
    Ok(out)
}

/// The facility's tenants as stored, by tenant id (those moved out included).
async fn stored_roll(
    conn: &mut PgConnection,
    facility_id: Uuid,
) -> Result<HashMap<String, Stored>> {
    let rows = sqlx::query!(
        r#"SELECT tenant_id, size, tier, rent, move_in_date, last_increase_date, customer_id,
                  flags, moved_out_on, unit_id, customer_name, address_line1, address_line2,
                  city, region, postal_code
           FROM rent_roll_tenants WHERE facility_id = $1"#,
        facility_id
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                r.tenant_id,
                Stored {
                    size: r.size,
                    tier: r.tier,
                    rent: r.rent,
                    move_in_date: r.move_in_date,
                    last_increase_date: r.last_increase_date,
                    customer_id: r.customer_id,
                    flags: r.flags,
                    moved_out_on: r.moved_out_on,
                    mailing: Mailing {
                        unit_id: r.unit_id,
                        customer_name: r.customer_name,
                        address_line1: r.address_line1,
                        address_line2: r.address_line2,
                        city: r.city,
                        region: r.region,
                        postal_code: r.postal_code,
                    },
                },
            )
        })
        .collect())
}

/// The writes that turn the roll in force, `stored`, into `roll` of `date`, counted in `out`.
fn compare(
    stored: &HashMap<String, Stored>,
    roll: &[RollTenant],
    date: NaiveDate,
    out: &mut RollOutcome,
) -> Writes {
    let mut w = Writes::default();
    let mut in_roll = std::collections::HashSet::with_capacity(roll.len());
    for t in roll {
        let id = t.tenant_id.as_str();
        in_roll.insert(id);
        let new = Stored::of(t);
        match stored.get(id) {
            // The id now names another tenancy (a unit number used as the id, let again): the
            // old tenant moved out and the new one moved in.
            Some(old) if old.moved_out_on.is_none() && old.move_in_date != new.move_in_date => {
                w.moved_out(id, date, old);
                w.moved_in(id, &new);
                out.moved_out += 1;
                out.moved_in += 1;
            }
            Some(old) if old.moved_out_on.is_none() => {
                // What is known of the last increase is kept when a feed omits it.
                let mut new = new;
                new.last_increase_date = new.last_increase_date.max(old.last_increase_date);
                if (old.rent - new.rent).abs() > RENT_EPSILON {
                    let on = match new.last_increase_date {
                        Some(d) if Some(d) != old.last_increase_date => d,
                        _ => date,
                    };
                    w.event(
                        id,
                        on,
                        "rent_changed",
                        &new.size,
                        Some(old.rent),
                        Some(new.rent),
                    );
                    out.rent_changed += 1;
                    w.upsert(id, &new);
                } else if *old != new {
                    out.updated += 1;
                    w.upsert(id, &new);
                }
            }
            // New, or back after a move-out: a move-in.
            _ => {
                w.moved_in(id, &new);
                out.moved_in += 1;
            }
        }
    }
    for (id, old) in stored {
        if old.moved_out_on.is_none() && !in_roll.contains(id.as_str()) {
            w.moved_out(id, date, old);
            w.gone.push(id.clone());
            out.moved_out += 1;
        }
    }
    w
}

/// Upserts the changed tenants of `w`, marks the gone ones moved out and inserts the events.
async fn write(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility_id: Uuid,
    date: NaiveDate,
    w: &Writes,
) -> Result<()> {
    if !w.t_id.is_empty() {
        sqlx::query!(
            r#"INSERT INTO rent_roll_tenants (facility_id, tenant_id, company_id, size, tier, rent,
                   move_in_date, last_increase_date, customer_id, flags, first_seen_on,
                   unit_id, customer_name, address_line1, address_line2, city, region, postal_code,
                   prior_increase_date)
               SELECT $1, u.id, $2, u.size, u.tier, u.rent, u.mi, u.li, u.cu,
                      CASE WHEN u.fl = '' THEN '{}'::text[] ELSE string_to_array(u.fl, E'\x1f') END,
                      $3, u.un, u.cn, u.a1, u.a2, u.ci, u.re, u.pc,
                      CASE WHEN u.li < $3 THEN u.li END
               FROM UNNEST($4::text[], $5::text[], $6::text[], $7::float8[], $8::date[],
                           $9::date[], $10::text[], $11::text[], $12::text[], $13::text[],
                           $14::text[], $15::text[], $16::text[], $17::text[], $18::text[])
                    AS u(id, size, tier, rent, mi, li, cu, fl, un, cn, a1, a2, ci, re, pc)
               ON CONFLICT (facility_id, tenant_id) DO UPDATE SET
                   size = EXCLUDED.size, tier = EXCLUDED.tier, rent = EXCLUDED.rent,
                   move_in_date = EXCLUDED.move_in_date,
                   -- A feed that omits the date (or sends an older one) never erases what is
                   -- known of the same tenancy; a new tenancy under the id starts afresh.
                   last_increase_date = CASE
                       WHEN rent_roll_tenants.moved_out_on IS NULL
                            AND rent_roll_tenants.move_in_date = EXCLUDED.move_in_date
                       THEN GREATEST(rent_roll_tenants.last_increase_date, EXCLUDED.last_increase_date)
                       ELSE EXCLUDED.last_increase_date END,
                   customer_id = EXCLUDED.customer_id, flags = EXCLUDED.flags,
                   unit_id = EXCLUDED.unit_id, customer_name = EXCLUDED.customer_name,
                   address_line1 = EXCLUDED.address_line1, address_line2 = EXCLUDED.address_line2,
                   city = EXCLUDED.city, region = EXCLUDED.region,
                   postal_code = EXCLUDED.postal_code,
                   first_seen_on = CASE WHEN rent_roll_tenants.moved_out_on IS NULL
                                        THEN rent_roll_tenants.first_seen_on ELSE EXCLUDED.first_seen_on END,
                   -- The increase before the tenancy's first roll: kept once known; a feed
                   -- that first sends the field later tells it if its date is before that roll.
                   prior_increase_date = CASE
                       WHEN rent_roll_tenants.moved_out_on IS NULL
                            AND rent_roll_tenants.move_in_date = EXCLUDED.move_in_date
                       THEN coalesce(rent_roll_tenants.prior_increase_date,
                                     CASE WHEN EXCLUDED.last_increase_date
                                               < rent_roll_tenants.first_seen_on
                                          THEN EXCLUDED.last_increase_date END)
                       ELSE EXCLUDED.prior_increase_date END,
                   moved_out_on = NULL, updated_at = now()"#,
            facility_id,
            company_id.uuid(),
            date,
            &w.t_id,
            &w.t_size,
            &w.t_tier,
            &w.t_rent,
            &w.t_move_in,
            &w.t_raised as &[Option<NaiveDate>],
            &w.t_customer as &[Option<String>],
            &w.t_flags,
            &w.t_mail[0] as &[Option<String>],
            &w.t_mail[1] as &[Option<String>],
            &w.t_mail[2] as &[Option<String>],
            &w.t_mail[3] as &[Option<String>],
            &w.t_mail[4] as &[Option<String>],
            &w.t_mail[5] as &[Option<String>],
            &w.t_mail[6] as &[Option<String>],
        )
        .execute(&mut *conn)
        .await?;
    }
    if !w.gone.is_empty() {
        sqlx::query!(
            "UPDATE rent_roll_tenants SET moved_out_on = $2, updated_at = now()
             WHERE facility_id = $1 AND tenant_id = ANY($3)",
            facility_id,
            date,
            &w.gone
        )
        .execute(&mut *conn)
        .await?;
    }
    if !w.e_tenant.is_empty() {
        let kinds: Vec<String> = w.e_kind.iter().map(|k| (*k).to_owned()).collect();
        sqlx::query!(
            r#"INSERT INTO rent_roll_events (facility_id, company_id, tenant_id, event_date, kind,
                   size, rent_before, rent_after, roll_date)
               SELECT $1, $2, u.t, u.d, u.k, u.s, u.b, u.a, $3
               FROM UNNEST($4::text[], $5::date[], $6::text[], $7::text[], $8::float8[], $9::float8[])
                    AS u(t, d, k, s, b, a)"#,
            facility_id,
            company_id.uuid(),
            date,
            &w.e_tenant,
            &w.e_date,
            &kinds,
            &w.e_size,
            &w.e_before as &[Option<f64>],
            &w.e_after as &[Option<f64>],
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

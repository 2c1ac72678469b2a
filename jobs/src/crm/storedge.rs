//! `storedge`: the storEDGE v1 REST API (Storable Edge), signed with one-legged OAuth 1.0 (the
//! customer's API key and secret as consumer key and secret, HMAC-SHA1).
//!
//! What it reads, per the public reference: the company's facilities
//! (`GET /companies/{account_id}/facilities`), and per facility its unit groups
//! (`GET /{facility_id}/unit_groups`) and units (`GET /{facility_id}/units`, paged with `page` and
//! `per_page`, a `meta` object with `total_count` on every answer). Each storEDGE facility becomes
//! one of ours by `external_id` (its storEDGE id) and `source_system` `storedge`; its units become
//! one unit type per size and tier (the unit group's name) with the street rate (the median
//! `standard_rate`), total units (available and rented; unrentable ones are left out) and occupied
//! units (rented), and the facility's occupancy. storEDGE answers with the units' present state,
//! so a backfill stores that state for each date asked, and says so.

use super::provider::{Adapter, Connection, Fetched};
use super::{Auth, PullError, Session, MAX_SNAPSHOTS};
use chrono::NaiveDate;
use domain::values::round2;
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};

pub const DEFAULT_BASE_URL: &str = "https://api.storedgefms.com/v1";
/// Page size asked for (storEDGE's default is 100 too).
const PER_PAGE: u64 = 100;
/// Most pages read of one collection.
const MAX_PAGES: u64 = 500;
/// The `source_system` of the facilities this adapter maps.
pub const SOURCE_SYSTEM: &str = "storedge";

pub struct StorEdge;

fn auth(connection: &Connection) -> Auth<'_> {
    Auth::OAuth1 {
        key: &connection.credential.key,
        secret: connection.credential.secret.as_deref().unwrap_or_default(),
    }
}

fn account(connection: &Connection) -> Result<&str, PullError> {
    connection.account_id.as_deref().ok_or(PullError::BadUrl)
}

/// `{base}/{segments...}?{query}`, built through the URL API (nothing in a segment can change
/// which resource is asked for).
fn endpoint(base: &str, segments: &[&str], query: &[(&str, u64)]) -> Result<url::Url, PullError> {
    if segments.iter().any(|s| super::is_dot_segment(s)) {
        return Err(PullError::BadUrl);
    }
    let mut url = url::Url::parse(base).map_err(|_| PullError::BadUrl)?;
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|()| PullError::BadUrl)?
        .pop_if_empty()
        .extend(segments);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "page" && k != "per_page")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.set_query(None);
    if !kept.is_empty() || !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        pairs.extend_pairs(kept);
        for (k, v) in query {
            pairs.append_pair(k, &v.to_string());
        }
    }
    Ok(url)
}

/// Every item of a paged collection: pages are read until `meta.total_count` items have come,
/// a page comes back short or empty, or [`MAX_PAGES`].
async fn all_pages(
    session: &mut Session,
    connection: &Connection,
    segments: &[&str],
    key: &'static str,
) -> Result<Vec<Value>, PullError> {
    let mut items = Vec::new();
    for page in 1..=MAX_PAGES {
        let url = endpoint(
            &connection.base_url,
            segments,
            &[("page", page), ("per_page", PER_PAGE)],
        )?;
        let mut answer = session.get_json(url, auth(connection)).await?;
        let Some(Value::Array(batch)) = answer.get_mut(key).map(Value::take) else {
            return Err(PullError::Shape(key));
        };
        let meta = answer.get("meta");
        let total = meta
            .and_then(|m| m.get("total_count"))
            .and_then(Value::as_u64);
        let per_page = meta
            .and_then(|m| m.get("per_page"))
            .and_then(Value::as_u64)
            .unwrap_or(PER_PAGE);
        let short = u64::try_from(batch.len()).unwrap_or(u64::MAX) < per_page;
        let empty = batch.is_empty();
        items.extend(batch);
        if items.len() > MAX_SNAPSHOTS * 100 {
            return Err(PullError::TooMany);
        }
        let seen = u64::try_from(items.len()).unwrap_or(u64::MAX);
        if empty || total.map_or(short, |t| seen >= t) {
            return Ok(items);
        }
    }
    Err(PullError::TooManyRequests)
}

/// An id of the CRM's, fit to be quoted in a warning: short and of plain characters, or `?`.
fn safe_id(v: Option<&Value>) -> Option<String> {
    let id = match v? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let plain = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    Some(if plain { id } else { "?".to_owned() })
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

/// A text of the CRM's kept as a name: control characters dropped, at most `max` characters.
fn clean_text(s: &str, max: usize) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .take(max)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Feet as the sync payload writes them: `10`, `7.5`.
fn feet(x: f64) -> String {
    format!("{}", (x * 100.0).round() / 100.0)
}

#[derive(Default)]
struct TypeTally {
    rates: Vec<f64>,
    total: u32,
    occupied: u32,
}

/// The figures of one storEDGE facility from its units: the occupancy and the unit types, or
/// `None` when no unit could be counted. What cannot be mapped is added to `warnings`.
pub fn map_units(
    facility_id: &str,
    groups: &HashMap<String, String>,
    units: &[Value],
    warnings: &mut Vec<String>,
) -> Option<(f64, Vec<Value>)> {
    let mut types: BTreeMap<(String, String), TypeTally> = BTreeMap::new();
    for (index, unit) in units.iter().enumerate() {
        let unit_ref = safe_id(unit.get("id")).unwrap_or_else(|| format!("at position {index}"));
        let occupied = match unit.get("status").and_then(Value::as_str) {
            Some("rented") => true,
            Some("available") => false,
            Some("unrentable") => continue,
            _ => {
                warnings.push(format!(
                    "storEDGE facility {facility_id}: unit {unit_ref} has a status other than available, rented or unrentable"
                ));
                continue;
            }
        };
        let (Some(width), Some(length)) = (number(unit.get("width")), number(unit.get("length")))
        else {
            warnings.push(format!(
                "storEDGE facility {facility_id}: unit {unit_ref} has no width and length"
            ));
            continue;
        };
        if !(width > 0.0 && length > 0.0 && width <= 1000.0 && length <= 1000.0) {
            warnings.push(format!(
                "storEDGE facility {facility_id}: unit {unit_ref} has no usable width and length"
            ));
            continue;
        }
        let Some(rate) = number(unit.get("standard_rate")).filter(|r| *r >= 0.0) else {
            warnings.push(format!(
                "storEDGE facility {facility_id}: unit {unit_ref} has no standard rate"
            ));
            continue;
        };
        let tier = unit
            .get("unit_group_id")
            .and_then(|g| safe_id(Some(g)))
            .and_then(|g| groups.get(&g).cloned())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "standard".to_owned());
        let tally = types
            .entry((format!("{}x{}", feet(width), feet(length)), tier))
            .or_default();
        tally.rates.push(rate);
        tally.total += 1;
        tally.occupied += u32::from(occupied);
    }
    if types.is_empty() {
        warnings.push(format!(
            "storEDGE facility {facility_id}: no unit could be mapped, so no snapshot"
        ));
        return None;
    }
    let (mut total, mut occupied) = (0u32, 0u32);
    let unit_types = types
        .into_iter()
        .map(|((size, tier), mut t)| {
            total += t.total;
            occupied += t.occupied;
            t.rates.sort_by(f64::total_cmp);
            let mid = t.rates.len() / 2;
            let median = if t.rates.len() % 2 == 1 {
                t.rates[mid]
            } else {
                (t.rates[mid - 1] + t.rates[mid]) / 2.0
            };
            json!({
                "size": size,
                "tier": tier,
                "street_rate": round2(median),
                "occupancy_pct": round2(f64::from(t.occupied) * 100.0 / f64::from(t.total)),
                "total_units": t.total,
                "occupied_units": t.occupied,
            })
        })
        .collect();
    Some((
        round2(f64::from(occupied) * 100.0 / f64::from(total)),
        unit_types,
    ))
}

/// The unit group names by id, from a list or an object with a `unit_groups` list.
fn group_names(answer: Value) -> Result<HashMap<String, String>, PullError> {
    let list = match answer {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("unit_groups") {
            Some(Value::Array(items)) => items,
            _ => return Err(PullError::Shape("unit_groups")),
        },
        _ => return Err(PullError::Shape("unit_groups")),
    };
    Ok(list
        .iter()
        .filter_map(|g| {
            let id = safe_id(g.get("id"))?;
            let name = clean_text(g.get("name")?.as_str()?, 100);
            Some((id, name))
        })
        .collect())
}

/// One facility's snapshot without its date.
struct Mapped {
    facility: Value,
    occupancy_pct: f64,
    unit_types: Vec<Value>,
}

impl Adapter for StorEdge {
    fn check<'a>(
        &'a self,
        session: &'a mut Session,
        connection: &'a Connection,
    ) -> BoxFuture<'a, Result<(), PullError>> {
        Box::pin(async move {
            let url = endpoint(
                &connection.base_url,
                &["companies", account(connection)?, "facilities"],
                &[("page", 1), ("per_page", 1)],
            )?;
            let answer = session.get_json(url, auth(connection)).await?;
            match answer.get("facilities") {
                Some(Value::Array(_)) => Ok(()),
                _ => Err(PullError::Shape("facilities")),
            }
        })
    }

    fn fetch<'a>(
        &'a self,
        session: &'a mut Session,
        connection: &'a Connection,
        dates: &'a [NaiveDate],
    ) -> BoxFuture<'a, Result<Fetched, PullError>> {
        Box::pin(async move {
            let account = account(connection)?;
            let facilities = all_pages(
                session,
                connection,
                &["companies", account, "facilities"],
                "facilities",
            )
            .await?;
            let mut warnings = Vec::new();
            let mut mapped = Vec::new();
            for (index, facility) in facilities.iter().enumerate() {
                let Some(id) = safe_id(facility.get("id")).filter(|id| id != "?") else {
                    warnings.push(format!(
                        "storEDGE facility at position {index} has no usable id, so no snapshot"
                    ));
                    continue;
                };
                let groups_url =
                    endpoint(&connection.base_url, &[id.as_str(), "unit_groups"], &[])?;
                let groups = group_names(session.get_json(groups_url, auth(connection)).await?)?;
                let units =
                    all_pages(session, connection, &[id.as_str(), "units"], "units").await?;
                let Some((occupancy_pct, unit_types)) =
                    map_units(&id, &groups, &units, &mut warnings)
                else {
                    continue;
                };
                let name = facility
                    .get("name")
                    .and_then(Value::as_str)
                    .map(|n| clean_text(n, 200))
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| format!("storEDGE facility {id}"));
                let mut identity = Map::new();
                identity.insert("external_id".into(), json!(id));
                identity.insert("source_system".into(), json!(SOURCE_SYSTEM));
                identity.insert("name".into(), json!(name));
                if let Some(address) = facility.get("address").and_then(Value::as_str) {
                    identity.insert("address".into(), json!(clean_text(address, 500)));
                }
                mapped.push(Mapped {
                    facility: Value::Object(identity),
                    occupancy_pct,
                    unit_types,
                });
            }
            if dates.len() > 1 {
                warnings.push(format!(
                    "storEDGE reports the units' present state: the same figures were stored for each of the {} dates",
                    dates.len()
                ));
            }
            let mut snapshots = Vec::with_capacity(mapped.len() * dates.len());
            for date in dates {
                for m in &mapped {
                    snapshots.push(json!({
                        "facility": m.facility,
                        "date": date.format("%Y-%m-%d").to_string(),
                        "occupancy_pct": m.occupancy_pct,
                        "unit_types": m.unit_types,
                    }));
                }
                if snapshots.len() > MAX_SNAPSHOTS {
                    return Err(PullError::TooMany);
                }
            }
            Ok(Fetched {
                snapshots,
                warnings,
            })
        })
    }
}

#[cfg(test)]
mod tests;

//! The filter a new batch is drawn with: which of the facility's suggestions it takes (some
//! sizes, some tenants), checked against what the roll holds.

use super::{NewBatch, MAX_FILTER};
use crate::ecri::TenantLine;
use crate::error::{Result, ValidationError};
use domain::pricing::engine::size_key;
use std::collections::BTreeSet;

fn check_filter(name: &str, values: &Option<Vec<String>>) -> Result<(), ValidationError> {
    let Some(values) = values else {
        return Ok(());
    };
    if values.is_empty() {
        return Err(ValidationError::new(
            name,
            "must name at least one (leave it out for every suggestion)",
        ));
    }
    if values.len() > MAX_FILTER {
        return Err(ValidationError::new(
            name,
            format!("at most {MAX_FILTER}, got {}", values.len()),
        ));
    }
    if let Some(i) = values
        .iter()
        .position(|v| v.trim().is_empty() || v.chars().count() > 100)
    {
        return Err(ValidationError::new(
            format!("{name}[{i}]"),
            "must be 1 to 100 characters",
        ));
    }
    Ok(())
}

/// The lines a filter keeps; an unknown size or tenant is an error naming it.
pub(super) fn filtered<'a>(
    all: &'a [TenantLine],
    filter: &NewBatch,
) -> Result<Vec<&'a TenantLine>> {
    check_filter("sizes", &filter.sizes)?;
    check_filter("tenant_ids", &filter.tenant_ids)?;
    let sizes: Option<BTreeSet<String>> = filter
        .sizes
        .as_ref()
        .map(|s| s.iter().map(|s| size_key(s)).collect());
    if let Some(given) = &filter.sizes {
        let known: BTreeSet<String> = all.iter().map(|l| size_key(&l.size)).collect();
        if let Some(i) = given.iter().position(|s| !known.contains(&size_key(s))) {
            return Err(ValidationError::new(
                format!("sizes[{i}]"),
                format!("no tenant of size '{}' in the roll", given[i]),
            )
            .into());
        }
    }
    let tenants: Option<BTreeSet<&str>> = filter
        .tenant_ids
        .as_ref()
        .map(|t| t.iter().map(|t| t.trim()).collect());
    if let Some(given) = &filter.tenant_ids {
        let known: BTreeSet<&str> = all.iter().map(|l| l.input.tenant_id.as_str()).collect();
        if let Some(i) = given.iter().position(|t| !known.contains(t.trim())) {
            return Err(ValidationError::new(
                format!("tenant_ids[{i}]"),
                format!("no tenant '{}' in the rent roll", given[i]),
            )
            .into());
        }
    }
    Ok(all
        .iter()
        .filter(|l| {
            sizes
                .as_ref()
                .is_none_or(|s| s.contains(&size_key(&l.size)))
                && tenants
                    .as_ref()
                    .is_none_or(|t| t.contains(l.input.tenant_id.as_str()))
        })
        .collect())
}

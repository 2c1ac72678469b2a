//! What the API answers for an upload's merge, built from `jobs::upload::merge`.

use serde::Serialize;

/// A unit type's identity within a day: its size and tier, as the sync payload's duplicate
/// check compares them (normalised size, tier without case).
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct UnitKey {
    /// Unit size.
    pub size: String,
    /// Tier; empty when none.
    pub tier: String,
}

impl From<jobs::upload::merge::UnitKey> for UnitKey {
    fn from(r: jobs::upload::merge::UnitKey) -> Self {
        Self {
            size: r.size,
            tier: r.tier,
        }
    }
}

/// What an upload did to one day's unit types.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct MergeReport {
    /// Stored unit types that an uploaded one updated (the fields it carried).
    pub replaced: Vec<UnitKey>,
    /// Uploaded unit types the day did not have.
    pub added: Vec<UnitKey>,
    /// Stored unit types the upload did not mention, kept as they were.
    pub kept: Vec<UnitKey>,
}

impl From<jobs::upload::merge::MergeReport> for MergeReport {
    fn from(r: jobs::upload::merge::MergeReport) -> Self {
        Self {
            replaced: r.replaced.into_iter().map(Into::into).collect(),
            added: r.added.into_iter().map(Into::into).collect(),
            kept: r.kept.into_iter().map(Into::into).collect(),
        }
    }
}

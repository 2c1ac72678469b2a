//! The provider framework: what every CRM declares ([`ProviderInfo`]), what a live one does
//! ([`Adapter`]), and the one registry ([`PROVIDERS`]) the handler, the API and the dashboard
//! read. Nothing outside this file and the adapters names a provider.

use super::{generic_json::GenericJson, storedge::StorEdge, PullError, Session};
use chrono::NaiveDate;
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

/// Whether a provider can be connected today.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Live,
    ComingSoon,
}

/// What a provider is and what connecting it takes.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ProviderInfo {
    /// The value of `provider` in the API.
    pub name: &'static str,
    /// The provider's name for people.
    pub label: &'static str,
    /// `live` (can be connected) or `coming_soon` (announced).
    pub state: State,
    /// Credential fields a connection needs, of `api_key` and `api_secret`.
    pub credential_fields: &'static [&'static str],
    /// Whether the connection takes a `base_url` (required unless there is a default).
    pub takes_base_url: bool,
    /// The address used when none is given.
    pub default_base_url: Option<&'static str>,
    /// Whether the connection needs the CRM's own account (company) id, `account_id`.
    pub needs_account_id: bool,
    /// Whether the CRM can answer for a past date (otherwise a backfill stores its present state).
    pub has_history: bool,
}

impl ProviderInfo {
    pub fn needs_secret(&self) -> bool {
        self.credential_fields.contains(&"api_secret")
    }
}

/// The credential of a connection, opened from its sealed form for one pull.
#[derive(Clone)]
pub struct Credential {
    pub key: String,
    pub secret: Option<String>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential([redacted])")
    }
}

/// Where and as whom a pull asks.
#[derive(Clone, Debug)]
pub struct Connection {
    pub base_url: String,
    pub credential: Credential,
    pub account_id: Option<String>,
}

/// What a pull fetched: sync payloads, as a push would send them, and what could not be mapped
/// (in our own words; see `crate::crm`).
#[derive(Debug, Default)]
pub struct Fetched {
    pub snapshots: Vec<Value>,
    pub warnings: Vec<String>,
}

/// A live provider. Every request goes through the session, which is the guarded outbound
/// client with the pull's limits (size, request count, time, retries).
pub trait Adapter: Send + Sync {
    /// One cheap request proving the address and credential work; stores nothing.
    fn check<'a>(
        &'a self,
        session: &'a mut Session,
        connection: &'a Connection,
    ) -> BoxFuture<'a, Result<(), PullError>>;

    /// The snapshots of `dates` (ascending, at least one).
    fn fetch<'a>(
        &'a self,
        session: &'a mut Session,
        connection: &'a Connection,
        dates: &'a [NaiveDate],
    ) -> BoxFuture<'a, Result<Fetched, PullError>>;
}

/// A registered provider: its description and, when live, its adapter.
pub struct Provider {
    pub info: ProviderInfo,
    pub adapter: Option<&'static dyn Adapter>,
}

const fn announced(name: &'static str, label: &'static str) -> Provider {
    Provider {
        info: ProviderInfo {
            name,
            label,
            state: State::ComingSoon,
            credential_fields: &["api_key"],
            takes_base_url: true,
            default_base_url: None,
            needs_account_id: false,
            has_history: false,
        },
        adapter: None,
    }
}

/// Every provider, live ones first.
pub static PROVIDERS: [Provider; 7] = [
    Provider {
        info: ProviderInfo {
            name: "generic_json",
            label: "Generic JSON (any CRM serving daily snapshots)",
            state: State::Live,
            credential_fields: &["api_key"],
            takes_base_url: true,
            default_base_url: None,
            needs_account_id: false,
            has_history: true,
        },
        adapter: Some(&GenericJson),
    },
    Provider {
        info: ProviderInfo {
            name: "storedge",
            label: "storEDGE (Storable Edge)",
            state: State::Live,
            credential_fields: &["api_key", "api_secret"],
            takes_base_url: true,
            default_base_url: Some(super::storedge::DEFAULT_BASE_URL),
            needs_account_id: true,
            has_history: false,
        },
        adapter: Some(&StorEdge),
    },
    announced("sitelink", "SiteLink"),
    announced("storman", "Storman"),
    announced("webselfstorage", "WebSelfStorage"),
    announced("hummingbird", "Hummingbird"),
    announced("stora", "Stora"),
];

pub fn find(name: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|p| p.info.name == name)
}

/// Names of the providers in one state, in registry order.
pub fn names(state: State) -> Vec<&'static str> {
    PROVIDERS
        .iter()
        .filter(|p| p.info.state == state)
        .map(|p| p.info.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_providers_have_an_adapter_and_the_others_none() {
        for p in &PROVIDERS {
            assert_eq!(
                p.adapter.is_some(),
                p.info.state == State::Live,
                "{}",
                p.info.name
            );
            assert!(p.info.credential_fields.contains(&"api_key"));
        }
        assert_eq!(names(State::Live), ["generic_json", "storedge"]);
        assert_eq!(names(State::ComingSoon).len(), 5);
        assert!(find("storedge").unwrap().info.needs_secret());
        assert!(find("nope").is_none());
    }
}

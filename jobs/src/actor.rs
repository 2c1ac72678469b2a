//! Who made a change: a signed-in user, an API key, or the service itself (an automatic
//! decision). Stored as JSON with every decision, and shown in the facility's history.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The kind of actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    User,
    ApiKey,
    System,
}

/// One actor as stored: `{"type": "user", "id": "...", "name": "ana@example.com"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    #[serde(rename = "type")]
    pub kind: ActorKind,
    /// The user's or the key's id; none for the service.
    pub id: Option<Uuid>,
    /// The user's address, the key's name, or what the service did (`auto-accept`).
    pub name: String,
}

impl Actor {
    pub fn user(id: Uuid, email: &str) -> Self {
        Self {
            kind: ActorKind::User,
            id: Some(id),
            name: email.to_owned(),
        }
    }

    pub fn api_key(id: Uuid, name: &str) -> Self {
        Self {
            kind: ActorKind::ApiKey,
            id: Some(id),
            name: name.to_owned(),
        }
    }

    pub fn system(what: &str) -> Self {
        Self {
            kind: ActorKind::System,
            id: None,
            name: what.to_owned(),
        }
    }

    /// The stored form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("an actor serialises")
    }

    /// Reads a stored actor; an unreadable one is shown as unknown rather than failing a read.
    pub fn from_json(v: &serde_json::Value) -> Self {
        serde_json::from_value(v.clone()).unwrap_or_else(|_| Self::system("unknown"))
    }

    /// How a person reads it: the address, `API key "nightly"`, or `the service (auto-accept)`.
    pub fn label(&self) -> String {
        match self.kind {
            ActorKind::User => self.name.clone(),
            ActorKind::ApiKey => format!("API key \"{}\"", self.name),
            ActorKind::System => format!("the service ({})", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_actor_round_trips_and_reads_as_a_person_would() {
        let id = Uuid::nil();
        let key = Actor::api_key(id, "nightly");
        assert_eq!(
            key.json(),
            serde_json::json!({"type": "api_key", "id": id, "name": "nightly"})
        );
        assert_eq!(Actor::from_json(&key.json()), key);
        assert_eq!(key.label(), "API key \"nightly\"");
        assert_eq!(
            Actor::user(id, "ana@example.com").label(),
            "ana@example.com"
        );
        assert_eq!(
            Actor::from_json(&serde_json::json!({"x": 1})).label(),
            "the service (unknown)"
        );
    }
}

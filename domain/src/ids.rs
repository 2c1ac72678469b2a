//! Typed identifiers: a company's id, a facility's and a recommendation run's are all UUIDs, and
//! a function that takes two of them must not be called with them swapped. Each is a
//! `#[serde(transparent)]` wrapper, so its JSON and its text are the UUID's; data access binds
//! [`CompanyId::uuid`] and friends.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Uuid);

        impl $name {
            /// The id as stored.
            pub const fn uuid(self) -> Uuid {
                self.0
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }

        impl From<$name> for Uuid {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::from_str(s).map(Self)
            }
        }
    };
}

id_type!(
    /// An operator (a company): the tenant every row belongs to.
    CompanyId
);
id_type!(
    /// One of a company's facilities.
    FacilityId
);
id_type!(
    /// A stored recommendation run (its `recommendation_id`).
    RunId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_reads_and_writes_as_its_uuid() {
        let raw = "0190a5b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b";
        let id: FacilityId = raw.parse().unwrap();
        assert_eq!(id.to_string(), raw);
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{raw}\""));
        let back: FacilityId = serde_json::from_str(&format!("\"{raw}\"")).unwrap();
        assert_eq!(back, id);
        assert_eq!(Uuid::from(id), Uuid::parse_str(raw).unwrap());
        assert!("not-a-uuid".parse::<CompanyId>().is_err());
    }
}

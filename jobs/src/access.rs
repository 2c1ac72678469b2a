//! Who may do what: the four roles of a company's people and keys, the permissions each role
//! holds, and a member's or key's facility scope. The rules are here; the table of which route
//! needs which permission is the api's (`api::access`).

use serde::{Deserialize, Serialize};
use std::fmt;
use uuid::Uuid;

/// A role, from most to least.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, including making and removing owners.
    Owner,
    /// Everything but owners: keys, webhooks, data sources, facilities, the team, the audit log.
    Admin,
    /// Pricing, ECRI and street-rate decisions, uploads and pushes, competitor rates, settings
    /// of pricing and ECRI; reads everything it can see.
    Manager,
    /// Reads only.
    Viewer,
}

/// Every role, most first.
pub const ROLES: [Role; 4] = [Role::Owner, Role::Admin, Role::Manager, Role::Viewer];

/// What a request needs, from least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    /// Reading the company's facilities, analytics, runs and decisions.
    Read,
    /// Acting on pricing: decisions, batches, settings of pricing and ECRI, data in.
    Operate,
    /// Running the account: keys, webhooks, data sources, facilities, company, team, audit log.
    Administer,
    /// Making, changing or removing an owner.
    Own,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Manager => "manager",
            Role::Viewer => "viewer",
        }
    }

    /// A role as stored or sent; `None` for anything else.
    pub fn parse(s: &str) -> Option<Role> {
        ROLES.into_iter().find(|r| r.as_str() == s)
    }

    /// The most this role may do.
    fn grant(self) -> Permission {
        match self {
            Role::Owner => Permission::Own,
            Role::Admin => Permission::Administer,
            Role::Manager => Permission::Operate,
            Role::Viewer => Permission::Read,
        }
    }

    /// Whether this role holds `p`.
    pub fn allows(self, p: Permission) -> bool {
        p <= self.grant()
    }

    /// Whether this role may see tenants' personal data (a customer's name and mailing
    /// address, as the letters carry them): the roles that act on tenants (manager and
    /// above). A viewer reads the figures, never who pays them.
    pub fn sees_tenants(self) -> bool {
        self.allows(Permission::Operate)
    }

    /// Whether a member or key of this role may be limited to some facilities. Owners and
    /// admins run the whole account (keys, webhooks, data sources act company-wide), so a
    /// scope is for managers and viewers.
    pub fn may_be_scoped(self) -> bool {
        matches!(self, Role::Manager | Role::Viewer)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Permission {
    /// How a refusal names what was missing.
    pub fn needs(self) -> &'static str {
        match self {
            Permission::Read => "any role",
            Permission::Operate => "the manager, admin or owner role",
            Permission::Administer => "the admin or owner role",
            Permission::Own => "the owner role",
        }
    }
}

/// The facilities a member or key may see: all of the company's, or only those listed.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    All,
    Only(Vec<Uuid>),
}

impl Scope {
    /// From the stored column (NULL: every facility).
    pub fn from_column(ids: Option<Vec<Uuid>>) -> Self {
        ids.map_or(Scope::All, Scope::Only)
    }

    /// The stored column.
    pub fn column(&self) -> Option<Vec<Uuid>> {
        match self {
            Scope::All => None,
            Scope::Only(ids) => Some(ids.clone()),
        }
    }

    /// Whether the facility `id` is in the scope.
    pub fn sees(&self, id: Uuid) -> bool {
        match self {
            Scope::All => true,
            Scope::Only(ids) => ids.contains(&id),
        }
    }

    pub fn is_all(&self) -> bool {
        matches!(self, Scope::All)
    }

    /// The ids a query filters on: `None` for every facility.
    pub fn ids(&self) -> Option<&[Uuid]> {
        match self {
            Scope::All => None,
            Scope::Only(ids) => Some(ids),
        }
    }
}

/// Whoever acts in a request: the actor, their role and scope.
#[derive(Clone, Debug)]
pub struct Access {
    pub actor: crate::actor::Actor,
    pub role: Role,
    pub scope: Scope,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_holds_what_the_role_table_says() {
        use Permission::*;
        let table = [
            (Role::Owner, [true, true, true, true]),
            (Role::Admin, [true, true, true, false]),
            (Role::Manager, [true, true, false, false]),
            (Role::Viewer, [true, false, false, false]),
        ];
        for (role, expected) in table {
            let got = [Read, Operate, Administer, Own].map(|p| role.allows(p));
            assert_eq!(got, expected, "{role}");
        }
        for r in ROLES {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("root"), None);
        assert!(!Role::Admin.may_be_scoped() && Role::Viewer.may_be_scoped());
    }

    #[test]
    fn a_scope_sees_only_its_facilities() {
        let a = Uuid::now_v7();
        let b = Uuid::now_v7();
        let only = Scope::from_column(Some(vec![a]));
        assert!(only.sees(a) && !only.sees(b));
        assert!(Scope::from_column(None).sees(b));
        assert_eq!(only.column(), Some(vec![a]));
    }
}

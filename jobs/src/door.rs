//! The one way a change leaves a use case. A use case that changes anything opens its own
//! transaction, writes, and ends with [`commit`]: the audit entry is written in that
//! transaction (its "before" read there too, under the lock the change takes), so a change and
//! its record commit together or not at all. What the change caused in the background (the
//! job rows it recorded) travels with its value as [`Committed`], and the caller pushes them to
//! their queues after the commit ([`crate::queue::Queues::push_jobs`]; the api's
//! `AppState::finish`). A push that fails is repaired by the worker's sweeper: the rows are in
//! PostgreSQL.

use crate::access::Role;
use crate::actor::Actor;
use crate::audit::{self, By, Change};
use crate::error::Result;
use crate::queue::Kind;
use domain::ids::CompanyId;
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

/// Where a change came from: a request to the API, a click on the dashboard, or the service
/// on its own. The audit log records it beside the actor, so a person's click on the
/// dashboard is told apart from the same person's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    Api,
    Dashboard,
    Service,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Api => "api",
            Via::Dashboard => "dashboard",
            Via::Service => "service",
        }
    }
}

/// Who makes a change, for the audit log: the company, the actor (a person, a key, the
/// service), their role, where the change came from and the client's address.
#[derive(Clone, Debug)]
pub struct Who {
    pub company: CompanyId,
    pub actor: Actor,
    /// `None` for the service itself.
    pub role: Option<Role>,
    pub via: Via,
    pub client_addr: Option<String>,
}

impl Who {
    /// The service acting on its own (`what` names it: `demo seed`, `benchmark`).
    pub fn system(company: CompanyId, what: &str) -> Self {
        Self {
            company,
            actor: Actor::system(what),
            role: None,
            via: Via::Service,
            client_addr: None,
        }
    }

    pub(crate) fn by(&self) -> By<'_> {
        By {
            actor: &self.actor,
            role: self.role,
            via: Some(self.via),
            client_addr: self.client_addr.as_deref(),
        }
    }
}

/// Job rows a change recorded in its transaction, to push once it has committed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Jobs(Vec<(Kind, Uuid)>);

impl Jobs {
    pub fn none() -> Self {
        Self::default()
    }

    pub fn one(kind: Kind, id: Uuid) -> Self {
        Self(vec![(kind, id)])
    }

    pub fn of(kind: Kind, ids: impl IntoIterator<Item = Uuid>) -> Self {
        Self(ids.into_iter().map(|id| (kind, id)).collect())
    }

    pub fn add(&mut self, kind: Kind, id: Uuid) {
        self.0.push((kind, id));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ids of one kind, in the order they were recorded.
    pub fn ids(&self, kind: Kind) -> Vec<Uuid> {
        self.0
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, id)| *id)
            .collect()
    }

    /// The ids grouped by kind, each kind once, in the order kinds first appear.
    pub fn grouped(&self) -> Vec<(Kind, Vec<Uuid>)> {
        let mut out: Vec<(Kind, Vec<Uuid>)> = Vec::new();
        for &(kind, id) in &self.0 {
            match out.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, ids)) => ids.push(id),
                None => out.push((kind, vec![id])),
            }
        }
        out
    }
}

/// A change that has committed with its audit entry: its value and the jobs to push. Only
/// [`commit`] makes one (and [`Committed::unchanged`], for a request that found nothing to
/// change), so a value of this type is a change that was recorded.
#[must_use = "a committed change's jobs must be pushed: finish it"]
#[derive(Debug)]
pub struct Committed<T> {
    value: T,
    jobs: Jobs,
}

impl<T> Committed<T> {
    /// A request that changed nothing (a revocation of what was revoked already): nothing
    /// to record, nothing to push.
    pub(crate) fn unchanged(value: T) -> Self {
        Self {
            value,
            jobs: Jobs::none(),
        }
    }

    /// The value and the jobs to push.
    pub fn into_parts(self) -> (T, Jobs) {
        (self.value, self.jobs)
    }

    /// The value with its jobs left behind, for a caller that has none to push (a test, the
    /// demo seed: the sweeper or the caller's own drain runs them).
    pub fn into_value(self) -> T {
        self.value
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Committed<U> {
        Committed {
            value: f(self.value),
            jobs: self.jobs,
        }
    }
}

/// Writes the change's audit entry in its transaction and commits both.
pub(crate) async fn commit<T>(
    mut tx: Transaction<'_, Postgres>,
    who: &Who,
    change: Change,
    value: T,
    jobs: Jobs,
) -> Result<Committed<T>> {
    audit::record(&mut tx, who.company, &who.by(), &change).await?;
    tx.commit().await?;
    Ok(Committed { value, jobs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_group_by_kind_in_first_seen_order() {
        let (a, b, c) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
        let mut jobs = Jobs::one(Kind::WebhookDelivery, a);
        jobs.add(Kind::Ingest, b);
        jobs.add(Kind::WebhookDelivery, c);
        assert_eq!(
            jobs.grouped(),
            vec![(Kind::WebhookDelivery, vec![a, c]), (Kind::Ingest, vec![b])]
        );
        assert_eq!(jobs.ids(Kind::Ingest), vec![b]);
        assert!(Jobs::none().grouped().is_empty());
    }
}

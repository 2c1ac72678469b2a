//! `generic_json`: any CRM (or a small bridge in front of one) that serves the day's sync
//! payloads at `GET {base_url}/snapshots?date=YYYY-MM-DD`, with the key as a bearer token, as a
//! JSON list or an object with a `snapshots` list. A backfill asks once per date.

use super::provider::{Adapter, Connection, Fetched};
use super::{snapshots_of, snapshots_url, Auth, PullError, Session, MAX_SNAPSHOTS};
use chrono::NaiveDate;
use futures::future::BoxFuture;

pub struct GenericJson;

impl Adapter for GenericJson {
    fn check<'a>(
        &'a self,
        session: &'a mut Session,
        connection: &'a Connection,
    ) -> BoxFuture<'a, Result<(), PullError>> {
        Box::pin(async move {
            let today = chrono::Utc::now().date_naive();
            let url = snapshots_url(&connection.base_url, today)?;
            let answer = session
                .get_json(url, Auth::Bearer(&connection.credential.key))
                .await?;
            snapshots_of(answer).map(|_| ())
        })
    }

    fn fetch<'a>(
        &'a self,
        session: &'a mut Session,
        connection: &'a Connection,
        dates: &'a [NaiveDate],
    ) -> BoxFuture<'a, Result<Fetched, PullError>> {
        Box::pin(async move {
            let mut fetched = Fetched::default();
            for date in dates {
                let url = snapshots_url(&connection.base_url, *date)?;
                let answer = session
                    .get_json(url, Auth::Bearer(&connection.credential.key))
                    .await?;
                fetched.snapshots.extend(snapshots_of(answer)?);
                if fetched.snapshots.len() > MAX_SNAPSHOTS {
                    return Err(PullError::TooMany);
                }
            }
            Ok(fetched)
        })
    }
}

//! Who may call what: one table of operations for the `/api/v1` routes and one for the
//! dashboard's, each naming the permission a route needs; and who acts in a request
//! ([`Acting`]), the "who" every use case records its change under. The record itself is the
//! use case's, written in the change's transaction (`jobs::door`), so the API and the page
//! that call one use case record the same action.
//!
//! A read needs [`Permission::Read`] unless listed; a write not listed needs
//! [`Permission::Administer`], so a route added without a line here is closed, not open.

use crate::error::ApiError;
use crate::extract::{client_address, PeerAddr};
use crate::state::AppState;
use axum::extract::{FromRequestParts, MatchedPath, RawPathParams, Request, State};
use axum::http::{request::Parts, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jobs::access::{Access, Permission};
use jobs::door::{Via, Who};
use jobs::sessions::Session;
use jobs::tenancy::Principal;
use uuid::Uuid;

/// What a route needs: the permission its role check asks for. What a change records in the
/// audit log is the use case's own (`jobs::door`), written in the change's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operation {
    pub permission: Permission,
}

const fn needs(permission: Permission) -> Operation {
    Operation { permission }
}

fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The operation of an `/api/v1` route (`route` as axum matched it, `{id}` and all).
pub fn api(method: &Method, route: &str) -> Operation {
    use Permission::{Administer as A, Operate as O};
    let path = route.strip_prefix("/api/v1").unwrap_or(route);
    if is_read(method) {
        let admin_only = [
            "/api-keys",
            "/data-sources",
            "/webhooks",
            "/team",
            "/audit-log",
        ]
        .iter()
        .any(|p| path.starts_with(p));
        return needs(if admin_only { A } else { Permission::Read });
    }
    // The writes an operator (a revenue manager, a CRM's key) makes; every other needs an admin.
    let operate = matches!(
        (method.as_str(), path),
        ("POST", "/sync")
            | ("POST", "/facilities/{id}/competitor-rates")
            | ("POST", "/facilities/{id}/ecri-batches")
            | ("PATCH", "/facilities/{id}/ecri-batches/{batch_id}")
            | ("POST", "/facilities/{id}/ecri-batches/{batch_id}/approve")
            | ("POST", "/facilities/{id}/ecri-batches/{batch_id}/cancel")
            | ("PUT", "/facilities/{id}/ecri-settings")
            | ("PUT", "/facilities/{id}/pricing-settings")
            | (
                "POST",
                "/facilities/{id}/recommendation-runs/{run_id}/decisions"
            )
            | ("POST", "/facilities/{id}/upload")
            | ("POST", "/facilities/{id}/rent-roll/confirm")
            | ("PUT", "/facilities/{id}/rent-roll/settings")
    );
    needs(if operate { O } else { A })
}

/// The operation of a dashboard route under `/app`.
pub fn page(method: &Method, route: &str) -> Operation {
    use Permission::{Administer as A, Operate as O};
    let path = route.strip_prefix("/app").unwrap_or(route);
    if is_read(method) {
        let admin_only = ["/keys", "/data-sources", "/webhooks", "/team", "/audit"]
            .iter()
            .any(|p| path.starts_with(p));
        return needs(if admin_only { A } else { Permission::Read });
    }
    let operate = matches!(
        path,
        "/facilities/{id}/run"
            | "/facilities/{id}/ecri-batches"
            | "/facilities/{id}/ecri-run"
            | "/facilities/{id}/ecri-batches/{bid}/edit"
            | "/facilities/{id}/ecri-batches/{bid}/approve"
            | "/facilities/{id}/ecri-batches/{bid}/cancel"
            | "/facilities/{id}/decisions"
            | "/facilities/{id}/competitor-rates"
            | "/facilities/{id}/settings"
            | "/facilities/{id}/rent-roll/confirm"
            | "/upload"
    );
    // Anyone signed in may leave (`/logout` is outside `/app`, behind the same session check).
    let own_session = matches!(path, "/logout-everywhere" | "/logout");
    needs(if own_session {
        Permission::Read
    } else if operate {
        O
    } else {
        A
    })
}

/// Who acts in a request (the key's or the signed-in user's actor, role and scope) and from
/// which address: the audit log's "who" of every use case a route or page calls.
pub struct Acting {
    pub access: Access,
    pub who: Who,
}

impl FromRequestParts<AppState> for Acting {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        // A key's request came through the API; a signed-in session's through the dashboard.
        let (company, access, via) = parts
            .extensions
            .get::<Principal>()
            .map(|p| (p.company_id, p.access(), Via::Api))
            .or_else(|| {
                parts
                    .extensions
                    .get::<Session>()
                    .map(|s| (s.company_id, s.access(), Via::Dashboard))
            })
            .ok_or_else(|| ApiError::Unauthorized("missing API key".to_owned()))?;
        let Ok(peer) = PeerAddr::from_request_parts(parts, state).await;
        let who = Who {
            company,
            actor: access.actor.clone(),
            role: Some(access.role),
            via,
            client_addr: Some(client(state, &parts.headers, &peer)),
        };
        Ok(Self { access, who })
    }
}

/// The client's address of a request, as the audit log and the per-client limits read it.
pub fn client(state: &AppState, headers: &axum::http::HeaderMap, peer: &PeerAddr) -> String {
    client_address(headers, peer.0, state.config.trusted_proxies)
}

/// Where a request went: its route and its path's ids.
pub(crate) struct Call {
    pub(crate) route: String,
    params: Vec<(String, String)>,
}

impl Call {
    /// The facility the route's path names (`.../facilities/{id}/...`), when its id is one.
    fn facility(&self) -> Option<Uuid> {
        if !self.route.contains("/facilities/{id}") {
            return None;
        }
        self.params
            .iter()
            .find(|(k, _)| k == "id")
            .and_then(|(_, v)| Uuid::parse_str(v).ok())
    }

    /// The facility of the path when it is outside the actor's scope: such a facility is
    /// answered exactly as another company's (404).
    pub(crate) fn outside(&self, access: &Access) -> Option<Uuid> {
        self.facility().filter(|id| !access.scope.sees(*id))
    }
}

pub(crate) async fn call_of(state: &AppState, req: Request) -> (Request, Call) {
    let (mut parts, body) = req.into_parts();
    let route = parts
        .extensions
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let params = RawPathParams::from_request_parts(&mut parts, state)
        .await
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    (Request::from_parts(parts, body), Call { route, params })
}

pub(crate) fn refusal(access: &Access, op: Operation) -> String {
    format!(
        "your role ({}) may not do this: it needs {}",
        access.role,
        op.permission.needs()
    )
}

/// Every keyed `/api/v1` request: the key's role must allow the route (403 otherwise, before
/// anything is read or written), and a facility outside its scope is answered as another
/// company's (404).
pub async fn authorize_api(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(principal) = req.extensions().get::<Principal>().cloned() else {
        return ApiError::Unauthorized("missing API key".to_owned()).into_response();
    };
    let method = req.method().clone();
    let (req, call) = call_of(&state, req).await;
    let op = api(&method, &call.route);
    let access = principal.access();
    if !access.role.allows(op.permission) {
        return ApiError::Forbidden(refusal(&access, op)).into_response();
    }
    if let Some(id) = call.outside(&access) {
        return ApiError::NotFound(format!("no facility with id {id}")).into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_need_any_role_but_the_account_s_own_and_unlisted_writes_need_an_admin() {
        use Permission::*;
        // Built here so the document test, which reads the source for routes, skips it.
        let unlisted = ["/api", "/v1/unlisted"].concat();
        let cases = [
            (api(&Method::GET, "/api/v1/facilities"), Read),
            (api(&Method::GET, "/api/v1/api-keys"), Administer),
            (api(&Method::GET, "/api/v1/audit-log"), Administer),
            (
                api(&Method::POST, "/api/v1/facilities/{id}/ecri-batches"),
                Operate,
            ),
            (api(&Method::POST, &unlisted), Administer),
            (page(&Method::GET, "/app/keys"), Administer),
            (
                page(&Method::POST, "/app/facilities/{id}/decisions"),
                Operate,
            ),
            (page(&Method::POST, "/app/new-form"), Administer),
            (page(&Method::POST, "/logout"), Read),
            (page(&Method::POST, "/app/logout-everywhere"), Read),
        ];
        for (i, (op, needs)) in cases.into_iter().enumerate() {
            assert_eq!(op.permission, needs, "case {i}");
        }
    }
}

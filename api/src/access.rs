//! Who may call what, and the audit record of every change: one table of operations for the
//! `/api/v1` routes and one for the dashboard's, each naming the permission a route needs and
//! the action a change is recorded under. Both tables use the same action names, so a key
//! revoked through the API and one revoked on the Keys page read the same in the audit log.
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
use jobs::audit::{By, Change};
use jobs::tenancy::Principal;
use jobs::web_sessions::Session;
use uuid::Uuid;

/// What a route does, for the role check and the audit log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The audit log's action (`noun.verb`); empty for a read.
    pub action: &'static str,
    pub permission: Permission,
    /// The kind of thing the route's last path id names, for the audit log's target.
    pub target: Option<&'static str>,
    /// The use case records its own entry (with values the route cannot see): the middleware
    /// does not.
    pub self_recorded: bool,
}

const fn read(permission: Permission) -> Operation {
    Operation {
        action: "",
        permission,
        target: None,
        self_recorded: false,
    }
}

const fn write(
    action: &'static str,
    permission: Permission,
    target: Option<&'static str>,
) -> Operation {
    Operation {
        action,
        permission,
        target,
        self_recorded: false,
    }
}

const fn recorded(action: &'static str, permission: Permission) -> Operation {
    Operation {
        action,
        permission,
        target: None,
        self_recorded: true,
    }
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
        return read(if admin_only { A } else { Permission::Read });
    }
    let f = Some("facility");
    match (method.as_str(), path) {
        ("POST", "/sync") => write("sync.push", O, None),
        ("PATCH", "/company") => write("company.update", A, None),
        ("POST", "/api-keys") => write("api_key.create", A, None),
        ("DELETE", "/api-keys/{id}") => write("api_key.revoke", A, Some("api_key")),
        ("POST", "/data-sources") => write("data_source.create", A, None),
        ("POST", "/data-sources/test") => write("data_source.test", A, None),
        ("PATCH", "/data-sources/{id}") => write("data_source.update", A, Some("data_source")),
        ("DELETE", "/data-sources/{id}") => write("data_source.delete", A, Some("data_source")),
        ("POST", "/data-sources/{id}/pull") => write("data_source.pull", A, Some("data_source")),
        ("POST", "/facilities") => write("facility.create", A, None),
        ("PUT", "/facilities/{id}") => write("facility.update", A, f),
        ("DELETE", "/facilities/{id}") => write("facility.delete", A, f),
        ("POST", "/facilities/{id}/competitor-rates") => write("competitor_rate.add", O, f),
        ("POST", "/facilities/{id}/ecri-batches") => write("ecri_batch.create", O, f),
        ("PATCH", "/facilities/{id}/ecri-batches/{batch_id}") => {
            write("ecri_batch.edit", O, Some("ecri_batch"))
        }
        ("POST", "/facilities/{id}/ecri-batches/{batch_id}/approve") => {
            write("ecri_batch.approve", O, Some("ecri_batch"))
        }
        ("POST", "/facilities/{id}/ecri-batches/{batch_id}/cancel") => {
            write("ecri_batch.cancel", O, Some("ecri_batch"))
        }
        ("PUT", "/facilities/{id}/ecri-settings") => write("ecri_settings.update", O, f),
        ("PUT", "/facilities/{id}/pricing-settings") => write("pricing_settings.update", O, f),
        ("POST", "/facilities/{id}/recommendation-runs/{run_id}/decisions") => {
            write("rate_decision.record", O, Some("recommendation_run"))
        }
        ("POST", "/facilities/{id}/upload") => write("upload.create", O, f),
        ("POST", "/webhooks") => write("webhook.create", A, None),
        ("DELETE", "/webhooks/{id}") => write("webhook.delete", A, Some("webhook")),
        ("POST", "/webhooks/{id}/test") => write("webhook.test", A, Some("webhook")),
        ("POST", "/team/invitations") => recorded("invitation.create", A),
        ("DELETE", "/team/invitations/{id}") => recorded("invitation.revoke", A),
        ("PATCH", "/team/members/{id}") => recorded("member.update", A),
        ("DELETE", "/team/members/{id}") => recorded("member.remove", A),
        ("PUT", "/audit-log/settings") => recorded("audit_settings.update", A),
        _ => write("", A, None),
    }
}

/// The operation of a dashboard route under `/app`.
pub fn page(method: &Method, route: &str) -> Operation {
    use Permission::{Administer as A, Operate as O};
    let path = route.strip_prefix("/app").unwrap_or(route);
    if is_read(method) {
        let admin_only = ["/keys", "/data-sources", "/webhooks", "/team", "/audit"]
            .iter()
            .any(|p| path.starts_with(p));
        return read(if admin_only { A } else { Permission::Read });
    }
    let f = Some("facility");
    match path {
        "/company" => write("company.update", A, None),
        "/logout-everywhere" => write("session.end_all", Permission::Read, None),
        // Outside `/app`, but behind the same session check: anyone signed in may leave.
        "/logout" => write("session.end", Permission::Read, None),
        "/keys" => write("api_key.create", A, None),
        "/keys/{id}/revoke" => write("api_key.revoke", A, Some("api_key")),
        "/facilities" => write("facility.create", A, None),
        "/facilities/{id}" => write("facility.update", A, f),
        "/facilities/{id}/delete" => write("facility.delete", A, f),
        "/facilities/{id}/run" => write("pricing_run.start", O, f),
        "/facilities/{id}/ecri-batches" => write("ecri_batch.create", O, f),
        "/facilities/{id}/ecri-batches/{bid}/edit" => {
            write("ecri_batch.edit", O, Some("ecri_batch"))
        }
        "/facilities/{id}/ecri-batches/{bid}/approve" => {
            write("ecri_batch.approve", O, Some("ecri_batch"))
        }
        "/facilities/{id}/ecri-batches/{bid}/cancel" => {
            write("ecri_batch.cancel", O, Some("ecri_batch"))
        }
        "/facilities/{id}/decisions" => write("rate_decision.record", O, f),
        "/facilities/{id}/competitor-rates" => write("competitor_rate.add", O, f),
        "/facilities/{id}/settings" => write("pricing_settings.update", O, f),
        "/upload" => write("upload.create", O, None),
        "/webhooks" => write("webhook.create", A, None),
        "/webhooks/{id}/test" => write("webhook.test", A, Some("webhook")),
        "/webhooks/{id}/delete" => write("webhook.delete", A, Some("webhook")),
        "/data-sources" => write("data_source.create", A, None),
        "/data-sources/{id}" => write("data_source.update", A, Some("data_source")),
        "/data-sources/{id}/backfill" => write("data_source.pull", A, Some("data_source")),
        "/data-sources/{id}/pull" => write("data_source.pull", A, Some("data_source")),
        "/data-sources/{id}/delete" => write("data_source.delete", A, Some("data_source")),
        "/team/invitations" => recorded("invitation.create", A),
        "/team/invitations/{id}/revoke" => recorded("invitation.revoke", A),
        "/team/members/{id}" => recorded("member.update", A),
        "/team/members/{id}/remove" => recorded("member.remove", A),
        "/audit/settings" => recorded("audit_settings.update", A),
        _ => write("", A, None),
    }
}

/// What a handler adds to its answer for the audit log: the id of what it created, the
/// facility, a setting's value before and after.
#[derive(Clone, Debug, Default)]
pub struct Audited {
    pub target: Option<(&'static str, String)>,
    pub facility_id: Option<Uuid>,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
}

impl Audited {
    pub fn created(kind: &'static str, id: impl ToString) -> Self {
        Self {
            target: Some((kind, id.to_string())),
            ..Self::default()
        }
    }

    pub fn setting(before: impl serde::Serialize, after: impl serde::Serialize) -> Self {
        Self {
            before: serde_json::to_value(before).ok(),
            after: serde_json::to_value(after).ok(),
            ..Self::default()
        }
    }
}

/// Who acts in a request (the key's or the signed-in user's actor, role and scope) and from
/// which address: the audit log's "who" for a use case that records its own entry.
pub struct Acting {
    pub access: Access,
    pub addr: String,
}

impl Acting {
    pub fn by(&self) -> By<'_> {
        By {
            actor: &self.access.actor,
            role: Some(self.access.role),
            client_addr: Some(&self.addr),
        }
    }
}

impl FromRequestParts<AppState> for Acting {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let access = parts
            .extensions
            .get::<Principal>()
            .map(Principal::access)
            .or_else(|| parts.extensions.get::<Session>().map(Session::access))
            .ok_or_else(|| ApiError::Unauthorized("missing API key".to_owned()))?;
        let Ok(peer) = PeerAddr::from_request_parts(parts, state).await;
        Ok(Self {
            access,
            addr: client(state, &parts.headers, &peer),
        })
    }
}

/// The client's address of a request, as the audit log and the per-client limits read it.
pub fn client(state: &AppState, headers: &axum::http::HeaderMap, peer: &PeerAddr) -> String {
    client_address(headers, peer.0, state.config.trusted_proxies)
}

/// Where a request went: its route, its path's ids and, for a write (which the audit log may
/// record), the client's address.
struct Call {
    route: String,
    params: Vec<(String, String)>,
    addr: Option<String>,
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
    fn outside(&self, access: &Access) -> Option<Uuid> {
        self.facility().filter(|id| !access.scope.sees(*id))
    }
}

async fn call_of(state: &AppState, req: Request) -> (Request, Call) {
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
    let addr = if is_read(&parts.method) {
        None
    } else {
        let Ok(peer) = PeerAddr::from_request_parts(&mut parts, state).await;
        Some(client(state, &parts.headers, &peer))
    };
    (
        Request::from_parts(parts, body),
        Call {
            route,
            params,
            addr,
        },
    )
}

/// Records the change a successful write made, from its operation, its path and what the
/// handler added. A failure to record is logged: the change itself is already committed.
async fn record(
    state: &AppState,
    company: domain::ids::CompanyId,
    access: &Access,
    op: Operation,
    call: &Call,
    audited: Option<Audited>,
) {
    let (route, params) = (call.route.as_str(), &call.params);
    let audited = audited.unwrap_or_default();
    let facility = call.facility().or(audited.facility_id);
    let target = audited
        .target
        .map(|(kind, id)| format!("{kind}:{id}"))
        .or_else(|| {
            let kind = op.target?;
            params.last().map(|(_, v)| format!("{kind}:{v}"))
        });
    let action = if op.action.is_empty() {
        route.to_owned()
    } else {
        op.action.to_owned()
    };
    let change = Change {
        action,
        target,
        facility_id: facility,
        before: audited.before,
        after: audited.after,
    };
    let by = By {
        actor: &access.actor,
        role: Some(access.role),
        client_addr: call.addr.as_deref(),
    };
    if let Err(e) = jobs::audit::record_now(&state.db, company, &by, &change).await {
        tracing::error!(error = %e, action = %change.action, "audit log entry not recorded");
    }
}

fn refusal(access: &Access, op: Operation) -> String {
    format!(
        "your role ({}) may not do this: it needs {}",
        access.role,
        op.permission.needs()
    )
}

/// Every keyed `/api/v1` request: the key's role must allow the route (403 otherwise, before
/// anything is read or written), and a write that succeeded is recorded in the audit log.
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
    let mut response = next.run(req).await;
    if !is_read(&method) && response.status().is_success() && !op.self_recorded {
        let audited = response.extensions_mut().remove::<Audited>();
        record(&state, principal.company_id, &access, op, &call, audited).await;
    }
    response
}

/// Every `/app` request: the user's role must allow the page or form (a 403 page otherwise),
/// and a form that succeeded (a page or a redirect) is recorded in the audit log.
pub async fn authorize_page(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(session) = req.extensions().get::<Session>().cloned() else {
        return axum::response::Redirect::to("/login").into_response();
    };
    let method = req.method().clone();
    let (req, call) = call_of(&state, req).await;
    let op = page(&method, &call.route);
    let access = session.access();
    if !access.role.allows(op.permission) {
        return crate::dashboard::page::error_page(
            axum::http::StatusCode::FORBIDDEN,
            &refusal(&access, op),
        );
    }
    if call.outside(&access).is_some() {
        return crate::dashboard::page::PageError(ApiError::NotFound(String::new()))
            .into_response();
    }
    let mut response = next.run(req).await;
    let done = response.status().is_success() || response.status().is_redirection();
    if !is_read(&method) && done && !op.self_recorded {
        let audited = response.extensions_mut().remove::<Audited>();
        record(&state, session.company_id, &access, op, &call, audited).await;
    }
    response
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

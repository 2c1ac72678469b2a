//! The OpenAPI 3.1 document of `/api/v1`, built from the code: every route is registered with
//! `utoipa_axum::routes!`, which adds the handler to the router and its `#[utoipa::path]` to the
//! document in one step, so no route can be served undocumented. The error answers every
//! operation shares (key, rate limit, subscription, body, path id) are added here by rule, from
//! the same facts the middleware and extractors act on, rather than repeated on each handler.

use crate::error::ApiError;
use axum::http::{header, Method};
use axum::response::{IntoResponse, Response};
use std::sync::LazyLock;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::response::{Response as OaResponse, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref};
use utoipa::{Modify, ToSchema};

/// The error envelope of every 4xx and 5xx answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What went wrong; a validation message starts with the JSON path or the parameter name.
    pub error: String,
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Self-storage pricing service",
        description = "Pricing and analytics for self-storage operators. Every call but the \
            public ones needs `Authorization: Bearer <API key>`. Errors are `{\"error\": \"...\"}` \
            with the status listed on each operation. Rate limits: 120 requests a minute per \
            company, 60 for `POST /api/v1/sync`; every authenticated answer carries \
            `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.",
        license(name = "Proprietary"),
    ),
    // Types that only query parameters use: `IntoParams` refers to them without adding them.
    components(schemas(ErrorBody, crate::requests::DeliveryStatus, domain::values::UnitSize, domain::upload::UploadKind)),
    modifiers(&BearerAuth),
    tags(
        (name = "sync", description = "The nightly push of a facility's dated snapshot."),
        (name = "facilities", description = "Facilities of the key's company."),
        (name = "pricing", description = "The pricing engine: recommendations, their history, settings and a facility's daily history."),
        (name = "competitor-rates", description = "Competitor rates of a facility."),
        (name = "uploads", description = "Unit rates or competitor rates as CSV or JSON."),
        (name = "analytics", description = "Read-only analytics of the company."),
        (name = "ecri", description = "ECRI batches: existing tenants' rent increases drafted from the engine's suggestions, edited, approved and mailed, and what they earned."),
        (name = "webhooks", description = "Signed webhook subscriptions and their delivery log."),
        (name = "data-sources", description = "Connected CRMs pulled on a schedule."),
        (name = "api-keys", description = "API keys of the company, each with a role."),
        (name = "team", description = "The company's members, their roles, and invitations."),
        (name = "audit", description = "The audit log: every change by a person or a key."),
        (name = "account", description = "Company status and jobs."),
        (name = "auth", description = "Public password reset."),
        (name = "meta", description = "This document."),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, doc: &mut OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("spk_ + 43 base64url characters")
                    .description(Some(
                        "An API key of the company, created in the dashboard or with `POST /api/v1/api-keys`.",
                    ))
                    .build(),
            ),
        );
        doc.security = Some(vec![SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The document's skeleton (info, security scheme, tags) that the routes are added to.
pub fn base() -> OpenApi {
    <ApiDoc as utoipa::OpenApi>::openapi()
}

/// Adds the answers that follow from where an operation sits rather than what it does.
pub fn finish(mut doc: OpenApi) -> OpenApi {
    for (path, item) in doc.paths.paths.iter_mut() {
        for (method, op) in [
            (Method::GET, item.get.as_mut()),
            (Method::POST, item.post.as_mut()),
            (Method::PUT, item.put.as_mut()),
            (Method::PATCH, item.patch.as_mut()),
            (Method::DELETE, item.delete.as_mut()),
        ] {
            if let Some(op) = op {
                qualify_operation_id(op);
                add_shared_errors(path, &method, op);
            }
        }
    }
    doc
}

/// OpenAPI links from the answers that name a resource to the operations that take it, so a
/// client (and the fuzzer's stateful phase) can follow them: (path, method, status, link name,
/// target operation id, parameters as `(name, runtime expression)`).
type Link = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const LINKS: &[Link] = &[
    (
        "/api/v1/sync",
        "post",
        "200",
        "job",
        "account_job",
        &[("id", "$response.body#/job/id")],
    ),
    (
        "/api/v1/data-sources",
        "post",
        "201",
        "change",
        "data_sources_update",
        &[("id", "$response.body#/id")],
    ),
    (
        "/api/v1/data-sources",
        "post",
        "201",
        "pull",
        "data_sources_pull",
        &[("id", "$response.body#/id")],
    ),
    (
        "/api/v1/data-sources",
        "post",
        "201",
        "remove",
        "data_sources_remove",
        &[("id", "$response.body#/id")],
    ),
    (
        "/api/v1/data-sources/{id}/pull",
        "post",
        "202",
        "job",
        "account_job",
        &[("id", "$response.body#/job/id")],
    ),
    (
        "/api/v1/webhooks/{id}/test",
        "post",
        "202",
        "job",
        "account_job",
        &[("id", "$response.body#/job/id")],
    ),
    (
        "/api/v1/facilities/{id}/recommendations",
        "get",
        "200",
        "run",
        "pricing_one_run",
        &[
            ("id", "$request.path.id"),
            ("run_id", "$response.body#/recommendation_id"),
        ],
    ),
    (
        "/api/v1/facilities/{id}/recommendations",
        "get",
        "200",
        "decide",
        "pricing_decide",
        &[
            ("id", "$request.path.id"),
            ("run_id", "$response.body#/recommendation_id"),
        ],
    ),
    (
        "/api/v1/facilities/{id}/ecri-batches",
        "post",
        "201",
        "read",
        "ecri_one",
        &[
            ("id", "$request.path.id"),
            ("batch_id", "$response.body#/id"),
        ],
    ),
    (
        "/api/v1/facilities/{id}/ecri-batches",
        "post",
        "201",
        "edit",
        "ecri_edit",
        &[
            ("id", "$request.path.id"),
            ("batch_id", "$response.body#/id"),
        ],
    ),
    (
        "/api/v1/facilities/{id}/ecri-batches",
        "post",
        "201",
        "approve",
        "ecri_approve",
        &[
            ("id", "$request.path.id"),
            ("batch_id", "$response.body#/id"),
        ],
    ),
    (
        "/api/v1/facilities/{id}/ecri-batches",
        "post",
        "201",
        "cancel",
        "ecri_cancel",
        &[
            ("id", "$request.path.id"),
            ("batch_id", "$response.body#/id"),
        ],
    ),
    (
        "/api/v1/facilities/{id}/ecri-batches",
        "post",
        "201",
        "letters",
        "ecri_letters",
        &[
            ("id", "$request.path.id"),
            ("batch_id", "$response.body#/id"),
        ],
    ),
    (
        "/api/v1/team/invitations",
        "post",
        "201",
        "revoke",
        "team_revoke_invitation",
        &[("id", "$response.body#/id")],
    ),
    (
        "/api/v1/team",
        "get",
        "200",
        "change",
        "team_update_member",
        &[("id", "$response.body#/members/0/id")],
    ),
];

/// Adds [`LINKS`] to the written document. (utoipa 5 writes a link's fields in snake case,
/// `operation_id`, where OpenAPI has `operationId`; so they are added here, to the JSON.)
fn add_links(doc: &mut serde_json::Value) {
    for (path, method, status, name, target, params) in LINKS {
        let pointer = format!(
            "/paths/{}/{method}/responses/{status}",
            path.replace('~', "~0").replace('/', "~1")
        );
        let Some(response) = doc.pointer_mut(&pointer).and_then(|r| r.as_object_mut()) else {
            continue;
        };
        let parameters: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).into()))
            .collect();
        let links = response
            .entry("links")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(links) = links.as_object_mut() {
            links.insert(
                (*name).to_owned(),
                serde_json::json!({ "operationId": target, "parameters": parameters }),
            );
        }
    }
}

/// Handlers of different groups share names (`list`, `create`): the operation id is the
/// handler's name prefixed with its tag, which makes it unique (`facilities_list`).
fn qualify_operation_id(op: &mut Operation) {
    let tag = op
        .tags
        .as_ref()
        .and_then(|t| t.first())
        .map(|t| t.replace('-', "_"));
    if let (Some(tag), Some(id)) = (tag, op.operation_id.as_mut()) {
        *id = format!("{tag}_{id}");
    }
}

fn add_shared_errors(path: &str, method: &Method, op: &mut Operation) {
    // `security(())` on a handler marks a public operation; the rest inherit the bearer key.
    let public = op
        .security
        .as_ref()
        .is_some_and(|s| s.iter().all(|r| r == &SecurityRequirement::default()));
    let params = op.parameters.as_deref().unwrap_or_default();
    let has_path_param = params
        .iter()
        .any(|p| matches!(p.parameter_in, ParameterIn::Path));
    let has_query = params
        .iter()
        .any(|p| matches!(p.parameter_in, ParameterIn::Query));
    let json_body = op
        .request_body
        .as_ref()
        .is_some_and(|b| b.content.contains_key("application/json"));
    let mut add = |status: &str, text: &str| {
        op.responses
            .responses
            .entry(status.to_owned())
            .or_insert_with(|| error_response(status, text).into());
    };
    if !public {
        add("401", "Missing, malformed, unknown or revoked API key.");
        if !crate::auth::works_without_access(method, path) {
            add(
                "402",
                "The company's trial has ended or its subscription is cancelled.",
            );
        }
        add(
            "429",
            "Rate limit exceeded (per company, rolling 60 seconds).",
        );
        let needs = crate::access::api(method, path).permission;
        if needs > jobs::access::Permission::Read {
            add(
                "403",
                &format!(
                    "The key's role does not allow this: it needs {}.",
                    needs.needs()
                ),
            );
        }
    }
    if has_path_param {
        add(
            "404",
            "No such resource in the key's company (another company's id and a malformed id alike).",
        );
    }
    if json_body {
        add("413", "The body is larger than 1 MiB.");
        add("415", "Content-Type is not application/json.");
    }
    if json_body || has_query {
        add(
            "422",
            "Invalid input; the message names the field or parameter.",
        );
    }
    add(
        "503",
        "The database is unreachable for the moment; retry later.",
    );
}

/// An error answer with the envelope, and `Retry-After` on 429.
pub fn error_response(status: &str, description: &str) -> OaResponse {
    let mut response = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(ErrorBody::name())))
            .build(),
    );
    if status == "429" {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(1)),
                )
                .description(Some("Seconds until a request will pass."))
                .build(),
        );
    }
    response.build()
}

/// The document as served, written once per process.
static DOCUMENT: LazyLock<Result<String, String>> = LazyLock::new(|| {
    let mut doc = serde_json::to_value(crate::routes::document()).map_err(|e| e.to_string())?;
    add_links(&mut doc);
    serde_json::to_string(&doc).map_err(|e| e.to_string())
});

/// The document of every `/api/v1` operation (this one included).
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "meta",
    security(()),
    responses((status = 200, description = "This OpenAPI 3.1 document.", content_type = "application/json", body = Object))
)]
pub async fn openapi_json() -> Response {
    match &*DOCUMENT {
        Ok(json) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "public, max-age=300"),
            ],
            json.clone(),
        )
            .into_response(),
        Err(e) => ApiError::Internal(anyhow::anyhow!("the OpenAPI document: {e}")).into_response(),
    }
}

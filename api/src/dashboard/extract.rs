//! The extractors of the pages: a form body and a query string, parsed like the API's (the
//! field named in the message) but refused with the page's error view instead of the API's JSON
//! envelope, and with every field held to the API's text rule: no control characters and no
//! invisible text-direction or formatting characters (`domain::values::is_forbidden_in_text`).
//! A refused form writes nothing: the handler is never called.

use super::page::PageError;
use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts, StatusCode};
use serde::de::DeserializeOwned;

/// Every field of an `application/x-www-form-urlencoded` body, checked, then parsed into `T`.
pub struct Form<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Form<T> {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_form = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| {
                m.trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            });
        if !is_form {
            return Err(ApiError::UnsupportedMediaType(
                "This form must be sent as a web form (application/x-www-form-urlencoded)."
                    .to_owned(),
            )
            .into());
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            PageError(if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge("The form is larger than the service takes.".to_owned())
            } else {
                ApiError::Invalid("The form could not be read.".to_owned())
            })
        })?;
        parse(&bytes).map(Form)
    }
}

/// The query string, checked, then parsed into `T`.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parse(parts.uri.query().unwrap_or_default().as_bytes()).map(Query)
    }
}

/// Checks every value of an url-encoded text, then parses it into `T`, naming the first bad
/// field.
fn parse<T: DeserializeOwned>(encoded: &[u8]) -> Result<T, PageError> {
    for (name, value) in form_urlencoded::parse(encoded) {
        if value.chars().any(domain::values::is_forbidden_in_text) {
            return Err(ApiError::Invalid(format!(
                "{}: must not contain control characters or invisible text-direction or formatting characters.",
                shown_name(&name)
            ))
            .into());
        }
    }
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(encoded));
    serde_path_to_error::deserialize(de).map_err(|e| {
        ApiError::Invalid(format!(
            "{}: {}",
            shown_name(&e.path().to_string()),
            e.inner()
        ))
        .into()
    })
}

/// A field's name as the page may show it (a name is chosen by whoever sent the form).
fn shown_name(name: &str) -> String {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(40)
        .collect();
    if name.is_empty() {
        "a field".to_owned()
    } else {
        name
    }
}

//! Extractors whose rejections go through the error envelope: JSON bodies (content type, size,
//! parse errors with the field path), query strings and path ids.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts, StatusCode};
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// Largest JSON body accepted (uploads have their own, larger limit).
pub const JSON_BODY_LIMIT: usize = 1024 * 1024;

/// Largest body of `POST /api/v1/sync`: a snapshot with a rent roll of 10,000 tenants (about
/// 150 bytes each) fits.
pub const SYNC_BODY_LIMIT: usize = 4 * 1024 * 1024;

fn is_json(parts_headers: &axum::http::HeaderMap) -> bool {
    let Some(ct) = parts_headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// The raw bytes of a JSON body, after the content-type and size checks.
pub struct JsonBytes(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for JsonBytes {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(ApiError::UnsupportedMediaType(
                "Content-Type must be application/json".to_owned(),
            ));
        }
        // The sync reads its snapshot forgivingly, with rules of its own (an unreadable item
        // is left out and named in `warnings`; a raw body is checked before it is kept).
        let sync = req.uri().path() == "/api/v1/sync";
        let limit = if sync {
            SYNC_BODY_LIMIT
        } else {
            JSON_BODY_LIMIT
        };
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge(format!("body is larger than {limit} bytes"))
            } else {
                ApiError::Invalid(format!(
                    "body: could not be read ({})",
                    rejection.body_text()
                ))
            }
        })?;
        // Every other body holds every string to the API's text rule, whatever its field.
        if !sync {
            domain::validation::require_plain_text(&bytes)?;
        }
        Ok(Self(bytes))
    }
}

/// A body that must be one JSON object, kept as a value (settings overrides, checked by their
/// own use case).
pub fn json_object(bytes: &[u8]) -> Result<serde_json::Value, ApiError> {
    jobs::error::require_object(bytes)?;
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::Invalid(format!("body: is not valid JSON ({e})")))
}

/// Parses a JSON object with the path of the first offending field in the error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    jobs::error::require_object(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value =
        serde_path_to_error::deserialize(&mut de).map_err(jobs::ValidationError::from_serde)?;
    de.end().map_err(|e| {
        ApiError::Invalid(format!(
            "body: trailing characters after the JSON value ({e})"
        ))
    })?;
    Ok(value)
}

/// A JSON body parsed into `T`.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let JsonBytes(bytes) = JsonBytes::from_request(req, state).await?;
        parse_json(&bytes).map(Json)
    }
}

/// A query string parsed into `T`; a bad parameter is a 422 naming it.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(Query)
            .map_err(|e| ApiError::Invalid(format!("query parameter {}: {}", e.path(), e.inner())))
    }
}

/// Parses an id from a path segment; a malformed id names nothing, so it is a 404 like an
/// unknown one. The id's type (a plain `Uuid` or a typed id such as `FacilityId`) is the
/// caller's.
pub fn path_id<T: From<Uuid>>(raw: &str, what: &str) -> Result<T, ApiError> {
    Uuid::parse_str(raw)
        .map(T::from)
        .map_err(|_| ApiError::NotFound(format!("no {what} with id {raw}")))
}

/// The peer address, when the server was started with connection info (it always is by
/// `server::serve`; a router used without it gets `None` instead of a failure).
pub struct PeerAddr(pub Option<std::net::SocketAddr>);

impl<S: Send + Sync> FromRequestParts<S> for PeerAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|c| c.0),
        ))
    }
}

/// The client's address for per-client limits: the peer, or, behind `TRUSTED_PROXIES` proxies
/// that each append the address they received from to `X-Forwarded-For`, the entry that many
/// places from the end. Entries further left are written by the client and are not trusted.
pub fn client_address(
    headers: &axum::http::HeaderMap,
    peer: Option<std::net::SocketAddr>,
    trusted_proxies: usize,
) -> String {
    let peer = peer.map(|p| p.ip().to_string());
    if trusted_proxies == 0 {
        return peer.unwrap_or_else(|| "unknown".to_owned());
    }
    // Several X-Forwarded-For lines are one list, in order.
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    hops.len()
        .checked_sub(trusted_proxies)
        .and_then(|i| hops.get(i))
        .and_then(|h| h.parse::<std::net::IpAddr>().ok())
        .map(|ip| ip.to_string())
        // Fewer hops than proxies: the request did not come through all of them.
        .or(peer)
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The optional `facility_id` query parameter of the analytics reports (the API's and the
/// dashboard's pages alike).
pub fn facility_id_param(raw: Option<&str>) -> Result<Option<domain::ids::FacilityId>, ApiError> {
    raw.map(|s| {
        s.trim().parse().map_err(|_| {
            let shown: String = s.chars().take(60).collect();
            ApiError::Invalid(format!(
                "query parameter facility_id: must be a facility id (UUID), got '{shown}'"
            ))
        })
    })
    .transpose()
}

/// The facility's and the batch's ids of a batch's path (a malformed one is a 404).
pub(crate) fn batch_ids(
    id: &str,
    bid: &str,
) -> Result<(domain::ids::FacilityId, uuid::Uuid), ApiError> {
    Ok((path_id(id, "facility")?, path_id(bid, "ECRI batch")?))
}

#[cfg(test)]
mod client_address_tests {
    use super::client_address;
    use axum::http::HeaderMap;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_trusted_hops_are_believed() {
        let peer = Some("10.0.0.9:5000".parse().unwrap());
        let spoofed = headers(&["6.6.6.6, 1.2.3.4"]);
        assert_eq!(client_address(&spoofed, peer, 0), "10.0.0.9");
        assert_eq!(client_address(&spoofed, peer, 1), "1.2.3.4");
        assert_eq!(client_address(&spoofed, peer, 2), "6.6.6.6");
        assert_eq!(client_address(&spoofed, peer, 3), "10.0.0.9");
        assert_eq!(
            client_address(&headers(&["6.6.6.6", "1.2.3.4"]), peer, 1),
            "1.2.3.4"
        );
        assert_eq!(
            client_address(&headers(&["not-an-ip"]), peer, 1),
            "10.0.0.9"
        );
        assert_eq!(client_address(&HeaderMap::new(), None, 1), "unknown");
    }
}

//! The one error type of the HTTP edge. It owns the `{"error": "..."}` envelope and maps each
//! kind of failure to its status. A 5xx is logged once with its cause chain; the client sees a
//! generic message.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    PaymentRequired(String),
    /// The role of the key or user does not allow the request.
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    Conflict(String),
    /// The request met another writing the same rows at the same time and was cancelled
    /// whole (a deadlock or serialization failure): nothing was written; send it again.
    #[error("{message}")]
    Contended {
        message: String,
        retry_after_secs: u64,
    },
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    #[error("{0}")]
    Invalid(String),
    #[error("rate limit exceeded: {limit} requests per minute; retry in {retry_after_secs} s")]
    RateLimited { limit: u32, retry_after_secs: u64 },
    /// A per-client limit of a public route (per hour, not the per-minute company budget).
    #[error("too many attempts from this address: at most {limit} an hour; retry in {retry_after_secs} s")]
    TooManyAttempts { limit: u32, retry_after_secs: u64 },
    /// Too many of one kind of work at once (connection tests).
    #[error("{message}")]
    Busy {
        message: String,
        retry_after_secs: u64,
    },
    #[error("service temporarily unavailable")]
    Unavailable(#[source] anyhow::Error),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::PaymentRequired(_) => StatusCode::PAYMENT_REQUIRED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) | Self::Contended { .. } => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited { .. } | Self::TooManyAttempts { .. } | Self::Busy { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<jobs::Error> for ApiError {
    fn from(e: jobs::Error) -> Self {
        match e {
            jobs::Error::Invalid(v) => Self::Invalid(v.to_string()),
            jobs::Error::NotFound(m) => Self::NotFound(m),
            jobs::Error::Conflict(m) => Self::Conflict(m),
            jobs::Error::Forbidden(m) => Self::Forbidden(m),
            jobs::Error::Internal(m) => Self::Internal(anyhow::anyhow!(m)),
            jobs::Error::Throttled {
                limit,
                retry_after_secs,
            } => Self::TooManyAttempts {
                limit,
                retry_after_secs,
            },
            jobs::Error::Busy {
                message,
                retry_after_secs,
            } => Self::Busy {
                message,
                retry_after_secs,
            },
            jobs::Error::Database(db) => {
                if is_foreign_key_violation(&db) {
                    // What the request writes under (a facility, say) was deleted by another
                    // request while this one ran: it is gone, as an unknown id would be.
                    tracing::warn!(error = %db, "a row referred to was deleted meanwhile");
                    Self::NotFound(
                        "what this request refers to was deleted while it ran".to_owned(),
                    )
                } else if jobs::error::is_lock_conflict(&db) {
                    tracing::warn!(error = %db, "a request was cancelled by a lock conflict");
                    Self::Contended {
                        message: "another request was changing the same data at the same time; \
                                  nothing was written, send the request again"
                            .to_owned(),
                        retry_after_secs: 1,
                    }
                } else if jobs::error::is_unavailable(&db) {
                    Self::Unavailable(db.into())
                } else if jobs::error::is_out_of_range(&db) {
                    tracing::warn!(error = %db, "a value out of the range the database stores");
                    Self::Invalid(
                        "a number or date in the request is outside the range the service stores"
                            .to_owned(),
                    )
                } else {
                    Self::Internal(db.into())
                }
            }
        }
    }
}

fn is_foreign_key_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_foreign_key_violation())
}

impl From<jobs::ValidationError> for ApiError {
    fn from(e: jobs::ValidationError) -> Self {
        Self::Invalid(e.to_string())
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        jobs::Error::Database(e).into()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            let cause = match &self {
                Self::Internal(e) | Self::Unavailable(e) => format!("{e:#}"),
                other => other.to_string(),
            };
            tracing::error!(status = status.as_u16(), cause, "request failed");
        }
        let mut response = (status, Json(json!({ "error": self.to_string() }))).into_response();
        if let Self::RateLimited {
            retry_after_secs, ..
        }
        | Self::TooManyAttempts {
            retry_after_secs, ..
        }
        | Self::Busy {
            retry_after_secs, ..
        }
        | Self::Contended {
            retry_after_secs, ..
        } = self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// An upload that was not read: its facility's refusal (404) or the database's as any other
/// use case's, and the upload's own (422, 413, 415).
pub fn upload_refused(e: jobs::upload::CollectError) -> ApiError {
    use jobs::upload::{CollectError, Fatal};
    match e {
        CollectError::Data(e) => e.into(),
        CollectError::Upload(Fatal::Invalid(m)) => ApiError::Invalid(m),
        CollectError::Upload(Fatal::TooLarge(m)) => ApiError::PayloadTooLarge(m),
        CollectError::Upload(Fatal::UnsupportedMediaType(m)) => ApiError::UnsupportedMediaType(m),
        CollectError::Upload(Fatal::Internal(m)) => ApiError::Internal(anyhow::anyhow!(m)),
    }
}

//! Errors of the data layer. The api maps each variant to one HTTP status.

pub use domain::validation::{require_depth, require_object, ValidationError, MAX_JSON_DEPTH};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The thing does not exist for this company (another company's rows are reported the same).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with existing data (a unique name, say).
    #[error("{0}")]
    Conflict(String),
    /// The actor's role does not allow this (an admin making an owner, say).
    #[error("{0}")]
    Forbidden(String),
    /// A per-client limit of a public use case (per hour): `limit` in the window, which ends in
    /// `retry_after_secs`.
    #[error("too many attempts from this address: at most {limit} an hour; retry in {retry_after_secs} s")]
    Throttled { limit: u32, retry_after_secs: u64 },
    /// Too many of one kind of work running at once (connection tests): try again in
    /// `retry_after_secs`.
    #[error("{message}")]
    Busy {
        message: String,
        retry_after_secs: u64,
    },
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// A failure of ours that no input explains (a hash that cannot be computed, a task that
    /// stopped): 500 at the edge, logged with its cause.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::NotFound(what.into())
    }
}

/// Maps a unique-constraint violation to a conflict with `message`; other errors pass through.
pub fn conflict_on_unique(e: sqlx::Error, message: impl FnOnce(&str) -> String) -> Error {
    if let sqlx::Error::Database(db) = &e {
        if db.is_unique_violation() {
            return Error::Conflict(message(db.constraint().unwrap_or_default()));
        }
    }
    Error::Database(e)
}

/// Whether a database error means the server is away or restarting rather than that the
/// request or the data is wrong: no connection could be had in time, the connection broke, or
/// the server ended the session (SQLSTATE class 08, `57P01` to `57P03` while it shuts down,
/// restarts or starts up, `53300` when it has no connection slot left). Such a request may
/// succeed when sent again; the api answers it with 503.
pub fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
        }),
        _ => false,
    }
}

/// PostgreSQL cancelled the statement's transaction to break a lock conflict: a deadlock
/// (SQLSTATE `40P01`) or a serialization failure (`40001`). Nothing of the transaction was
/// written and the same request sent again succeeds; the api answers 409 with `Retry-After`.
pub fn is_lock_conflict(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db)
        if db.code().is_some_and(|code| matches!(code.as_ref(), "40P01" | "40001")))
}

/// PostgreSQL refused a value it cannot hold (SQLSTATE `22003`, numeric value out of range, or
/// `22008`, datetime field overflow): a number or date from the input that parses but lies
/// outside what a column or `jsonb` stores, or a sum of inputs past a column's range. Nothing was
/// written (the statement failed, and its transaction with it); the input is at fault, so the
/// api answers 422, not 500.
pub fn is_out_of_range(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db)
        if db.code().is_some_and(|code| matches!(code.as_ref(), "22003" | "22008")))
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

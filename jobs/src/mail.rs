//! Outgoing mail: queued in PostgreSQL (`mail_outbox`) by the code that causes it, delivered by
//! the worker over SMTP, or into a folder as `.eml` files when no SMTP server is configured
//! (development).
//!
//! Bodies are sealed at rest (a reset mail carries a live token): AES-256-GCM under the master
//! key with the mail's id as associated data, opened only when the mail is sent, and blanked
//! once it is sent or has failed for good. Finished mail is purged after the retention period.

use crate::config::MasterKey;
use crate::error::Result;
use chrono::{Duration, Utc};
use lettre::message::Mailbox;
use lettre::{AsyncFileTransport, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use sqlx::{PgConnection, PgPool};
use std::path::PathBuf;
use uuid::Uuid;

/// Deliveries tried per mail before it is marked failed.
pub const MAX_ATTEMPTS: i32 = 8;

pub(crate) async fn queue(
    conn: &mut PgConnection,
    key: &MasterKey,
    to: &str,
    subject: &str,
    body: &str,
) -> Result<Uuid> {
    let id = Uuid::now_v7();
    let sealed = crate::crypto::seal(key, id.as_bytes(), body.as_bytes());
    sqlx::query!(
        "INSERT INTO mail_outbox (id, to_address, subject, body_sealed) VALUES ($1, $2, $3, $4)",
        id,
        to,
        subject,
        sealed
    )
    .execute(conn)
    .await?;
    Ok(id)
}

/// Text that someone outside the service chose (a company's name), made safe to show in a
/// mail body: in double quotes, on one line, at most 100 characters, and with what a mail
/// reader would turn into a link defused (`https://` reads `hxxps://`, a dot between letters
/// or digits `[.]`), so a name such as `URGENT: reset at https://evil.example/login` cannot
/// pass for the service's own words or links. Such text never goes into a subject.
pub(crate) fn quoted(text: &str) -> String {
    let mut chars: Vec<char> = text
        .chars()
        .map(|c| match c {
            '"' => '\'',
            c if c.is_whitespace() => ' ',
            c => c,
        })
        .filter(|c| !domain::values::is_forbidden_in_text(*c))
        .collect();
    if chars.len() > 100 {
        chars.truncate(99);
        chars.push('\u{2026}');
    }
    let alnum = |j: Option<usize>| {
        j.and_then(|j| chars.get(j))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..chars.len().min(i + 4)].iter().collect();
        if rest.eq_ignore_ascii_case("http") {
            // `http` becomes `hxxp`, keeping the letters' case.
            out.push(chars[i]);
            out.push(if chars[i + 1] == 'T' { 'X' } else { 'x' });
            out.push(if chars[i + 2] == 'T' { 'X' } else { 'x' });
            out.push(chars[i + 3]);
            i += 4;
            continue;
        }
        if chars[i] == '.' && alnum(i.checked_sub(1)) && alnum(Some(i + 1)) {
            out.push_str("[.]");
        } else {
            out.push(chars[i]);
        }
        i += 1;
    }
    format!("\"{}\"", out.trim())
}

#[derive(Clone)]
pub enum Transport {
    Smtp(AsyncSmtpTransport<Tokio1Executor>),
    Folder(PathBuf),
}

#[derive(Clone)]
pub struct Mailer {
    from: Mailbox,
    transport: Transport,
}

impl Mailer {
    /// From configuration: SMTP when `smtp_url` is set (`smtp://user:pass@host:587` uses
    /// STARTTLS, `smtps://` implicit TLS), otherwise `.eml` files in `folder`.
    pub fn new(smtp_url: Option<&str>, from: &str, folder: PathBuf) -> anyhow::Result<Self> {
        let from: Mailbox = from
            .parse()
            .map_err(|e| anyhow::anyhow!("MAIL_FROM is not a mailbox: {e}"))?;
        let transport = match smtp_url {
            Some(url) => Transport::Smtp(
                AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                    .map_err(|e| anyhow::anyhow!("SMTP_URL is not usable: {e}"))?
                    .timeout(Some(std::time::Duration::from_secs(20)))
                    .build(),
            ),
            None => Transport::Folder(folder),
        };
        Ok(Self { from, transport })
    }

    async fn send(&self, to: &str, subject: &str, body: &str) -> anyhow::Result<()> {
        let to: Mailbox = to.parse()?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .body(body.to_owned())?;
        match &self.transport {
            Transport::Smtp(t) => {
                t.send(message).await?;
            }
            Transport::Folder(dir) => {
                tokio::fs::create_dir_all(dir).await?;
                AsyncFileTransport::<Tokio1Executor>::new(dir)
                    .send(message)
                    .await?;
            }
        }
        Ok(())
    }
}

/// Delivers up to `batch` due mails; each is claimed with `SKIP LOCKED`, so any number of
/// workers can run this at once without sending a mail twice. Returns how many were sent.
pub async fn deliver_due(
    pool: &PgPool,
    mailer: &Mailer,
    key: &MasterKey,
    batch: i64,
) -> Result<usize> {
    let mut sent = 0;
    for _ in 0..batch {
        let mut tx = pool.begin().await?;
        let Some(mail) = sqlx::query!(
            "SELECT id, to_address, subject, body, body_sealed, attempts FROM mail_outbox
             WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now()
             ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED"
        )
        .fetch_optional(&mut *tx)
        .await?
        else {
            break;
        };
        let attempts = mail.attempts + 1;
        // Mail queued before bodies were sealed still has a plain body.
        let body = match (&mail.body_sealed, mail.body) {
            (Some(sealed), _) => crate::crypto::open(key, mail.id.as_bytes(), sealed)
                .map_err(|e| e.to_string())
                .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_owned())),
            (None, Some(plain)) => Ok(plain),
            (None, None) => Err("the mail has no body".to_owned()),
        };
        let outcome = match body {
            Ok(body) => mailer
                .send(&mail.to_address, &mail.subject, &body)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(format!("the mail's body cannot be opened: {e}")),
        };
        match outcome {
            Ok(()) => {
                sqlx::query!(
                    "UPDATE mail_outbox SET sent_at = now(), attempts = $2, last_error = NULL,
                         body = NULL, body_sealed = NULL
                     WHERE id = $1",
                    mail.id,
                    attempts
                )
                .execute(&mut *tx)
                .await?;
                sent += 1;
            }
            Err(e) => {
                tracing::warn!(mail_id = %mail.id, attempts, error = %e, "mail delivery failed");
                let retry_at =
                    Utc::now() + Duration::seconds(30 * 2_i64.pow(attempts.clamp(0, 10) as u32));
                sqlx::query!(
                    "UPDATE mail_outbox SET attempts = $2, last_error = $3, next_attempt_at = $4,
                         failed_at = CASE WHEN $2::int4 >= $5::int4 THEN now() END,
                         body = CASE WHEN $2::int4 >= $5::int4 THEN NULL ELSE body END,
                         body_sealed = CASE WHEN $2::int4 >= $5::int4 THEN NULL ELSE body_sealed END
                     WHERE id = $1",
                    mail.id,
                    attempts,
                    e,
                    retry_at,
                    MAX_ATTEMPTS
                )
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
    }
    Ok(sent)
}

/// Deletes mail sent or failed longer than `retention` ago, at most `batch` rows; returns how
/// many.
pub async fn purge_finished(
    pool: &PgPool,
    retention: std::time::Duration,
    batch: i64,
) -> Result<u64> {
    let cutoff = Utc::now() - Duration::from_std(retention).unwrap_or(Duration::days(14));
    Ok(sqlx::query!(
        "DELETE FROM mail_outbox WHERE id IN (
             SELECT id FROM mail_outbox
             WHERE (sent_at IS NOT NULL OR failed_at IS NOT NULL)
               AND coalesce(sent_at, failed_at) < $1
             LIMIT $2)",
        cutoff,
        batch
    )
    .execute(pool)
    .await?
    .rows_affected())
}
/// Every mail body sealed at rest, locked until the caller's transaction ends (for master key
/// rotation).
pub(crate) async fn sealed_for_update(conn: &mut PgConnection) -> Result<Vec<(Uuid, Vec<u8>)>> {
    Ok(sqlx::query!(r#"SELECT id, body_sealed AS "body_sealed!" FROM mail_outbox WHERE body_sealed IS NOT NULL FOR UPDATE"#)
        .fetch_all(conn)
        .await?
        .into_iter()
        .map(|r| (r.id, r.body_sealed))
        .collect())
}

/// Stores mail bodies sealed again (master key rotation); returns how many.
pub(crate) async fn store_sealed(
    conn: &mut PgConnection,
    values: &[(Uuid, Vec<u8>)],
) -> Result<u64> {
    let (ids, sealed): (Vec<Uuid>, Vec<Vec<u8>>) = values.iter().cloned().unzip();
    Ok(sqlx::query!(
        "UPDATE mail_outbox t SET body_sealed = u.sealed FROM UNNEST($1::uuid[], $2::bytea[]) AS u(id, sealed)
         WHERE t.id = u.id",
        &ids,
        &sealed
    )
    .execute(conn)
    .await?
    .rows_affected())
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn chosen_text_is_quoted_on_one_line_with_its_links_defused() {
        assert_eq!(
            quoted("URGENT: reset at https://evil.example/login"),
            "\"URGENT: reset at hxxps://evil[.]example/login\""
        );
        assert_eq!(quoted("Acme Storage Co."), "\"Acme Storage Co.\"");
        assert_eq!(
            quoted("St. Louis \"Best\"\nStorage"),
            "\"St. Louis 'Best' Storage\""
        );
        assert_eq!(quoted("HTTP://X.io"), "\"HXXP://X[.]io\"");
        assert_eq!(quoted("a\u{202E}b"), "\"ab\"");
        let long = quoted(&"x".repeat(300));
        assert_eq!(long.chars().count(), 102);
        assert!(long.ends_with("\u{2026}\""));
    }
}

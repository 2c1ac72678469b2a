//! The `api` command line: `serve`, `migrate` and the `admin` commands of the operations
//! contract. Admin commands print exactly one JSON line on success.

use crate::state::AppState;
use anyhow::Context as _;
use chrono::{NaiveDate, TimeZone, Utc};
use clap::{Parser, Subcommand};
use jobs::config::Config;
use serde_json::json;
use uuid::Uuid;

#[derive(Parser)]
#[command(
    name = "api",
    about = "Self-storage pricing service: HTTP API and administration"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve the HTTP API on $PORT (applies pending migrations first unless --no-migrate).
    Serve {
        #[arg(long)]
        no_migrate: bool,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Administrative commands; each prints one JSON line.
    #[command(subcommand)]
    Admin(Admin),
}

#[derive(Subcommand)]
pub enum Admin {
    /// Create a company in trial with its first user and API key.
    CreateCompany {
        #[arg(long)]
        name: String,
        #[arg(long)]
        email: String,
        #[arg(long)]
        password: Option<String>,
        #[arg(long)]
        trial_days: Option<u32>,
    },
    /// Create an API key for a company.
    CreateKey {
        #[arg(long)]
        company: Uuid,
        #[arg(long, default_value = "admin")]
        name: String,
        /// What the key may do: admin, manager or viewer.
        #[arg(long, default_value = "admin")]
        role: String,
    },
    /// Revoke an API key.
    RevokeKey {
        #[arg(long)]
        id: Uuid,
    },
    /// Set a company's subscription state (trialing, active, past_due, canceled, expired).
    SetSubscription {
        #[arg(long)]
        company: Uuid,
        #[arg(long)]
        state: String,
        /// New trial end date (YYYY-MM-DD, end of that day UTC).
        #[arg(long)]
        trial_ends: Option<NaiveDate>,
    },
    /// Re-seal every secret at rest (CRM credentials, webhook secrets, queued reset mails) under
    /// the new master key. Values sealed by the old (or already by the new) key are accepted.
    RotateMasterKey {
        /// The key the secrets are sealed with now (base64 of 32 bytes).
        #[arg(long)]
        old: String,
        /// The key to seal them with (base64 of 32 bytes).
        #[arg(long)]
        new: String,
    },
    /// Fill a company with synthetic daily history (for demos and benchmarks; built with the
    /// `demo-seed` feature only).
    #[cfg(feature = "demo-seed")]
    Seed {
        #[arg(long)]
        company: Uuid,
        #[arg(long, default_value_t = 5)]
        facilities: u32,
        #[arg(long, default_value_t = 90)]
        days: u32,
        /// Write each facility's history in bulk (fast; for large portfolios) instead of one
        /// ingest per day.
        #[arg(long)]
        bulk: bool,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::from_env()?;
    crate::telemetry::init(config.log_format);
    match cli.command {
        Command::Migrate => {
            let db = jobs::db::pool(&config.database_url, 2, jobs::db::ADMIN_APPLICATION)?;
            jobs::versions::check_postgres(&db).await?;
            jobs::db::migrate(&db).await.context("migrations failed")?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Serve { no_migrate } => {
            let port = config.port;
            let state = AppState::connect(config).await?;
            jobs::versions::check_postgres(&state.db).await?;
            jobs::versions::check_redis(&mut state.redis.clone()).await?;
            if !no_migrate {
                jobs::db::migrate(&state.db)
                    .await
                    .context("migrations failed")?;
            }
            let listener = tokio::net::TcpListener::bind(("0.0.0.0", port))
                .await
                .with_context(|| format!("could not listen on port {port}"))?;
            tracing::info!(port, "api listening");
            crate::server::serve(listener, state, crate::server::shutdown_signal()).await?;
            tracing::info!("api stopped");
            Ok(())
        }
        Command::Admin(admin) => {
            let db = jobs::db::pool(&config.database_url, 2, jobs::db::ADMIN_APPLICATION)?;
            let out = admin_command(&config, &db, admin).await?;
            println!("{out}");
            Ok(())
        }
    }
}

async fn admin_command(
    config: &Config,
    db: &sqlx::PgPool,
    admin: Admin,
) -> anyhow::Result<serde_json::Value> {
    let hasher = jobs::tenancy::KeyHasher::new(&config.master_key);
    Ok(match admin {
        Admin::CreateCompany {
            name,
            email,
            password,
            trial_days,
        } => {
            let created = jobs::tenancy::create_company(
                db,
                &hasher,
                jobs::tenancy::NewCompany {
                    name: &name,
                    email: &email,
                    password: password.as_deref(),
                    trial_days: trial_days.unwrap_or(config.trial_days),
                },
            )
            .await?;
            json!({ "company_id": created.company_id, "user_id": created.user_id, "api_key": created.api_key })
        }
        Admin::CreateKey {
            company,
            name,
            role,
        } => {
            let role = jobs::access::Role::parse(&role)
                .ok_or_else(|| anyhow::anyhow!("--role must be admin, manager or viewer"))?;
            let who = jobs::door::Who::system(company.into(), "operator");
            let key = jobs::tenancy::create_api_key_with(db, &hasher, &who, &name, role, None)
                .await?
                .into_value();
            json!({ "id": key.id, "api_key": key.api_key, "role": role.as_str() })
        }
        Admin::RevokeKey { id } => {
            let key = jobs::tenancy::revoke_any_api_key(db, id).await?;
            json!({ "id": key.id, "revoked_at": key.revoked_at })
        }
        Admin::SetSubscription {
            company,
            state,
            trial_ends,
        } => {
            let ends = trial_ends
                .and_then(|d| d.and_hms_opt(23, 59, 59))
                .map(|dt| Utc.from_utc_datetime(&dt));
            jobs::tenancy::set_subscription(db, company.into(), &state, ends).await?;
            let c = jobs::tenancy::company(db, company.into()).await?;
            json!({ "company_id": c.id, "subscription_state": c.subscription_state, "trial_ends_at": c.trial_ends_at })
        }
        Admin::RotateMasterKey { old, new } => {
            let old = jobs::config::parse_key("--old", &old)?;
            let new = jobs::config::parse_key("--new", &new)?;
            let keys = jobs::config::MasterKey::with_keys(new, vec![old], None);
            let done = jobs::key_rotation::reseal_all(db, &keys).await?;
            json!({ "resealed": done, "key_id": jobs::crypto::key_id(&new) })
        }
        #[cfg(feature = "demo-seed")]
        Admin::Seed {
            company,
            facilities,
            days,
            bulk,
        } => {
            let today = Utc::now().date_naive();
            let report = if bulk {
                jobs::seed::seed_bulk(db, company.into(), facilities, days, today, 2).await?
            } else {
                jobs::seed::seed(db, company.into(), facilities, days, today).await?
            };
            // A run per facility, so the demo's pages show recommendations from the start.
            let mut runs = 0;
            let who = jobs::door::Who::system(company.into(), "demo seed");
            for f in jobs::facilities::list(db, company.into(), &jobs::access::Scope::All).await? {
                // Its deliveries are left to the worker's sweeper: this command has no queues.
                jobs::pricing::run_now(db, &who, f.id.into())
                    .await?
                    .into_value();
                runs += 1;
            }
            let mut out = serde_json::to_value(report)?;
            out["runs"] = json!(runs);
            out
        }
    })
}

//! The background process: `worker` runs every queue, the cron schedule, the sweeper and mail
//! delivery until SIGTERM, then drains running jobs.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = match jobs::config::Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    worker::telemetry(config.log_format);
    match worker::run(config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

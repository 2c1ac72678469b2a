use clap::Parser as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match api::cli::run(api::cli::Cli::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

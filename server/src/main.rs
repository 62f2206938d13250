//! Clarion's command line. Thin: parses arguments and calls the library.

use clap::{Parser, Subcommand};
use server::config::Config;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "server",
    version,
    about = "Clarion: ask your wound-care data questions in plain English."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web app and API (the default).
    Serve,
    /// Create or migrate the database, then exit.
    Migrate,
    /// Fill the clinical tables with the deterministic synthetic wound-care dataset.
    Seed {
        /// Size of the dataset (default: the demo scale, >= 100k assessments).
        #[arg(long)]
        scale: Option<u32>,
        /// Random seed; the same seed gives the same data on every backend.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Target database (default: DATABASE_URL or the embedded SQLite file).
        #[arg(long)]
        database: Option<String>,
    },
    /// Draft a semantic model (TOML) from an existing SQLite or PostgreSQL schema.
    Introspect {
        /// Database to read the schema from.
        #[arg(long)]
        database: String,
        /// Write the model here instead of to standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    server::telemetry::init(&config);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let result: anyhow::Result<Option<String>> = runtime.block_on(async {
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => {
                let (state, created) = server::serve::prepare(&config).await?;
                if config.embedded {
                    print_demo_banner(&config, created);
                }
                server::serve::serve(&config, state, server::serve::shutdown_signal()).await?;
                Ok(None)
            }
            Command::Migrate => {
                server::serve::prepare(&config).await?;
                Ok(Some(format!(
                    "Database is up to date: {}",
                    server::config::redact_url(&config.database_url)
                )))
            }
            Command::Seed {
                scale,
                seed,
                database,
            } => {
                let url = database.unwrap_or_else(|| config.database_url.clone());
                Ok(Some(server::dataset::cli_seed(&url, scale, seed).await?))
            }
            Command::Introspect { database, out } => Ok(Some(
                server::semantic::introspect::cli_introspect(&database, out.as_deref()).await?,
            )),
        }
    });
    match result {
        Ok(Some(summary)) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn print_demo_banner(config: &Config, created: bool) {
    println!();
    println!("  Clarion is running at http://{}", config.addr);
    println!("  Embedded database: {}", config.database_url);
    if created {
        println!("  Created demo accounts on this first start:");
    } else {
        println!("  Demo accounts:");
    }
    for (user, name, _, password) in server::serve::DEMO_ACCOUNTS {
        println!("    {user:<6} / {password:<14} ({name})");
    }
    println!();
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

//! Clarion's command line. Thin: parses arguments and calls the library.

use clap::{Parser, Subcommand};
use server::config::Config;
use std::process::ExitCode;

/// mimalloc instead of the system allocator (see Cargo.toml).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Answer one question from the command line (best guesses unless --interactive).
    Ask {
        /// The question, in plain English.
        question: String,
        /// Ask clarification questions in the terminal (numbered options; Enter = default).
        #[arg(long)]
        interactive: bool,
        /// Database to answer from (default: DATABASE_URL or the embedded SQLite file).
        #[arg(long)]
        database: Option<String>,
        /// The date relative expressions are computed from (default: today).
        #[arg(long)]
        today: Option<chrono::NaiveDate>,
        /// Also print the SQL that was run.
        #[arg(long)]
        sql: bool,
    },
    /// Evaluate the understanding engine on the labeled question set; fails below the CI thresholds.
    Eval {
        /// SQLite database to evaluate on (seeded if empty; default: a temporary file).
        #[arg(long)]
        database: Option<String>,
        /// Which part of the labeled set to run.
        #[arg(long, value_enum, default_value_t = server::eval::PartChoice::All)]
        part: server::eval::PartChoice,
        /// Print the full report (metrics and every item's outcome) as JSON.
        #[arg(long)]
        json: bool,
        /// Dataset scale when seeding.
        #[arg(long, default_value_t = server::eval::exec::DEFAULT_EVAL_SCALE)]
        scale: u32,
        /// List every item that missed its expectation.
        #[arg(long, short)]
        verbose: bool,
        /// Only these item ids (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<u32>,
        /// Directory of the labeled set (default: server/eval/questions).
        #[arg(long)]
        set: Option<std::path::PathBuf>,
        /// Consult the language model (CLARION_LLM_URL and the other CLARION_LLM_*
        /// settings) where the engine leaves words unexplained, as the server does, and
        /// report its calls, tokens and latency.
        #[arg(long)]
        llm: bool,
    },
    /// Draft a semantic model (TOML) from an existing SQLite or PostgreSQL schema.
    Introspect {
        /// Database to read the schema from.
        #[arg(long)]
        database: String,
        /// Write the model here instead of to standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Instead of a model: the indexes a model's derived attributes need (latest /
        /// first values, related counts), which the database has, and CREATE INDEX
        /// statements for the rest (never run by Clarion).
        #[arg(long)]
        indexes: bool,
        /// The model --indexes checks (default: the shipped wound-care model).
        #[arg(long, requires = "indexes")]
        model: Option<std::path::PathBuf>,
    },
    /// Manage accounts and API tokens: add, list, reset-password, token create|list|revoke.
    User {
        /// Database to manage (default: DATABASE_URL or the embedded SQLite file).
        #[arg(long, global = true)]
        database: Option<String>,
        #[command(subcommand)]
        command: server::auth::cli::UserCommand,
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
                if config.embedded || config.demo {
                    print_demo_banner(&config, created);
                }
                server::serve::serve(&config, state, server::serve::shutdown_signal()).await?;
                Ok(None)
            }
            Command::Migrate => {
                server::serve::prepare(&config).await?;
                Ok(Some(format!(
                    "Database is up to date: {}",
                    server::db::redact_url(&config.database_url)
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
            Command::Ask {
                question,
                interactive,
                database,
                today,
                sql,
            } => {
                let url = database.unwrap_or_else(|| config.database_url.clone());
                let today = today.unwrap_or_else(|| chrono::Utc::now().date_naive());
                Ok(Some(
                    server::eval::ask::cli_ask(&url, &question, interactive, today, sql).await?,
                ))
            }
            Command::Eval {
                database,
                part,
                json,
                scale,
                verbose,
                only,
                set,
                llm,
            } => {
                let llm = if llm {
                    let cfg = server::llm::LlmConfig::from_lookup(&|k| {
                        std::env::var(k).ok().filter(|v| !v.trim().is_empty())
                    })?;
                    Some(cfg.ok_or_else(|| {
                        anyhow::anyhow!(
                            "--llm needs CLARION_LLM_URL (an OpenAI-compatible endpoint; see README)"
                        )
                    })?)
                } else {
                    None
                };
                let mut options = server::eval::EvalOptions {
                    database,
                    scale,
                    part,
                    only,
                    llm,
                    ..Default::default()
                };
                if let Some(dir) = set {
                    options.set_dir = dir;
                }
                server::eval::cli::cli_eval(&options, json, verbose).await
            }
            Command::Introspect {
                database,
                indexes: true,
                model,
                ..
            } => Ok(Some(
                server::semantic::introspect::cli_indexes(&database, model.as_deref()).await?,
            )),
            Command::Introspect { database, out, .. } => Ok(Some(
                server::semantic::introspect::cli_introspect(&database, out.as_deref()).await?,
            )),
            Command::User { database, command } => {
                let url = database.unwrap_or_else(|| config.database_url.clone());
                Ok(Some(server::auth::cli::run(&url, command).await?))
            }
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
    println!("  Database: {}", server::db::redact_url(&config.database_url));
    if !config.demo {
        println!(
            "  No demo accounts: {} is not a loopback address, and their passwords are",
            config.addr
        );
        println!("  published. Create an account with `server user add`, or set CLARION_DEMO=1.");
        println!();
        return;
    }
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

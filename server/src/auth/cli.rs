//! `server user …`: manage accounts and API tokens from the command line.
//!
//! Passwords are read from standard input (one line), or prompted for without
//! echo when standard input is a terminal; they never appear in the process
//! list or the shell history. An API token is printed once and never again.
//! CLI glue, so errors are `anyhow`.

use super::service::Auth;
use crate::db::Database;
use crate::store::{ClinicScope, Role, Store, StoreError};
use anyhow::{Context, bail};
use clap::Subcommand;
use std::io::{BufRead, IsTerminal, Write};

/// Shortest password accepted from the command line.
pub const MIN_PASSWORD_CHARS: usize = 8;

/// `server user …`
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an account. The password is read from standard input (or prompted for).
    Add {
        /// Sign-in name (letters, digits, `.`, `_`, `-`, `@`).
        #[arg(long)]
        username: String,
        /// Name shown in the header, e.g. "Dr. Dana Reyes".
        #[arg(long)]
        name: String,
        /// Make the account an administrator.
        #[arg(long)]
        admin: bool,
        /// Limit the account to these clinics (ids, comma-separated: `1,2`). Default: all clinics.
        #[arg(long, value_parser = parse_clinics)]
        clinics: Option<ClinicScope>,
    },
    /// List every account.
    List,
    /// Set which clinics an account may see; applies to its next question.
    Scope {
        /// The account's sign-in name.
        username: String,
        /// Only these clinics (ids, comma-separated: `1,2`).
        #[arg(long, value_parser = parse_clinics, conflicts_with = "all", required_unless_present = "all")]
        clinics: Option<ClinicScope>,
        /// Every clinic.
        #[arg(long)]
        all: bool,
    },
    /// Set a new password (read from standard input or prompted for) and sign the user out everywhere.
    ResetPassword {
        #[arg(long)]
        username: String,
    },
    /// API tokens for integrators (`Authorization: Bearer <token>`).
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

/// `server user token …`
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue a token for a user and print it once.
    Create {
        #[arg(long)]
        username: String,
        /// What the token is for, to tell tokens apart later.
        #[arg(long, default_value = "api")]
        name: String,
        /// Days until the token stops working (default: until revoked or the password changes).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=3650))]
        expires_in_days: Option<u32>,
    },
    /// List a user's tokens (names and prefixes, never the tokens).
    List {
        #[arg(long)]
        username: String,
    },
    /// Revoke one of a user's tokens by id.
    Revoke {
        #[arg(long)]
        username: String,
        #[arg(long)]
        id: i64,
    },
}

/// Runs a user command against `database_url` (migrating it first) and
/// returns what to print.
pub async fn run(database_url: &str, command: UserCommand) -> anyhow::Result<String> {
    let db = Database::connect_and_migrate(database_url).await?;
    let store = Store::new(db.clone());
    let result = execute(&store, command).await;
    db.close().await;
    result
}

async fn execute(store: &Store, command: UserCommand) -> anyhow::Result<String> {
    match command {
        UserCommand::Add {
            username,
            name,
            admin,
            clinics,
        } => {
            check_username(&username)?;
            let name = name.trim();
            if name.is_empty() || name.chars().count() > 100 {
                bail!("--name must be 1 to 100 characters");
            }
            let password = read_new_password(&format!("Password for {username}"))?;
            let role = if admin { Role::Admin } else { Role::Clinician };
            match store.create_user(&username, name, role, &password).await {
                Ok(u) => {
                    let scope = clinics.unwrap_or(ClinicScope::All);
                    store.set_clinic_scope(u.id, &scope).await?;
                    Ok(format!(
                        "Created {} account {:?} ({}), clinics: {}.",
                        if u.is_admin { "administrator" } else { "clinician" },
                        u.username,
                        u.display_name,
                        scope.label()
                    ))
                }
                Err(StoreError::Conflict(_)) => {
                    bail!("a user named {username:?} already exists (use `server user reset-password`)")
                }
                Err(e) => Err(e.into()),
            }
        }
        UserCommand::List => {
            let users = store.list_users().await?;
            if users.is_empty() {
                return Ok("No accounts yet. Create one with `server user add`.".into());
            }
            let mut out = format!("{:<24} {:<14} {:<12} {}\n", "USERNAME", "ROLE", "CLINICS", "NAME");
            for u in users {
                let role = if u.is_admin { "administrator" } else { "clinician" };
                let scope = store.clinic_scope(u.id).await?.label();
                out.push_str(&format!(
                    "{:<24} {:<14} {:<12} {}\n",
                    u.username, role, scope, u.display_name
                ));
            }
            Ok(out.trim_end().to_string())
        }
        UserCommand::ResetPassword { username } => {
            if store.user_by_username(&username).await?.is_none() {
                bail!("no user named {username:?}");
            }
            let password = read_new_password(&format!("New password for {username}"))?;
            store.set_password(&username, &password).await?;
            Ok(format!(
                "Password changed for {username:?}; their sessions were signed out."
            ))
        }
        UserCommand::Scope {
            username,
            clinics,
            all,
        } => {
            let user = store
                .user_by_username(&username)
                .await?
                .with_context(|| format!("no user named {username:?}"))?;
            let scope = match (clinics, all) {
                (Some(s), false) => s,
                _ => ClinicScope::All,
            };
            store.set_clinic_scope(user.id, &scope).await?;
            Ok(format!(
                "{} may now see clinics: {} (from their next question).",
                user.username,
                scope.label()
            ))
        }
        UserCommand::Token { command } => token(store, command).await,
    }
}

/// `--clinics 1,2` (ids only; `--all` is its own flag).
fn parse_clinics(text: &str) -> Result<ClinicScope, String> {
    match ClinicScope::parse(text)? {
        ClinicScope::All => Err("use --all for every clinic; --clinics takes ids like 1,2".into()),
        s => Ok(s),
    }
}

async fn token(store: &Store, command: TokenCommand) -> anyhow::Result<String> {
    let auth = Auth::new(store.clone(), Default::default());
    let user_named = |username: String| async move {
        store
            .user_by_username(&username)
            .await?
            .with_context(|| format!("no user named {username:?}"))
    };
    match command {
        TokenCommand::Create {
            username,
            name,
            expires_in_days,
        } => {
            let user = user_named(username).await?;
            let now = chrono::Utc::now();
            let expires = expires_in_days.map(|d| now + chrono::Duration::days(i64::from(d)));
            let (token, secret) = auth.create_api_token(user.id, &name, now, expires).await?;
            let until = token.expires_at.map_or_else(
                || "until revoked or the password changes".to_string(),
                |d| format!("until {}", d.format("%Y-%m-%d %H:%M UTC")),
            );
            Ok(format!(
                "API token {:?} (id {}) for {}, valid {until}:\n\n    {secret}\n\n\
                 Copy it now: it is not stored and cannot be shown again.\n\
                 Use it as: Authorization: Bearer {secret}",
                token.name, token.id, user.username
            ))
        }
        TokenCommand::List { username } => {
            let user = user_named(username).await?;
            let tokens = store.api_tokens(user.id).await?;
            if tokens.is_empty() {
                return Ok(format!("{} has no API tokens.", user.username));
            }
            let mut out = format!(
                "{:<6} {:<20} {:<16} {:<17} {:<17} {}\n",
                "ID", "NAME", "PREFIX", "CREATED", "EXPIRES", "LAST USED"
            );
            let when = |d: Option<chrono::DateTime<chrono::Utc>>, none: &str| {
                d.map_or_else(|| none.to_string(), |d| d.format("%Y-%m-%d %H:%M").to_string())
            };
            for t in tokens {
                out.push_str(&format!(
                    "{:<6} {:<20} {:<16} {:<17} {:<17} {}\n",
                    t.id,
                    t.name,
                    format!("{}…", t.prefix),
                    t.created_at.format("%Y-%m-%d %H:%M"),
                    when(t.expires_at, "never"),
                    when(t.last_used_at, "never")
                ));
            }
            Ok(out.trim_end().to_string())
        }
        TokenCommand::Revoke { username, id } => {
            let user = user_named(username).await?;
            match store.revoke_api_token(user.id, id).await {
                Ok(()) => Ok(format!("Revoked token {id} of {}.", user.username)),
                Err(StoreError::NotFound) => bail!("{} has no token with id {id}", user.username),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// Usernames: 1–64 characters from a small, unambiguous set.
pub fn check_username(username: &str) -> anyhow::Result<()> {
    if !super::service::valid_username(username) {
        bail!("--username must be 1 to 64 characters: letters, digits, '.', '_', '-', '@'");
    }
    Ok(())
}

/// Checks a new password's length.
pub fn check_password(password: &str) -> anyhow::Result<()> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        bail!("the password must have at least {MIN_PASSWORD_CHARS} characters");
    }
    if n > 1024 {
        bail!("the password must have at most 1024 characters");
    }
    Ok(())
}

/// Reads a new password: prompted twice without echo on a terminal, else one
/// line of standard input.
fn read_new_password(prompt: &str) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let password = if stdin.is_terminal() {
        let first = prompt_hidden(&format!("{prompt}: "))?;
        let second = prompt_hidden("Repeat it: ")?;
        if first != second {
            bail!("the two passwords differ; nothing was changed");
        }
        first
    } else {
        let mut line = String::new();
        stdin
            .lock()
            .read_line(&mut line)
            .context("cannot read the password from standard input")?;
        line.trim_end_matches(['\n', '\r']).to_string()
    };
    check_password(&password)?;
    Ok(password)
}

/// Prompts on standard error and reads a line with terminal echo switched off
/// (through `stty`, so no extra dependency; if `stty` is missing the input echoes).
fn prompt_hidden(prompt: &str) -> anyhow::Result<String> {
    let mut err = std::io::stderr();
    write!(err, "{prompt}")?;
    err.flush()?;
    let stty = |arg: &str| {
        std::process::Command::new("stty")
            .arg(arg)
            .stdin(std::process::Stdio::inherit())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    let hidden = stty("-echo");
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if hidden {
        stty("echo");
        writeln!(err)?;
    }
    read.context("cannot read the password")?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_plain() {
        for ok in ["demo", "dana.reyes", "d_r-1", "dana@clinic"] {
            assert!(check_username(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "semi;colon", "ünï", &"a".repeat(65)] {
            assert!(check_username(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn short_passwords_are_refused() {
        assert!(check_password("1234567").is_err());
        assert!(check_password("12345678").is_ok());
    }
}

//! Database connections and migrations for both backends.
//!
//! One enum over the two pools; dialect differences stay inside
//! [`crate::store`]. Statement logging is switched off: generated SQL can carry
//! patient values, and bound values must never reach the logs.

use crate::error::StartupError;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, PgPool, SqlitePool};
use std::str::FromStr;
use std::time::Duration;

/// Which database engine a URL points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Recognises the backend from a URL's scheme.
    pub fn of_url(url: &str) -> Result<Self, StartupError> {
        if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else {
            Err(StartupError::UnsupportedDatabaseUrl { url: redact_url(url) })
        }
    }
}

/// A connection pool to Clarion's database.
#[derive(Clone, Debug)]
pub enum Database {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

impl Database {
    /// Connects (creating a SQLite file and its directory if missing) without migrating.
    pub async fn connect(url: &str) -> Result<Self, StartupError> {
        let unreachable = |e: &dyn std::fmt::Display| StartupError::DatabaseUnreachable {
            url: redact_url(url),
            reason: one_line(e),
        };
        match Backend::of_url(url)? {
            Backend::Sqlite => {
                let opts = SqliteConnectOptions::from_str(url)
                    .map_err(|e| unreachable(&e))?
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(5))
                    // read pages from a shared mapping instead of copying each one in with
                    // a system call (WAL keeps writes safe; 256 MiB of address space)
                    .pragma("mmap_size", "268435456")
                    .disable_statement_logging();
                if let Some(parent) = opts.get_filename().parent()
                    && !parent.as_os_str().is_empty()
                {
                    std::fs::create_dir_all(parent).map_err(|e| StartupError::DataDir {
                        path: parent.display().to_string(),
                        reason: e.to_string(),
                    })?;
                }
                let pool = SqlitePoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(5))
                    .connect_with(opts)
                    .await
                    .map_err(|e| unreachable(&e))?;
                Ok(Database::Sqlite(pool))
            }
            Backend::Postgres => {
                let opts = PgConnectOptions::from_str(url)
                    .map_err(|e| unreachable(&e))?
                    .application_name("clarion")
                    .disable_statement_logging();
                let pool = PgPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(5))
                    .connect_with(opts)
                    .await
                    .map_err(|e| unreachable(&e))?;
                Ok(Database::Postgres(pool))
            }
        }
    }

    /// Connects and applies every pending migration.
    pub async fn connect_and_migrate(url: &str) -> Result<Self, StartupError> {
        let db = Self::connect(url).await?;
        db.migrate().await.map_err(|e| StartupError::Migration {
            url: redact_url(url),
            reason: one_line(&e),
        })?;
        Ok(db)
    }

    /// Applies pending migrations for this backend.
    pub async fn migrate(&self) -> Result<(), sqlx::migrate::MigrateError> {
        match self {
            Database::Sqlite(p) => SQLITE_MIGRATIONS.run(p).await,
            Database::Postgres(p) => POSTGRES_MIGRATIONS.run(p).await,
        }
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Database::Sqlite(_) => Backend::Sqlite,
            Database::Postgres(_) => Backend::Postgres,
        }
    }

    /// A cheap round trip proving the database answers (for `/healthz`).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        match self {
            Database::Sqlite(p) => sqlx::query("SELECT 1").execute(p).await.map(|_| ()),
            Database::Postgres(p) => sqlx::query("SELECT 1").execute(p).await.map(|_| ()),
        }
    }

    /// Closes every connection (graceful shutdown).
    pub async fn close(&self) {
        match self {
            Database::Sqlite(p) => p.close().await,
            Database::Postgres(p) => p.close().await,
        }
    }
}

/// Collapses an error's text to a single line.
fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Hides the password in a database URL so it can be printed: the user-info
/// password and any password-like query parameter (`?password=…`).
pub fn redact_url(url: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((u, q)) => (u, Some(redact_query(q))),
        None => (url, None),
    };
    let base = redact_userinfo(url);
    match query {
        Some(q) => format!("{base}?{q}"),
        None => base,
    }
}

fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if k.to_ascii_lowercase().contains("pass") || k.eq_ignore_ascii_case("pwd") => {
                format!("{k}=***")
            }
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            if userinfo.contains(':') {
                format!("{scheme}://{user}:***@{host}{path}")
            } else {
                format!("{scheme}://{user}@{host}{path}")
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted_from_urls() {
        assert_eq!(
            redact_url("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("sqlite://data/x.db"), "sqlite://data/x.db");
        assert_eq!(
            redact_url("postgres://h/db?user=u&password=secret&sslmode=require"),
            "postgres://h/db?user=u&password=***&sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://u:a@h/db?sslpassword=k&PWD=x"),
            "postgres://u:***@h/db?sslpassword=***&PWD=***"
        );
    }
}

//! Clarion's own tables (users, settings, …) on SQLite or PostgreSQL.
//!
//! Every statement uses `$n` placeholders, which both backends accept, and
//! [`on_pool!`] runs the same statement on whichever pool is configured. Only
//! bound parameters; no SQL is ever assembled from user text here.

use crate::db::Database;
use app::protocol::{Sensitivity, Settings, UserSummary};
use thiserror::Error;

/// Storage failures.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("stored value is invalid: {0}")]
    Corrupt(String),
}

/// Runs one expression with `$p` bound to the active pool.
macro_rules! on_pool {
    ($db:expr, |$p:ident| $body:expr) => {
        match $db {
            Database::Sqlite($p) => $body,
            Database::Postgres($p) => $body,
        }
    };
}

/// A user's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Clinician,
    Admin,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Clinician => "clinician",
            Role::Admin => "admin",
        }
    }
}

/// A stored user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
}

impl From<User> for UserSummary {
    fn from(u: User) -> Self {
        UserSummary {
            username: u.username,
            display_name: u.display_name,
            is_admin: u.is_admin,
        }
    }
}

type UserRow = (i64, String, String, String);

fn user_from_row((id, username, display_name, role): UserRow) -> User {
    User {
        id,
        username,
        display_name,
        is_admin: role == "admin",
    }
}

/// Typed access to Clarion's tables.
#[derive(Clone, Debug)]
pub struct Store {
    db: Database,
}

impl Store {
    pub fn new(db: Database) -> Self {
        Store { db }
    }

    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Creates the user unless one with that username exists. Returns the user
    /// and whether it was created now.
    pub async fn ensure_user(
        &self,
        username: &str,
        display_name: &str,
        role: Role,
        password: &str,
    ) -> Result<(User, bool), StoreError> {
        if let Some(u) = self.user_by_username(username).await? {
            return Ok((u, false));
        }
        let hash = password_auth::generate_hash(password);
        let sql = "INSERT INTO users (username, display_name, role, password_hash) VALUES ($1, $2, $3, $4) \
                   ON CONFLICT (username) DO NOTHING";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(username)
            .bind(display_name)
            .bind(role.as_str())
            .bind(&hash)
            .execute(p)
            .await
            .map(|_| ()))?;
        let u = self
            .user_by_username(username)
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok((u, true))
    }

    /// Looks a user up by username.
    pub async fn user_by_username(&self, username: &str) -> Result<Option<User>, StoreError> {
        let sql = "SELECT id, username, display_name, role FROM users WHERE username = $1";
        let row: Option<UserRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(username)
            .fetch_optional(p)
            .await)?;
        Ok(row.map(user_from_row))
    }

    /// The oldest account (stands in for the signed-in user until sessions land).
    pub async fn first_user(&self) -> Result<Option<User>, StoreError> {
        let sql = "SELECT id, username, display_name, role FROM users ORDER BY id LIMIT 1";
        let row: Option<UserRow> = on_pool!(&self.db, |p| sqlx::query_as(sql).fetch_optional(p).await)?;
        Ok(row.map(user_from_row))
    }

    /// A user's settings, or the defaults if never saved.
    pub async fn settings(&self, user_id: i64) -> Result<Settings, StoreError> {
        let sql = "SELECT skip_clarifications, sensitivity FROM user_settings WHERE user_id = $1";
        let row: Option<(bool, String)> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        match row {
            None => Ok(Settings::default()),
            Some((skip, sens)) => Ok(Settings {
                skip_clarifications: skip,
                sensitivity: Sensitivity::parse(&sens)
                    .ok_or_else(|| StoreError::Corrupt(format!("sensitivity {sens:?}")))?,
            }),
        }
    }

    /// Stores a user's settings (insert or replace).
    pub async fn save_settings(&self, user_id: i64, s: &Settings) -> Result<(), StoreError> {
        let sql = "INSERT INTO user_settings (user_id, skip_clarifications, sensitivity) VALUES ($1, $2, $3) \
                   ON CONFLICT (user_id) DO UPDATE SET skip_clarifications = excluded.skip_clarifications, \
                   sensitivity = excluded.sensitivity, updated_at = CURRENT_TIMESTAMP";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(user_id)
            .bind(s.skip_clarifications)
            .bind(s.sensitivity.as_str())
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }
}

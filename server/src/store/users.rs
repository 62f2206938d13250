//! Accounts: who may sign in, with which role. Passwords are stored only as
//! argon2 hashes (hashing and verifying live in [`crate::auth::password`]).

use super::{Store, StoreError, is_unique_violation};
use app::backend::AuthUser;
use app::protocol::UserSummary;

/// A user's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Clinician,
    Admin,
}

impl Role {
    /// Stable machine name, as stored.
    pub fn as_str(self) -> &'static str {
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

impl From<User> for AuthUser {
    fn from(u: User) -> Self {
        AuthUser {
            id: u.id,
            username: u.username,
            display_name: u.display_name,
            is_admin: u.is_admin,
        }
    }
}

pub(super) type UserRow = (i64, String, String, String);

/// The column list every user query selects, matching [`UserRow`].
pub(super) const USER_COLUMNS: &str = "u.id, u.username, u.display_name, u.role";

pub(super) fn user_from_row((id, username, display_name, role): UserRow) -> User {
    User {
        id,
        username,
        display_name,
        is_admin: role == "admin",
    }
}

impl Store {
    /// Creates the user unless one with that username exists. Returns the user
    /// and whether it was created now. An existing account is never changed.
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
        match self.create_user(username, display_name, role, password).await {
            Ok(u) => Ok((u, true)),
            // Another replica created it between our read and our insert.
            Err(StoreError::Conflict(_)) => {
                let u = self
                    .user_by_username(username)
                    .await?
                    .ok_or(StoreError::NotFound)?;
                Ok((u, false))
            }
            Err(e) => Err(e),
        }
    }

    /// Creates a user; `Conflict` when the username is taken.
    pub async fn create_user(
        &self,
        username: &str,
        display_name: &str,
        role: Role,
        password: &str,
    ) -> Result<User, StoreError> {
        let hash = crate::password::hash(password).await;
        let sql = "INSERT INTO users (username, display_name, role, password_hash) VALUES ($1, $2, $3, $4) \
                   RETURNING id, username, display_name, role";
        let row: Result<UserRow, sqlx::Error> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(username)
            .bind(display_name)
            .bind(role.as_str())
            .bind(&hash)
            .fetch_one(p)
            .await);
        match row {
            Ok(r) => Ok(user_from_row(r)),
            Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict("username taken")),
            Err(e) => Err(e.into()),
        }
    }

    /// Looks a user up by username (exact match).
    pub async fn user_by_username(&self, username: &str) -> Result<Option<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.username = $1");
        let row: Option<UserRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(username)
            .fetch_optional(p)
            .await)?;
        Ok(row.map(user_from_row))
    }

    /// Looks a user up by id.
    pub async fn user_by_id(&self, id: i64) -> Result<User, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1");
        let row: Option<UserRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(p)
            .await)?;
        row.map(user_from_row).ok_or(StoreError::NotFound)
    }

    /// Every account, by username (for `server user list`).
    pub async fn list_users(&self) -> Result<Vec<User>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users u ORDER BY u.username");
        let rows: Vec<UserRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql).fetch_all(p).await)?;
        Ok(rows.into_iter().map(user_from_row).collect())
    }

    /// The user and their password hash, for verifying a sign-in.
    pub async fn credentials(&self, username: &str) -> Result<Option<(User, String)>, StoreError> {
        let sql = format!("SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.username = $1");
        let row: Option<(i64, String, String, String, String)> =
            on_pool!(&self.db, |p| sqlx::query_as(&sql)
                .bind(username)
                .fetch_optional(p)
                .await)?;
        Ok(row.map(|(id, username, name, role, hash)| (user_from_row((id, username, name, role)), hash)))
    }

    /// Replaces a user's password and signs them out everywhere: their
    /// sessions and API tokens are deleted in the same transaction. `NotFound`
    /// for an unknown username.
    pub async fn set_password(&self, username: &str, password: &str) -> Result<User, StoreError> {
        let user = self
            .user_by_username(username)
            .await?
            .ok_or(StoreError::NotFound)?;
        let hash = crate::password::hash(password).await;
        on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
                .bind(&hash)
                .bind(user.id)
                .execute(&mut *tx)
                .await?;
            for sql in SIGN_OUT_EVERYWHERE {
                sqlx::query(sql).bind(user.id).execute(&mut *tx).await?;
            }
            tx.commit().await
        }
        .await)?;
        Ok(user)
    }

    /// A user's stored password hash (`NotFound` for an unknown id).
    pub async fn password_hash(&self, user_id: i64) -> Result<String, StoreError> {
        let sql = "SELECT password_hash FROM users WHERE id = $1";
        let stored: Option<(String,)> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        stored.map(|(h,)| h).ok_or(StoreError::NotFound)
    }

    /// Replaces the password hash if it is still `old_hash` (compare-and-set:
    /// two concurrent changes cannot both win) and, in the same transaction,
    /// ends every session and revokes every API token of the user, so a stolen
    /// credential cannot outlive the change. Returns whether it was replaced.
    pub async fn replace_password_hash(
        &self,
        user_id: i64,
        old_hash: &str,
        new_hash: &str,
    ) -> Result<bool, StoreError> {
        on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            let updated =
                sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2 AND password_hash = $3")
                    .bind(new_hash)
                    .bind(user_id)
                    .bind(old_hash)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            if updated == 1 {
                for sql in SIGN_OUT_EVERYWHERE {
                    sqlx::query(sql).bind(user_id).execute(&mut *tx).await?;
                }
            }
            tx.commit().await.map(|_| updated == 1)
        }
        .await)
        .map_err(StoreError::from)
    }
}

/// What a password change or reset ends: every session and API token of the user (`$1`).
const SIGN_OUT_EVERYWHERE: [&str; 2] = [
    "DELETE FROM sessions WHERE user_id = $1",
    "DELETE FROM api_tokens WHERE user_id = $1",
];

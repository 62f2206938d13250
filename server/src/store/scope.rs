//! Clinic scopes (issue 16): which clinics an account may see. All clinics (the
//! default, and every account created before scopes existed) or a list of clinic ids.
//!
//! Read on every request by the orchestrator, so a change takes effect on the next
//! question without signing out. The ids are the warehouse's `clinics.id`; this module
//! does not check that they exist (the warehouse may be another database).

use super::{Store, StoreError};

/// The clinics an account may see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClinicScope {
    /// Every clinic (administrators' default; accounts without a scope).
    All,
    /// Only these clinics, ascending and without repeats (may be empty: nothing).
    Clinics(Vec<i64>),
}

impl ClinicScope {
    /// A scope of `ids` (sorted, deduplicated).
    pub fn clinics(ids: impl IntoIterator<Item = i64>) -> Self {
        let mut ids: Vec<i64> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        ClinicScope::Clinics(ids)
    }

    /// Whether clinic `id` is visible.
    pub fn allows(&self, id: i64) -> bool {
        match self {
            ClinicScope::All => true,
            ClinicScope::Clinics(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    /// The listed clinics (`None` for all).
    pub fn ids(&self) -> Option<&[i64]> {
        match self {
            ClinicScope::All => None,
            ClinicScope::Clinics(ids) => Some(ids),
        }
    }

    /// How the audit log and the command line write it: `all` or `1,2`.
    pub fn label(&self) -> String {
        match self {
            ClinicScope::All => "all".into(),
            ClinicScope::Clinics(ids) => ids.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
        }
    }

    /// Reads `all` or a comma-separated list of positive clinic ids (`1,2`); the
    /// message says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("all") {
            return Ok(ClinicScope::All);
        }
        let mut ids = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.parse::<i64>() {
                Ok(id) if id > 0 => ids.push(id),
                _ => return Err(format!("{part:?} is not a clinic id (a positive whole number)")),
            }
        }
        if ids.is_empty() {
            return Err("list at least one clinic id, e.g. 1,2 (or `all`)".into());
        }
        Ok(ClinicScope::clinics(ids))
    }
}

impl Store {
    /// The clinics `user_id` may see (`NotFound` for an unknown user).
    pub async fn clinic_scope(&self, user_id: i64) -> Result<ClinicScope, StoreError> {
        let all: Option<(bool,)> = on_pool!(&self.db, |p| sqlx::query_as(
            "SELECT all_clinics FROM users WHERE id = $1"
        )
        .bind(user_id)
        .fetch_optional(p)
        .await)?;
        match all {
            None => Err(StoreError::NotFound),
            Some((true,)) => Ok(ClinicScope::All),
            Some((false,)) => {
                let rows: Vec<(i64,)> = on_pool!(&self.db, |p| sqlx::query_as(
                    "SELECT clinic_id FROM user_clinics WHERE user_id = $1 ORDER BY clinic_id"
                )
                .bind(user_id)
                .fetch_all(p)
                .await)?;
                Ok(ClinicScope::clinics(rows.into_iter().map(|r| r.0)))
            }
        }
    }

    /// Replaces `user_id`'s scope in one transaction (`NotFound` for an unknown user).
    pub async fn set_clinic_scope(&self, user_id: i64, scope: &ClinicScope) -> Result<(), StoreError> {
        let ids: Vec<i64> = scope.ids().map(<[i64]>::to_vec).unwrap_or_default();
        let all = matches!(scope, ClinicScope::All);
        let updated = on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            let n = sqlx::query("UPDATE users SET all_clinics = $1 WHERE id = $2")
                .bind(all)
                .bind(user_id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n == 1 {
                sqlx::query("DELETE FROM user_clinics WHERE user_id = $1")
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
                for id in &ids {
                    sqlx::query("INSERT INTO user_clinics (user_id, clinic_id) VALUES ($1, $2)")
                        .bind(user_id)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
            }
            tx.commit().await.map(|_| n == 1)
        }
        .await)?;
        if updated {
            Ok(())
        } else {
            Err(StoreError::NotFound)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ClinicScope;

    #[test]
    fn a_scope_reads_all_or_a_list_of_positive_ids() {
        assert_eq!(ClinicScope::parse("all"), Ok(ClinicScope::All));
        assert_eq!(
            ClinicScope::parse(" 3, 1,3 "),
            Ok(ClinicScope::Clinics(vec![1, 3]))
        );
        assert!(ClinicScope::parse("").is_err());
        assert!(ClinicScope::parse("1,x").unwrap_err().contains("\"x\""));
        assert!(ClinicScope::parse("0").is_err());
        assert_eq!(ClinicScope::clinics([2, 1]).label(), "1,2");
        assert!(ClinicScope::clinics([2]).allows(2) && !ClinicScope::clinics([2]).allows(1));
    }
}

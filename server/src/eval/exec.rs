//! The evaluation database: a SQLite file seeded with the deterministic dataset, the
//! allowed-values snapshot the engine gets from it, and execution of gold SQL and
//! rendered plans into comparable rows.
//!
//! Gold SQL is hand-written SQLite (from `server/eval/questions`); rendered plans come
//! from `crate::sql::render` with every value bound. Every statement runs with a time
//! limit. This module writes nothing but the dataset it seeds into a database whose
//! clinical tables are empty.

use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqlitePool, TypeInfo, ValueRef};
use std::path::PathBuf;
use std::time::Duration;

use super::compare::{Cell, Rows};
use crate::dataset::{self, GenConfig, OnExisting};
use crate::db::Database;
use crate::engine::{AllowedValuesSnapshot, QueryPlan};
use crate::semantic::SemanticModel;
use crate::sql::{Dialect, render};
use crate::warehouse::{AllowedValuesConfig, AllowedValuesProvider, ColumnSpec};

/// Longest a single statement may run.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// The scale `server eval` seeds by default: 1,000 patients, 6 clinics, ~58k
/// assessments — enough for every gold query to return rows, seeded in seconds.
pub const DEFAULT_EVAL_SCALE: u32 = 50;

/// An open evaluation database (deleted on drop when it was a temporary file).
pub struct EvalDb {
    /// The pool.
    pub pool: SqlitePool,
    /// What was used, for the report (`temporary SQLite, scale 50` …).
    pub description: String,
    temp: Option<PathBuf>,
}

impl Drop for EvalDb {
    fn drop(&mut self) {
        if let Some(path) = &self.temp {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = path.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// Why the evaluation database could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("the evaluation runs on SQLite (the gold SQL is SQLite); {0} is not a SQLite URL")]
    NotSqlite(String),
    #[error("cannot open the evaluation database: {0}")]
    Open(String),
    #[error("cannot seed the evaluation database: {0}")]
    Seed(String),
}

impl EvalDb {
    /// Opens `url` (migrating it and seeding it at `scale` if its clinical tables are
    /// empty), or, without a URL, a fresh temporary SQLite file seeded at `scale`.
    pub async fn open(url: Option<&str>, scale: u32) -> Result<EvalDb, DbError> {
        let (url, temp) = match url {
            Some(u) => (u.to_owned(), None),
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos())
                    .unwrap_or_default();
                let path =
                    std::env::temp_dir().join(format!("clarion-eval-{}-{nanos}.db", std::process::id()));
                (format!("sqlite://{}", path.display()), Some(path))
            }
        };
        if !url.starts_with("sqlite:") {
            return Err(DbError::NotSqlite(crate::db::redact_url(&url)));
        }
        let db = Database::connect_and_migrate(&url)
            .await
            .map_err(|e| DbError::Open(e.to_string()))?;
        let counts = dataset::clinical_counts(&db)
            .await
            .map_err(|e| DbError::Open(e.to_string()))?;
        let seeded = if counts.is_empty() {
            let report = dataset::seed(
                &db,
                &GenConfig::new(scale, dataset::DEFAULT_SEED),
                OnExisting::Refuse,
            )
            .await
            .map_err(|e| DbError::Seed(e.to_string()))?;
            format!("seeded at scale {scale}: {}", report.counts)
        } else {
            format!("existing data: {counts}")
        };
        let Database::Sqlite(pool) = db else {
            return Err(DbError::NotSqlite(url));
        };
        let place = if temp.is_some() {
            "temporary SQLite file".to_owned()
        } else {
            crate::db::redact_url(&url)
        };
        Ok(EvalDb {
            pool,
            description: format!("{place}, {seeded}"),
            temp,
        })
    }

    /// The engine's allowed-values snapshot, loaded from this database the way the
    /// server loads it (the model's database-sourced columns).
    pub async fn allowed_values(&self, model: &SemanticModel) -> AllowedValuesSnapshot {
        let provider = match AllowedValuesProvider::new(
            Database::Sqlite(self.pool.clone()),
            ColumnSpec::from_model(model),
            AllowedValuesConfig::default(),
        ) {
            Ok(p) => p,
            Err(_) => return AllowedValuesSnapshot::from_model_static(model),
        };
        provider.refresh_all().await;
        let snap = provider.snapshot_all().await;
        AllowedValuesSnapshot::from_table_columns(
            model,
            snap.iter().map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)),
        )
    }

    /// Runs hand-written gold SQL.
    pub async fn gold(&self, sql: &str) -> Result<Rows, String> {
        let fut = sqlx::query(sql).fetch_all(&self.pool);
        collect(tokio::time::timeout(STATEMENT_TIMEOUT, fut).await).await
    }

    /// Renders `plan` for SQLite and runs it.
    pub async fn plan(&self, plan: &QueryPlan, model: &SemanticModel) -> Result<Rows, PlanError> {
        let rendered = render(plan, model, Dialect::Sqlite).map_err(|e| PlanError::Render(e.to_string()))?;
        let fut = rendered.sqlite_query().fetch_all(&self.pool);
        collect(tokio::time::timeout(STATEMENT_TIMEOUT, fut).await)
            .await
            .map_err(PlanError::Sql)
    }
}

/// Why a plan produced no rows to compare.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum PlanError {
    /// The renderer refused the plan.
    Render(String),
    /// The database refused the rendered statement (or it timed out).
    Sql(String),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Render(e) => write!(f, "render error: {e}"),
            PlanError::Sql(e) => write!(f, "SQL error: {e}"),
        }
    }
}

async fn collect(
    result: Result<Result<Vec<SqliteRow>, sqlx::Error>, tokio::time::error::Elapsed>,
) -> Result<Rows, String> {
    let rows = match result {
        Err(_) => return Err(format!("timed out after {} s", STATEMENT_TIMEOUT.as_secs())),
        Ok(Err(e)) => return Err(e.to_string()),
        Ok(Ok(rows)) => rows,
    };
    rows.iter().map(row_cells).collect()
}

/// A SQLite row as cells, by each value's storage class.
pub fn row_cells(row: &SqliteRow) -> Result<Vec<Cell>, String> {
    (0..row.len())
        .map(|i| {
            let raw = row.try_get_raw(i).map_err(|e| e.to_string())?;
            if raw.is_null() {
                return Ok(Cell::Null);
            }
            let ty = raw.type_info().name().to_ascii_uppercase();
            let cell = match ty.as_str() {
                "INTEGER" | "BOOLEAN" | "INT" | "BIGINT" => {
                    Cell::Int(row.try_get_unchecked::<i64, _>(i).map_err(|e| e.to_string())?)
                }
                "REAL" | "FLOAT" | "DOUBLE" | "NUMERIC" => {
                    Cell::Real(row.try_get_unchecked::<f64, _>(i).map_err(|e| e.to_string())?)
                }
                "BLOB" => Cell::Text(format!(
                    "{:?}",
                    row.try_get_unchecked::<Vec<u8>, _>(i)
                        .map_err(|e| e.to_string())?
                )),
                _ => Cell::Text(row.try_get_unchecked::<String, _>(i).map_err(|e| e.to_string())?),
            };
            Ok(cell)
        })
        .collect()
}

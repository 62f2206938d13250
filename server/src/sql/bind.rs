//! Binding a [`Rendered`] statement's values onto sqlx queries, per backend.
//!
//! Used by the warehouse executor and by the tests. Values are bound in placeholder
//! order with their own types (dates as `chrono::NaiveDate`, which sqlx writes as ISO
//! text on SQLite and `DATE` on PostgreSQL). This module must not log or format
//! values: generated SQL and its values can carry patient data.

use sqlx::error::BoxDynError;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::sqlite::SqliteArguments;
use sqlx::{Arguments, Postgres, Sqlite};

use super::fragment::BoundValue;
use super::render::Rendered;

/// Binds one value onto a SQLite query.
pub fn bind_sqlite<'q>(
    query: Query<'q, Sqlite, SqliteArguments<'q>>,
    value: &BoundValue,
) -> Query<'q, Sqlite, SqliteArguments<'q>> {
    match value {
        BoundValue::Bool(b) => query.bind(*b),
        BoundValue::Int(i) => query.bind(*i),
        BoundValue::Real(r) => query.bind(*r),
        BoundValue::Text(t) => query.bind(t.clone()),
        BoundValue::Date(d) => query.bind(*d),
    }
}

/// Binds one value onto a PostgreSQL query.
pub fn bind_postgres<'q>(
    query: Query<'q, Postgres, PgArguments>,
    value: &BoundValue,
) -> Query<'q, Postgres, PgArguments> {
    match value {
        BoundValue::Bool(b) => query.bind(*b),
        BoundValue::Int(i) => query.bind(*i),
        BoundValue::Real(r) => query.bind(*r),
        BoundValue::Text(t) => query.bind(t.clone()),
        BoundValue::Date(d) => query.bind(*d),
    }
}

/// All values as SQLite arguments, for `sqlx::query_with` / `query_as_with` /
/// `query_scalar_with`.
pub fn sqlite_arguments(values: &[BoundValue]) -> Result<SqliteArguments<'static>, BoxDynError> {
    let mut args = SqliteArguments::default();
    for v in values {
        match v {
            BoundValue::Bool(b) => args.add(*b)?,
            BoundValue::Int(i) => args.add(*i)?,
            BoundValue::Real(r) => args.add(*r)?,
            BoundValue::Text(t) => args.add(t.clone())?,
            BoundValue::Date(d) => args.add(*d)?,
        }
    }
    Ok(args)
}

/// All values as PostgreSQL arguments (see [`sqlite_arguments`]).
pub fn postgres_arguments(values: &[BoundValue]) -> Result<PgArguments, BoxDynError> {
    let mut args = PgArguments::default();
    for v in values {
        match v {
            BoundValue::Bool(b) => args.add(*b)?,
            BoundValue::Int(i) => args.add(*i)?,
            BoundValue::Real(r) => args.add(*r)?,
            BoundValue::Text(t) => args.add(t.clone())?,
            BoundValue::Date(d) => args.add(*d)?,
        }
    }
    Ok(args)
}

impl Rendered {
    /// The statement as a SQLite query with every value bound.
    pub fn sqlite_query(&self) -> Query<'_, Sqlite, SqliteArguments<'_>> {
        self.values.iter().fold(sqlx::query(&self.sql), bind_sqlite)
    }

    /// The statement as a PostgreSQL query with every value bound.
    pub fn postgres_query(&self) -> Query<'_, Postgres, PgArguments> {
        self.values.iter().fold(sqlx::query(&self.sql), bind_postgres)
    }
}

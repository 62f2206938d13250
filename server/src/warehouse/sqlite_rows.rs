//! An answer's rows read straight out of SQLite into JSON cells.
//!
//! sqlx copies every cell of every row (`sqlite3_value_dup`) into a row object, hands the
//! rows over, and frees each copy after they were decoded into JSON: for a capped answer
//! of 1,001 rows that was about 40 % of the instructions of a clarification round and
//! its answer. Here the statement is prepared, bound and stepped through SQLite's C API
//! on the connection sqlx has locked for us, and each cell is read once, in place, into
//! its JSON cell.
//!
//! The result is exactly what the sqlx path gives ([`super::exec`]'s `decode_row`): the
//! same binding of each value (booleans as 0/1, dates as `YYYY-MM-DD` text), and the
//! same decoding by the rendered column type, including its refusals (a cell whose
//! storage class the column type does not accept fails the statement, as sqlx's type
//! check does). `server/tests/sql_execute.rs` and the tests below compare the two paths
//! cell by cell. A statement this reader does not handle (more than one statement,
//! named parameters) is reported as [`Direct::Unsupported`] and runs through sqlx.
#![allow(unsafe_code)]

use crate::semantic::AttributeType;
use crate::sql::{BoundValue, Rendered};
use libsqlite3_sys as ffi;
use serde_json::Value as Json;
use std::ffi::{CStr, c_int};
use std::ptr;

/// Why the rows were not read.
#[derive(Debug)]
pub enum Direct {
    /// Not a statement this reader handles: run it through sqlx instead.
    Unsupported,
    /// SQLite failed it (preparing, binding or stepping), or a cell did not decode; the
    /// message has the form sqlx's errors have and never contains bound values.
    Failed(String),
}

/// Reads every row of `rendered` on a connection sqlx has locked for the caller: the
/// safe entry point for the warehouse.
pub fn read(
    handle: &mut sqlx::sqlite::LockedSqliteHandle<'_>,
    rendered: &Rendered,
) -> Result<Vec<Vec<Json>>, Direct> {
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: the locked handle is an open connection used only by the locking task
    // while the lock is held, and the lock is held for the whole call.
    unsafe { read_raw(db, rendered) }
}

/// Finalizes the statement however the read ends.
struct Statement(*mut ffi::sqlite3_stmt);

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: a statement prepared on this connection (or null, which is a no-op),
        // finalized exactly once.
        unsafe {
            ffi::sqlite3_finalize(self.0);
        }
    }
}

/// # Safety
/// `db` must be a valid, open connection handle used by this thread only for the
/// duration of the call.
unsafe fn read_raw(db: *mut ffi::sqlite3, rendered: &Rendered) -> Result<Vec<Vec<Json>>, Direct> {
    let sql = rendered.sql.as_bytes();
    let len = c_int::try_from(sql.len()).map_err(|_| Direct::Unsupported)?;
    let mut raw = ptr::null_mut();
    let mut tail = ptr::null();
    // SAFETY: `sql` is valid for `len` bytes; SQLite writes the statement and the tail.
    let rc = unsafe { ffi::sqlite3_prepare_v3(db, sql.as_ptr().cast(), len, 0, &mut raw, &mut tail) };
    let stmt = Statement(raw);
    if rc != ffi::SQLITE_OK {
        return Err(unsafe { failure(db, rc) });
    }
    if stmt.0.is_null() {
        // nothing but white space or a comment: sqlx's business
        return Err(Direct::Unsupported);
    }
    // `tail` points into `sql`, after the first statement
    let used = (tail as usize)
        .saturating_sub(sql.as_ptr() as usize)
        .min(sql.len());
    match rendered.sql.get(used..) {
        Some(rest) if rest.trim().is_empty() => {}
        // another statement follows (or the tail is not where it should be): sqlx's business
        _ => return Err(Direct::Unsupported),
    }
    unsafe { bind(db, stmt.0, &rendered.values) }?;

    let columns: Vec<AttributeType> = rendered.columns.iter().map(|c| c.ty).collect();
    // SAFETY (every call below): `stmt.0` is a live statement of `db`, used by this
    // thread only; column indexes are below the statement's column count.
    let count = usize::try_from(unsafe { ffi::sqlite3_column_count(stmt.0) }).unwrap_or(0);
    let mut rows = Vec::new();
    loop {
        match unsafe { ffi::sqlite3_step(stmt.0) } {
            ffi::SQLITE_ROW => {}
            ffi::SQLITE_DONE => break,
            rc => return Err(unsafe { failure(db, rc) }),
        }
        let mut cells = Vec::with_capacity(columns.len());
        for (i, ty) in columns.iter().enumerate() {
            if i >= count {
                return Err(Direct::Failed(format!(
                    "column index out of bounds: the len is {count}, but the index is {i}"
                )));
            }
            cells.push(
                unsafe { cell(stmt.0, i as c_int, *ty) }
                    .map_err(|e| Direct::Failed(format!("error occurred while decoding column {i}: {e}")))?,
            );
        }
        rows.push(cells);
    }
    Ok(rows)
}

/// Binds `values` to the statement's positional parameters, as sqlx's arguments do.
///
/// # Safety
/// `stmt` is a live statement of `db`, used by this thread only.
unsafe fn bind(
    db: *mut ffi::sqlite3,
    stmt: *mut ffi::sqlite3_stmt,
    values: &[BoundValue],
) -> Result<(), Direct> {
    let params = unsafe { ffi::sqlite3_bind_parameter_count(stmt) };
    for p in 1..=params {
        if !unsafe { ffi::sqlite3_bind_parameter_name(stmt, p) }.is_null() {
            // `?NNN`, `$NNN` or `:name`: sqlx's mapping, not ours
            return Err(Direct::Unsupported);
        }
        // sqlx leaves parameters beyond the values unbound (NULL)
        let Some(v) = values.get(p as usize - 1) else {
            break;
        };
        let rc = match v {
            BoundValue::Bool(b) => unsafe { ffi::sqlite3_bind_int(stmt, p, c_int::from(*b)) },
            BoundValue::Int(i) => unsafe { ffi::sqlite3_bind_int64(stmt, p, *i) },
            BoundValue::Real(r) => unsafe { ffi::sqlite3_bind_double(stmt, p, *r) },
            BoundValue::Text(t) => unsafe { bind_text(stmt, p, t) },
            BoundValue::Date(d) => unsafe { bind_text(stmt, p, &d.format("%F").to_string()) },
        };
        if rc != ffi::SQLITE_OK {
            return Err(unsafe { failure(db, rc) });
        }
    }
    Ok(())
}

/// # Safety
/// `stmt` is a live statement used by this thread only; SQLite copies the text.
unsafe fn bind_text(stmt: *mut ffi::sqlite3_stmt, p: c_int, text: &str) -> c_int {
    unsafe {
        ffi::sqlite3_bind_text64(
            stmt,
            p,
            text.as_ptr().cast(),
            text.len() as u64,
            ffi::SQLITE_TRANSIENT(),
            ffi::SQLITE_UTF8 as u8,
        )
    }
}

/// Cell `i` of the current row as its JSON cell, by the rendered column type. A NULL is
/// `null` whatever the type; otherwise the storage class must be one the type accepts
/// (sqlx: `i64` and `bool` take INTEGER, `f64` takes REAL, `String` takes TEXT).
///
/// # Safety
/// `stmt` has a current row (the last step returned `SQLITE_ROW`) and `i` is below its
/// column count.
unsafe fn cell(stmt: *mut ffi::sqlite3_stmt, i: c_int, ty: AttributeType) -> Result<Json, String> {
    let class = unsafe { ffi::sqlite3_column_type(stmt, i) };
    if class == ffi::SQLITE_NULL {
        return Ok(Json::Null);
    }
    let (accepts, rust, sql) = match ty {
        AttributeType::Integer => (ffi::SQLITE_INTEGER, "i64", "INTEGER"),
        AttributeType::Real => (ffi::SQLITE_FLOAT, "f64", "REAL"),
        AttributeType::Boolean => (ffi::SQLITE_INTEGER, "bool", "BOOLEAN"),
        AttributeType::Text | AttributeType::Date => (ffi::SQLITE_TEXT, "alloc::string::String", "TEXT"),
    };
    if class != accepts {
        return Err(format!(
            "mismatched types; Rust type `core::option::Option<{rust}>` (as SQL type `{sql}`) is not \
             compatible with SQL type `{}`",
            class_name(class)
        ));
    }
    Ok(match ty {
        AttributeType::Integer => Json::from(unsafe { ffi::sqlite3_column_int64(stmt, i) }),
        AttributeType::Boolean => Json::Bool(unsafe { ffi::sqlite3_column_int64(stmt, i) } != 0),
        AttributeType::Real => serde_json::Number::from_f64(unsafe { ffi::sqlite3_column_double(stmt, i) })
            .map_or(Json::Null, Json::Number),
        AttributeType::Text | AttributeType::Date => {
            // the text first, then its length (SQLite's documented order)
            let text = unsafe { ffi::sqlite3_column_text(stmt, i) };
            let len = usize::try_from(unsafe { ffi::sqlite3_column_bytes(stmt, i) }).unwrap_or(0);
            let bytes = if text.is_null() || len == 0 {
                &[][..]
            } else {
                // SAFETY: SQLite's buffer of `len` bytes, valid until the next step
                unsafe { std::slice::from_raw_parts(text, len) }
            };
            Json::String(std::str::from_utf8(bytes).map_err(|e| e.to_string())?.to_owned())
        }
    })
}

fn class_name(class: c_int) -> &'static str {
    match class {
        ffi::SQLITE_INTEGER => "INTEGER",
        ffi::SQLITE_FLOAT => "REAL",
        ffi::SQLITE_TEXT => "TEXT",
        ffi::SQLITE_BLOB => "BLOB",
        _ => "NULL",
    }
}

/// The connection's error as sqlx words it ("error returned from database: (code: N) …").
///
/// # Safety
/// `db` is a valid connection used by this thread only.
unsafe fn failure(db: *mut ffi::sqlite3, rc: c_int) -> Direct {
    let code = unsafe { ffi::sqlite3_extended_errcode(db) };
    let code = if code == ffi::SQLITE_OK { rc } else { code };
    let msg = unsafe { ffi::sqlite3_errmsg(db) };
    let message = if msg.is_null() {
        String::from("unknown error")
    } else {
        // SAFETY: a NUL-terminated message owned by SQLite until the next call
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    };
    Direct::Failed(format!("error returned from database: (code: {code}) {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{ColumnSource, Dialect, OutputColumn, bind};
    use chrono::NaiveDate;
    use sqlx::SqlitePool;
    use sqlx::sqlite::SqlitePoolOptions;

    async fn pool() -> SqlitePool {
        SqlitePoolOptions::new()
            .max_connections(1)
            .connect("sqlite::memory:")
            .await
            .unwrap()
    }

    fn statement(sql: &str, values: Vec<BoundValue>, types: &[AttributeType]) -> Rendered {
        Rendered {
            dialect: Dialect::Sqlite,
            sql: sql.to_owned(),
            values,
            columns: types
                .iter()
                .enumerate()
                .map(|(i, ty)| OutputColumn {
                    name: format!("c{i}"),
                    label: format!("c{i}"),
                    ty: *ty,
                    source: ColumnSource::RowCount,
                })
                .collect(),
            row_cap: None,
        }
    }

    /// The rows read here, and as sqlx reads and decodes them (`Err` holds no detail:
    /// both must fail, or both give the same cells).
    async fn both(
        pool: &SqlitePool,
        r: &Rendered,
    ) -> (Result<Vec<Vec<Json>>, String>, Result<Vec<Vec<Json>>, String>) {
        let mut conn = pool.acquire().await.unwrap();
        let direct = {
            let mut handle = conn.lock_handle().await.unwrap();
            read(&mut handle, r).map_err(|e| format!("{e:?}"))
        };
        let args = bind::sqlite_arguments(&r.values).unwrap();
        let via_sqlx = match sqlx::query_with(&r.sql, args).fetch_all(&mut *conn).await {
            Ok(rows) => rows
                .iter()
                .map(|row| super::super::exec::decode_sqlite(row, r))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        (direct, via_sqlx)
    }

    #[tokio::test]
    async fn every_storage_class_decodes_as_sqlx_decodes_it_under_every_column_type() {
        let pool = pool().await;
        let values = [
            "1",
            "-7",
            "9223372036854775807",
            "0",
            "1.5",
            "2.0",
            "-0.25",
            "1e308",
            "1e999",
            "'text'",
            "''",
            "'2026-11-28'",
            "'é ü ✓'",
            "x'00ff'",
            "x''",
            "NULL",
            "0.0/0.0",
        ];
        let types = [
            AttributeType::Integer,
            AttributeType::Real,
            AttributeType::Boolean,
            AttributeType::Text,
            AttributeType::Date,
        ];
        let mut compared = 0;
        for v in values {
            for ty in types {
                let r = statement(&format!("SELECT {v}"), Vec::new(), &[ty]);
                let (direct, via_sqlx) = both(&pool, &r).await;
                match (&direct, &via_sqlx) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{v} as {ty:?}"),
                    (Err(a), Err(_)) => assert!(a.starts_with("Failed"), "{v} as {ty:?}: {a}"),
                    _ => panic!("{v} as {ty:?}: direct {direct:?}, sqlx {via_sqlx:?}"),
                }
                // the JSON text too (a float stays a float: `2.0`, never `2`)
                if let (Ok(a), Ok(b)) = (&direct, &via_sqlx) {
                    assert_eq!(
                        serde_json::to_string(a).unwrap(),
                        serde_json::to_string(b).unwrap()
                    );
                }
                compared += 1;
            }
        }
        assert_eq!(compared, values.len() * types.len());
        // the refusals are the type checks sqlx makes, not something else
        let r = statement("SELECT 1.5", Vec::new(), &[AttributeType::Integer]);
        let (direct, _) = both(&pool, &r).await;
        assert!(direct.unwrap_err().contains("mismatched types"));
    }

    #[tokio::test]
    async fn values_are_bound_as_sqlx_binds_them() {
        let pool = pool().await;
        let values = vec![
            BoundValue::Bool(true),
            BoundValue::Bool(false),
            BoundValue::Int(-42),
            BoundValue::Real(2.5),
            BoundValue::Text("o'neil; DROP TABLE x --".into()),
            BoundValue::Date(NaiveDate::from_ymd_opt(2026, 2, 3).unwrap()),
        ];
        // each value's storage class and value as SQLite sees it
        let sql = "SELECT typeof(?), typeof(?), typeof(?), typeof(?), typeof(?), typeof(?)";
        let r = statement(sql, values.clone(), &[AttributeType::Text; 6]);
        let (direct, via_sqlx) = both(&pool, &r).await;
        assert_eq!(direct, via_sqlx);
        let sql = "SELECT ?, ?, ?, ?, ?, ?";
        let types = [
            AttributeType::Boolean,
            AttributeType::Integer,
            AttributeType::Integer,
            AttributeType::Real,
            AttributeType::Text,
            AttributeType::Date,
        ];
        let r = statement(sql, values.clone(), &types);
        let (direct, via_sqlx) = both(&pool, &r).await;
        assert_eq!(direct, via_sqlx);
        assert_eq!(
            direct.unwrap()[0],
            vec![
                Json::Bool(true),
                Json::from(0),
                Json::from(-42),
                Json::from(2.5),
                Json::from("o'neil; DROP TABLE x --"),
                Json::from("2026-02-03"),
            ]
        );
        // fewer values than placeholders: the rest are NULL, as with sqlx
        let r = statement(
            "SELECT ?, ?",
            vec![BoundValue::Int(1)],
            &[AttributeType::Integer; 2],
        );
        let (direct, via_sqlx) = both(&pool, &r).await;
        assert_eq!(direct, via_sqlx);
        assert_eq!(direct.unwrap(), vec![vec![Json::from(1), Json::Null]]);
    }

    #[tokio::test]
    async fn many_rows_come_in_order_and_failures_are_errors_not_panics() {
        let pool = pool().await;
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001) \
                   SELECT i, i * 0.5, 'row ' || i, NULL FROM n ORDER BY i";
        let types = [
            AttributeType::Integer,
            AttributeType::Real,
            AttributeType::Text,
            AttributeType::Date,
        ];
        let r = statement(sql, Vec::new(), &types);
        let (direct, via_sqlx) = both(&pool, &r).await;
        let rows = direct.unwrap();
        assert_eq!(rows.len(), 1001);
        assert_eq!(rows[1000][2], Json::from("row 1001"));
        assert_eq!(Ok(rows), via_sqlx);
        // a syntax error, an unknown table, more columns than the statement has
        for (sql, types) in [
            ("SELEC 1", &[AttributeType::Integer][..]),
            ("SELECT x FROM no_such_table", &[AttributeType::Integer][..]),
            ("SELECT 1", &[AttributeType::Integer, AttributeType::Integer][..]),
        ] {
            let (direct, via_sqlx) = both(&pool, &statement(sql, Vec::new(), types)).await;
            assert!(
                matches!(direct, Err(ref e) if e.starts_with("Failed")),
                "{sql}: {direct:?}"
            );
            assert!(via_sqlx.is_err(), "{sql}");
        }
        // an error's text is SQLite's, worded as sqlx words it
        let mut conn = pool.acquire().await.unwrap();
        let mut handle = conn.lock_handle().await.unwrap();
        let e = read(
            &mut handle,
            &statement(
                "SELECT x FROM no_such_table",
                Vec::new(),
                &[AttributeType::Integer],
            ),
        );
        assert!(
            matches!(&e, Err(Direct::Failed(m)) if m.starts_with("error returned from database: (code: 1) no such table")),
            "{e:?}"
        );
        // no rows is no rows, whatever the columns
        let e = read(
            &mut handle,
            &statement("SELECT 1 WHERE 0", Vec::new(), &[AttributeType::Integer; 3]),
        );
        assert!(matches!(e, Ok(ref rows) if rows.is_empty()), "{e:?}");
    }

    #[tokio::test]
    async fn statements_it_does_not_read_are_left_to_sqlx() {
        let pool = pool().await;
        let mut conn = pool.acquire().await.unwrap();
        let mut handle = conn.lock_handle().await.unwrap();
        for sql in [
            "SELECT 1; SELECT 2",
            "SELECT 1; -- a note",
            "SELECT ?1",
            "SELECT :a",
            "",
            "  -- nothing",
        ] {
            let r = statement(sql, vec![BoundValue::Int(1)], &[AttributeType::Integer]);
            assert!(
                matches!(read(&mut handle, &r), Err(Direct::Unsupported)),
                "{sql:?}"
            );
        }
        // trailing white space and a semicolon are one statement
        let r = statement("SELECT 1;  \n", Vec::new(), &[AttributeType::Integer]);
        assert_eq!(read(&mut handle, &r).unwrap(), vec![vec![Json::from(1)]]);
    }
}

//! Least privilege for the warehouse: whatever reaches it, it can read the
//! clinical tables and nothing else (not `users`, `sessions`, `api_tokens`, …).
//!
//! - SQLite: an authorizer on every warehouse connection (installed when the
//!   connection opens, before its first statement) allows `SELECT` and reads of the
//!   clinical tables only; anything else fails when the statement is prepared ("not
//!   authorized").
//! - PostgreSQL: the migration creates the role `clarion_warehouse` with
//!   `SELECT` on the clinical tables only and makes Clarion's login a member;
//!   each warehouse transaction runs `SET LOCAL ROLE clarion_warehouse`. Where
//!   the login may not create roles the migration skips it with a notice, and
//!   the warehouse logs once that it reads with the login's own privileges.
//!
//! `unsafe` code (one of two places in the workspace, with `sqlite_rows`): sqlx has no
//! safe binding for `sqlite3_set_authorizer`, so the callback and its installation use
//! the C API of the same `libsqlite3-sys` that sqlx links.
#![allow(unsafe_code)]

use std::collections::HashSet;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::LazyLock;

/// The PostgreSQL role the warehouse reads as (created by the migrations).
pub const WAREHOUSE_ROLE: &str = "clarion_warehouse";

/// The tables the warehouse may read (the semantic model's entities). The set
/// lives for the whole process (it is made once per warehouse, a handful of
/// names): SQLite keeps a pointer to it in each connection's authorizer, so it
/// must never be freed while a connection might still prepare a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadableTables(&'static HashSet<String>);

static NONE: LazyLock<HashSet<String>> = LazyLock::new(HashSet::new);

impl Default for ReadableTables {
    fn default() -> Self {
        ReadableTables(&NONE)
    }
}

impl ReadableTables {
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(tables: I) -> Self {
        ReadableTables(Box::leak(Box::new(tables.into_iter().map(Into::into).collect())))
    }

    pub fn contains(&self, table: &str) -> bool {
        self.0.contains(table)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The names, sorted (for PostgreSQL's privilege check).
    pub fn sorted(&self) -> Vec<String> {
        let mut v: Vec<String> = self.0.iter().cloned().collect();
        v.sort();
        v
    }
}

// SQLite action codes (sqlite3.h).
const SQLITE_OK: c_int = 0;
const SQLITE_DENY: c_int = 1;
const SQLITE_READ: c_int = 20;
const SQLITE_SELECT: c_int = 21;
const SQLITE_FUNCTION: c_int = 31;
const SQLITE_RECURSIVE: c_int = 33;

/// The authorizer callback: `data` points at the connection's [`ReadableTables`].
unsafe extern "C" fn authorize(
    data: *mut c_void,
    action: c_int,
    arg1: *const c_char,
    _arg2: *const c_char,
    _db: *const c_char,
    _trigger: *const c_char,
) -> c_int {
    match action {
        SQLITE_SELECT | SQLITE_FUNCTION | SQLITE_RECURSIVE => SQLITE_OK,
        SQLITE_READ => {
            if data.is_null() || arg1.is_null() {
                return SQLITE_DENY;
            }
            // SAFETY: `data` is the `&'static` set installed with this callback;
            // `arg1` is a NUL-terminated table name owned by SQLite for the call.
            let tables = unsafe { &*(data as *const HashSet<String>) };
            let table = unsafe { CStr::from_ptr(arg1) };
            match table.to_str() {
                Ok(t) if tables.contains(t) => SQLITE_OK,
                _ => SQLITE_DENY,
            }
        }
        _ => SQLITE_DENY,
    }
}

/// Installs the authorizer on a raw SQLite connection (`tables` lives for the
/// whole process, so the pointer SQLite keeps stays valid).
///
/// # Safety
/// `db` must be a valid, open connection handle used by this thread only for
/// the duration of the call (sqlx's locked handle guarantees both).
pub unsafe fn install_sqlite_authorizer(db: *mut libsqlite3_sys::sqlite3, tables: &ReadableTables) {
    let data = tables.0 as *const HashSet<String> as *mut c_void;
    // SAFETY: see the function's contract; the callback only reads `data`.
    unsafe {
        libsqlite3_sys::sqlite3_set_authorizer(db, Some(authorize), data);
    }
}

/// Installs the authorizer on a connection sqlx has locked for the caller: the
/// safe entry point for the warehouse.
pub fn install_on(handle: &mut sqlx::sqlite::LockedSqliteHandle<'_>, tables: &ReadableTables) {
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: the locked handle is an open connection used only by the locking
    // task while the lock is held; `tables` is `'static`.
    unsafe { install_sqlite_authorizer(db, tables) }
}

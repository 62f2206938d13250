//! The one macro that lets a statement run on either pool.

/// Runs one expression with `$p` bound to the active pool. The body is
/// compiled once per backend, so generic sqlx calls type-check against both.
macro_rules! on_pool {
    ($db:expr, |$p:ident| $body:expr) => {
        match $db {
            $crate::db::Database::Sqlite($p) => $body,
            $crate::db::Database::Postgres($p) => $body,
        }
    };
}

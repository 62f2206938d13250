//! One transaction over Clarion's own tables: the writes one request makes
//! (its thread, messages, clarification round and answers, history entry,
//! audit entry, preferences) committed together.
//!
//! On PostgreSQL every commit waits for its WAL flush, so an answer that
//! committed its five writes one by one paid five flushes; one [`StoreTx`] per
//! request pays one. All of the writes are stored or none is: a failure drops
//! the transaction, which rolls back. The same methods on [`Store`] run one
//! write in a transaction of its own, through the code here.
//!
//! A `StoreTx` holds a pooled connection and, on SQLite, the write lock once it
//! has written: callers collect what to write first, open it after the slow
//! work (never around a clinical query) and commit at once.

use super::{Store, StoreError};
use crate::db::Database;

/// The backend's transaction.
pub(super) enum Tx {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

/// An open transaction on Clarion's tables (see the module doc).
pub struct StoreTx {
    pub(super) tx: Tx,
}

impl std::fmt::Debug for StoreTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreTx")
    }
}

/// Runs one expression with `$c` bound to the transaction's connection, like
/// [`on_pool!`] for a pool. Reborrow it (`&mut *$c`) for each statement.
macro_rules! on_tx {
    ($tx:expr, |$c:ident| $body:expr) => {
        match &mut $tx.tx {
            $crate::store::tx::Tx::Sqlite(t) => {
                let $c: &mut sqlx::SqliteConnection = &mut **t;
                $body
            }
            $crate::store::tx::Tx::Postgres(t) => {
                let $c: &mut sqlx::PgConnection = &mut **t;
                $body
            }
        }
    };
}

impl Store {
    /// Opens a transaction for several writes to commit together.
    pub async fn begin(&self) -> Result<StoreTx, StoreError> {
        let tx = match &self.db {
            Database::Sqlite(p) => Tx::Sqlite(p.begin().await?),
            Database::Postgres(p) => Tx::Postgres(p.begin().await?),
        };
        Ok(StoreTx { tx })
    }
}

impl StoreTx {
    /// Stores every write made through this transaction. On an error nothing
    /// of it is stored.
    pub async fn commit(self) -> Result<(), StoreError> {
        match self.tx {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::Postgres(t) => t.commit().await?,
        }
        Ok(())
    }
}

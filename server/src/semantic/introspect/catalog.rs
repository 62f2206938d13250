//! Reads a database's schema from its catalog: tables, columns with declared types,
//! primary keys and single-column foreign keys (SQLite: `sqlite_master` and the
//! `pragma_*` table functions; PostgreSQL: `information_schema` and `pg_catalog`, in
//! the current schema), plus the few data probes introspection needs (bounded distinct
//! counts and small samples).
//!
//! Read-only: only `SELECT`s. Table and column names come from the catalog, never from
//! a user, and are quoted (with embedded quotes doubled) because identifiers cannot be
//! bound as parameters.

use crate::db::Database;

/// One table as the catalog describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawTable {
    pub name: String,
    /// Columns in declaration order.
    pub columns: Vec<RawColumn>,
    /// Primary-key columns in key order (empty when there is none).
    pub primary_key: Vec<String>,
    pub foreign_keys: Vec<RawForeignKey>,
}

/// One column as the catalog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawColumn {
    pub name: String,
    /// Declared type as the database reports it (`INTEGER`, `double precision`, …; for
    /// a PostgreSQL enum or extension type, the type's own name).
    pub sql_type: String,
    pub nullable: bool,
    /// A PostgreSQL user-defined type (enum, `citext`, …).
    pub user_defined: bool,
}

/// A foreign key: `columns` of this table reference `ref_columns` of `ref_table`.
/// SQLite leaves `ref_columns` empty when the key references the primary key implicitly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawForeignKey {
    pub columns: Vec<String>,
    pub ref_table: String,
    pub ref_columns: Vec<String>,
}

/// Quotes an identifier read from the catalog.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Every ordinary table with its columns, keys and foreign keys, sorted by name.
pub async fn read_tables(db: &Database) -> Result<Vec<RawTable>, sqlx::Error> {
    match db {
        Database::Sqlite(pool) => {
            let names: Vec<String> = sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
                 AND COALESCE(sql, '') NOT LIKE 'CREATE VIRTUAL%' ORDER BY name",
            )
            .fetch_all(pool)
            .await?;
            let mut tables = Vec::with_capacity(names.len());
            for name in names {
                let cols: Vec<(String, String, i64, i64)> = sqlx::query_as(
                    "SELECT name, type, \"notnull\", pk FROM pragma_table_info($1) ORDER BY cid",
                )
                .bind(&name)
                .fetch_all(pool)
                .await?;
                let mut pk: Vec<(i64, String)> = cols
                    .iter()
                    .filter(|c| c.3 > 0)
                    .map(|c| (c.3, c.0.clone()))
                    .collect();
                pk.sort();
                let columns = cols
                    .into_iter()
                    .map(|(name, sql_type, notnull, pk)| RawColumn {
                        name,
                        sql_type,
                        nullable: notnull == 0 && pk == 0,
                        user_defined: false,
                    })
                    .collect();
                let fk_rows: Vec<(i64, String, String, Option<String>)> = sqlx::query_as(
                    "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list($1) ORDER BY id, seq",
                )
                .bind(&name)
                .fetch_all(pool)
                .await?;
                let mut foreign_keys: Vec<(i64, RawForeignKey)> = Vec::new();
                for (id, ref_table, from, to) in fk_rows {
                    match foreign_keys.last_mut() {
                        Some((last, fk)) if *last == id => {
                            fk.columns.push(from);
                            fk.ref_columns.extend(to);
                        }
                        _ => foreign_keys.push((
                            id,
                            RawForeignKey {
                                columns: vec![from],
                                ref_table,
                                ref_columns: to.into_iter().collect(),
                            },
                        )),
                    }
                }
                tables.push(RawTable {
                    name,
                    columns,
                    primary_key: pk.into_iter().map(|(_, c)| c).collect(),
                    foreign_keys: foreign_keys.into_iter().map(|(_, fk)| fk).collect(),
                });
            }
            Ok(tables)
        }
        Database::Postgres(pool) => {
            let names: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
            )
            .fetch_all(pool)
            .await?;
            let mut tables: Vec<RawTable> = names
                .into_iter()
                .map(|name| RawTable {
                    name,
                    ..RawTable::default()
                })
                .collect();
            let find = |tables: &[RawTable], name: &str| tables.iter().position(|t| t.name == name);

            let cols: Vec<(String, String, String, String, bool)> = sqlx::query_as(
                "SELECT table_name::text, column_name::text, data_type::text, udt_name::text, \
                        (is_nullable::text = 'YES') \
                 FROM information_schema.columns WHERE table_schema = current_schema() \
                 ORDER BY table_name, ordinal_position",
            )
            .fetch_all(pool)
            .await?;
            for (table, name, data_type, udt, nullable) in cols {
                if let Some(i) = find(&tables, &table) {
                    // Enums and extension types report USER-DEFINED; their own name says more.
                    let user_defined = data_type == "USER-DEFINED";
                    let sql_type = if user_defined { udt } else { data_type };
                    tables[i].columns.push(RawColumn {
                        name,
                        sql_type,
                        nullable,
                        user_defined,
                    });
                }
            }

            let pks: Vec<(String, String)> = sqlx::query_as(
                "SELECT c.relname::text, a.attname::text \
                 FROM pg_index i \
                 JOIN pg_class c ON c.oid = i.indrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey) \
                 WHERE i.indisprimary AND n.nspname = current_schema() \
                 ORDER BY c.relname, array_position(i.indkey::int2[], a.attnum)",
            )
            .fetch_all(pool)
            .await?;
            for (table, column) in pks {
                if let Some(i) = find(&tables, &table) {
                    tables[i].primary_key.push(column);
                }
            }

            // One row per column pair of every foreign key, in key order.
            let fks: Vec<(String, String, String, String, String)> = sqlx::query_as(
                "SELECT co.conname::text, cl.relname::text, a.attname::text, rcl.relname::text, ra.attname::text \
                 FROM pg_constraint co \
                 JOIN pg_class cl ON cl.oid = co.conrelid \
                 JOIN pg_namespace n ON n.oid = cl.relnamespace \
                 JOIN pg_class rcl ON rcl.oid = co.confrelid \
                 JOIN pg_namespace rn ON rn.oid = rcl.relnamespace \
                 CROSS JOIN LATERAL unnest(co.conkey, co.confkey) WITH ORDINALITY AS k (attnum, refnum, ord) \
                 JOIN pg_attribute a ON a.attrelid = co.conrelid AND a.attnum = k.attnum \
                 JOIN pg_attribute ra ON ra.attrelid = co.confrelid AND ra.attnum = k.refnum \
                 WHERE co.contype = 'f' AND n.nspname = current_schema() AND rn.nspname = current_schema() \
                 ORDER BY cl.relname, co.conname, k.ord",
            )
            .fetch_all(pool)
            .await?;
            let mut last: Option<(String, String)> = None;
            for (constraint, table, column, ref_table, ref_column) in fks {
                let Some(i) = find(&tables, &table) else { continue };
                let key = (table.clone(), constraint);
                let same = last.as_ref() == Some(&key);
                match tables[i].foreign_keys.last_mut() {
                    Some(fk) if same => {
                        fk.columns.push(column);
                        fk.ref_columns.push(ref_column);
                    }
                    _ => tables[i].foreign_keys.push(RawForeignKey {
                        columns: vec![column],
                        ref_table,
                        ref_columns: vec![ref_column],
                    }),
                }
                last = Some(key);
            }
            Ok(tables)
        }
    }
}

/// How many distinct non-null values a column has, counting at most `limit + 1` (so a
/// huge column costs no more than a small one past the point that matters).
pub async fn distinct_count(
    db: &Database,
    table: &str,
    column: &str,
    limit: usize,
) -> Result<usize, sqlx::Error> {
    let (t, c) = (quote_ident(table), quote_ident(column));
    let sql = format!(
        "SELECT COUNT(*) FROM (SELECT DISTINCT CAST({c} AS TEXT) AS v FROM {t} WHERE {c} IS NOT NULL LIMIT $1) AS d"
    );
    let bound = i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1;
    let n: i64 = match db {
        Database::Sqlite(p) => sqlx::query_scalar(&sql).bind(bound).fetch_one(p).await?,
        Database::Postgres(p) => sqlx::query_scalar(&sql).bind(bound).fetch_one(p).await?,
    };
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The distinct non-null values of a column as text, at most `limit`, in byte order.
pub async fn distinct_values(
    db: &Database,
    table: &str,
    column: &str,
    limit: usize,
) -> Result<Vec<String>, sqlx::Error> {
    let (t, c) = (quote_ident(table), quote_ident(column));
    let bound = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut values: Vec<String> = match db {
        Database::Sqlite(p) => {
            let sql = format!(
                "SELECT DISTINCT CAST({c} AS TEXT) AS v FROM {t} WHERE {c} IS NOT NULL ORDER BY v LIMIT $1"
            );
            sqlx::query_scalar(&sql).bind(bound).fetch_all(p).await?
        }
        Database::Postgres(p) => {
            let sql = format!(
                "SELECT DISTINCT CAST({c} AS TEXT) COLLATE \"C\" AS v FROM {t} WHERE {c} IS NOT NULL \
                 ORDER BY v LIMIT $1"
            );
            sqlx::query_scalar(&sql).bind(bound).fetch_all(p).await?
        }
    };
    values.sort();
    Ok(values)
}

/// Up to `n` non-null values of a column as text (any rows), to check what a column
/// really holds.
pub async fn sample(db: &Database, table: &str, column: &str, n: usize) -> Result<Vec<String>, sqlx::Error> {
    let (t, c) = (quote_ident(table), quote_ident(column));
    let sql = format!("SELECT CAST({c} AS TEXT) FROM {t} WHERE {c} IS NOT NULL LIMIT $1");
    let bound = i64::try_from(n).unwrap_or(i64::MAX);
    match db {
        Database::Sqlite(p) => sqlx::query_scalar(&sql).bind(bound).fetch_all(p).await,
        Database::Postgres(p) => sqlx::query_scalar(&sql).bind(bound).fetch_all(p).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_doubles_embedded_quotes() {
        assert_eq!(quote_ident("wounds"), "\"wounds\"");
        assert_eq!(quote_ident("bookLoans"), "\"bookLoans\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}

//! Index recommendations for a customer's schema (`server introspect --indexes`): the
//! indexes the model's derived attributes need to be fast, and whether the database
//! already has one that serves each.
//!
//! - A wound's latest or first value (`latest` / `first`) reads the related rows of one
//!   parent in date order: an index on the child's reference, then the ordering date,
//!   then the child's key (the tie-break) — walked forwards or backwards, so one index
//!   serves both.
//! - A count of related rows (`count_related`) needs an index on the reference.
//! - Each step of a longer join path needs its reference indexed.
//!
//! An existing index serves a recommendation when its leading columns are the
//! recommended ones in order; on SQLite an index ends in the row id, so a trailing key
//! that is the row id (`INTEGER PRIMARY KEY`) is implied. Clarion never creates an index
//! in a database it only reads: it prints the statements for the database's owner.

use super::catalog::{RawTable, quote_ident};
use crate::db::Database;
use crate::semantic::{Derived, JoinStep, SemanticModel};
use std::collections::BTreeMap;

/// One index the model needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexNeed {
    pub table: String,
    pub columns: Vec<String>,
    /// The model's attributes that need it (`wounds.latest_area`, …).
    pub for_attributes: Vec<String>,
    /// The existing index that serves it, if any.
    pub served_by: Option<String>,
}

impl IndexNeed {
    /// The statement creating it (for the database's owner to run).
    pub fn create_statement(&self) -> String {
        let name = format!("{}_{}", self.table, self.columns.join("_"));
        format!(
            "CREATE INDEX {} ON {} ({});",
            quote_ident(&name),
            quote_ident(&self.table),
            self.columns
                .iter()
                .map(|c| quote_ident(c))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The indexes `model`'s derived attributes need, keyed (table, columns), in model order.
pub fn needed(model: &SemanticModel) -> Vec<IndexNeed> {
    let mut out: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
    let column_of = |qualified: &str| {
        model
            .attribute(qualified)
            .and_then(|a| a.attribute.column.clone().map(|c| (a.entity.table.clone(), c)))
    };
    // each one-to-many step: (child table, [reference column])
    let step_refs = |path: &[JoinStep<'_>]| -> Vec<(String, String)> {
        path.iter()
            .filter_map(|s| {
                // the side holding the reference is `from`; a step in either direction
                // looks rows up by it when it walks to the many side
                if s.forward { None } else { column_of(&s.join.from) }
            })
            .collect()
    };
    for entity in &model.entities {
        for attr in &entity.attributes {
            let qualified = format!("{}.{}", entity.name, attr.name);
            let Some(derived) = &attr.derived else { continue };
            match derived {
                Derived::Latest { attribute, by } | Derived::First { attribute, by } => {
                    let Some(target) = model.attribute(attribute) else {
                        continue;
                    };
                    let Some(path) = model.join_path(&entity.name, &target.entity.name) else {
                        continue;
                    };
                    let date = match by {
                        Some(b) => column_of(b).map(|(_, c)| c),
                        None => model
                            .default_time_dimension(&target.entity.name)
                            .and_then(|d| column_of(&d.attribute))
                            .map(|(_, c)| c),
                    };
                    let key =
                        column_of(&format!("{}.{}", target.entity.name, target.entity.key)).map(|(_, c)| c);
                    let refs = step_refs(&path);
                    for (i, (table, fk)) in refs.iter().enumerate() {
                        let mut columns = vec![fk.clone()];
                        // the last step is ordered by the date, ties by the key
                        if i + 1 == refs.len()
                            && *table == target.entity.table
                            && let (Some(d), Some(k)) = (&date, &key)
                        {
                            columns.extend([d.clone(), k.clone()]);
                        }
                        out.entry((table.clone(), columns))
                            .or_default()
                            .push(qualified.clone());
                    }
                }
                Derived::CountRelated { entity: related } => {
                    let Some(path) = model.join_path(&entity.name, related) else {
                        continue;
                    };
                    for (table, fk) in step_refs(&path) {
                        out.entry((table, vec![fk])).or_default().push(qualified.clone());
                    }
                }
                _ => {}
            }
        }
    }
    // an index needed on (a) only is served by one on (a, b, c): keep the longest
    let keys: Vec<(String, Vec<String>)> = out.keys().cloned().collect();
    for (table, cols) in &keys {
        let longer = keys
            .iter()
            .find(|(t, c)| t == table && c.len() > cols.len() && c.starts_with(cols))
            .cloned();
        if let Some(longer) = longer
            && let Some(attrs) = out.remove(&(table.clone(), cols.clone()))
        {
            out.entry(longer).or_default().extend(attrs);
        }
    }
    out.into_iter()
        .map(|((table, columns), mut for_attributes)| {
            for_attributes.sort();
            for_attributes.dedup();
            IndexNeed {
                table,
                columns,
                for_attributes,
                served_by: None,
            }
        })
        .collect()
}

/// Every index of the database: (table, index name, columns in order). SQLite's
/// indexes get the row id's column appended when the table has an `INTEGER PRIMARY KEY`.
pub async fn existing(
    db: &Database,
    tables: &[RawTable],
) -> Result<Vec<(String, String, Vec<String>)>, sqlx::Error> {
    let mut out = Vec::new();
    match db {
        Database::Sqlite(pool) => {
            for t in tables {
                let rows: Vec<(String, i64, String)> = sqlx::query_as(
                    "SELECT il.name, ii.seqno, COALESCE(ii.name, '') FROM pragma_index_list($1) il \
                     JOIN pragma_index_info(il.name) ii ORDER BY il.name, ii.seqno",
                )
                .bind(&t.name)
                .fetch_all(pool)
                .await?;
                // the row id ends every index; an INTEGER PRIMARY KEY is that row id
                let rowid = match t.primary_key.as_slice() {
                    [pk] => t
                        .columns
                        .iter()
                        .find(|c| &c.name == pk && c.sql_type.eq_ignore_ascii_case("integer"))
                        .map(|c| c.name.clone()),
                    _ => None,
                };
                let mut by_index: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (index, _, column) in rows {
                    by_index.entry(index).or_default().push(column);
                }
                for (index, mut columns) in by_index {
                    columns.extend(rowid.clone());
                    out.push((t.name.clone(), index, columns));
                }
            }
        }
        Database::Postgres(pool) => {
            let rows: Vec<(String, String, String)> = sqlx::query_as(
                "SELECT c.relname::text, ic.relname::text, a.attname::text \
                 FROM pg_index i \
                 JOIN pg_class c ON c.oid = i.indrelid \
                 JOIN pg_class ic ON ic.oid = i.indexrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, pos) ON pos <= i.indnkeyatts \
                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum \
                 WHERE n.nspname = current_schema() \
                 ORDER BY c.relname, ic.relname, k.pos",
            )
            .fetch_all(pool)
            .await?;
            let mut by_index: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
            for (table, index, column) in rows {
                by_index.entry((table, index)).or_default().push(column);
            }
            out.extend(by_index.into_iter().map(|((t, i), c)| (t, i, c)));
        }
    }
    Ok(out)
}

/// The model's index needs, each with the existing index that serves it (if any).
pub async fn recommend(db: &Database, model: &SemanticModel) -> Result<Vec<IndexNeed>, sqlx::Error> {
    let tables = super::catalog::read_tables(db).await?;
    let have = existing(db, &tables).await?;
    let mut needs = needed(model);
    for need in &mut needs {
        need.served_by = have
            .iter()
            .find(|(t, _, cols)| *t == need.table && cols.starts_with(&need.columns))
            .map(|(_, i, _)| i.clone());
    }
    Ok(needs)
}

/// The recommendations as text for the terminal.
pub fn to_text(needs: &[IndexNeed]) -> String {
    let mut out = String::from(
        "-- Indexes the semantic model's derived attributes need (Clarion never creates them in a\n\
         -- database it only reads; run the missing ones as the database's owner).\n",
    );
    let missing = needs.iter().filter(|n| n.served_by.is_none()).count();
    for n in needs {
        out.push_str(&format!("-- for {}\n", n.for_attributes.join(", ")));
        match &n.served_by {
            Some(index) => out.push_str(&format!(
                "--   present: {index} serves {} ({})\n",
                n.table,
                n.columns.join(", ")
            )),
            None => out.push_str(&format!("{}\n", n.create_statement())),
        }
    }
    out.push_str(&format!("-- {} needed, {missing} missing\n", needs.len()));
    out
}

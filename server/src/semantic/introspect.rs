//! `server introspect`: drafts a starting semantic model from any SQLite or PostgreSQL
//! schema (F25, Principle 4).
//!
//! - **Entities** from tables, except Clarion's own (every table its migrations create,
//!   bar the clinical demo tables; see [`clarion_owned_tables`]) and sqlx's bookkeeping.
//! - **Attributes** from columns, typed text/integer/real/boolean/date. Text columns
//!   whose names say "date" (`birth_date`, `assessed_on`) become dates when a sample of
//!   their values is ISO dates (SQLite stores dates as text). Columns of other types
//!   (binary, JSON, arrays, intervals) are left out with a note.
//! - **Keys** from primary keys, **joins** from single-column foreign keys.
//! - **Synonyms** from the names: snake_case and camelCase split into words, common
//!   abbreviations expanded (`dob` → "date of birth", `qty` → "quantity"), naive
//!   singular and plural forms, unit and `is_` prefixes dropped. Labels, units, personal
//!   data (`pii`) and identifiers are guessed from names too.
//! - **Allowed values**: text columns with at most
//!   [`IntrospectOptions::low_cardinality_max`] distinct values (50) become
//!   `source = "database"`; personal data never does. When a name cannot be served by the
//!   allowed-values provider (it only queries `^[a-z_][a-z0-9_]*$` identifiers), the
//!   current values are written as a static list instead.
//! - A **count measure** per entity and a **time dimension** per date attribute.
//!
//! The draft is validated with the semantic layer's own validator against the schema
//! read, so what `introspect` writes always loads. It reads only the catalog and a few
//! bounded probes (`SELECT DISTINCT … LIMIT`), never writes, and never puts data values
//! of database-sourced columns into the file.

mod catalog;
pub mod indexes;
mod names;

use super::load::ModelError;
use super::lookup::normalize_phrase;
use super::model::{
    AllowedValue, AllowedValues, Attribute, AttributeRole, AttributeType, Entity, Join, Measure, MeasureAgg,
    ModelInfo, SemanticModel, TimeDimension, Value,
};
use super::schema::{ColumnInfo, SchemaInfo, TableInfo};
use crate::db::redact_url;
use crate::db::{Backend, Database};
use crate::semantic::schema::is_valid_identifier;
use anyhow::Context;
use catalog::RawTable;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;
use thiserror::Error;

/// Tables that are never entities although they are not Clarion's migrations' own:
/// sqlx's bookkeeping and the session store's table.
const ALWAYS_SKIPPED: [&str; 2] = ["_sqlx_migrations", "tower_sessions"];

/// Clarion's migrations, read for the names of the tables Clarion owns.
static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// The tables Clarion creates for itself (users, settings, threads, …): every table
/// created by a migration whose description does not mention `clinical`, plus sqlx's
/// and the session store's tables. Derived from the migrations, so it follows them.
pub fn clarion_owned_tables() -> BTreeSet<String> {
    let mut out: BTreeSet<String> = ALWAYS_SKIPPED.iter().map(|s| (*s).to_owned()).collect();
    for m in SQLITE_MIGRATIONS.iter().chain(POSTGRES_MIGRATIONS.iter()) {
        if !m.description.to_ascii_lowercase().contains("clinical") {
            out.extend(created_tables(&m.sql));
        }
    }
    out
}

/// The names in the `CREATE TABLE` statements of some SQL (comments ignored).
fn created_tables(sql: &str) -> Vec<String> {
    let code: String = sql
        .lines()
        .map(|l| l.split_once("--").map_or(l, |(c, _)| c))
        .collect::<Vec<_>>()
        .join("\n");
    let words: Vec<&str> = code
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, pair) in words.windows(2).enumerate() {
        if pair[0].eq_ignore_ascii_case("create") && pair[1].eq_ignore_ascii_case("table") {
            let mut j = i + 2;
            if words.get(j).is_some_and(|w| w.eq_ignore_ascii_case("if")) {
                j += 3; // IF NOT EXISTS
            }
            if let Some(name) = words.get(j) {
                let name = name
                    .rsplit('.')
                    .next()
                    .unwrap_or(name)
                    .trim_matches(['"', '`', '[', ']']);
                out.push(name.to_ascii_lowercase());
            }
        }
    }
    out
}

/// Knobs for [`introspect`]; [`Default`] is what the CLI uses.
#[derive(Clone, Debug)]
pub struct IntrospectOptions {
    /// Text columns with at most this many distinct values get allowed values.
    pub low_cardinality_max: usize,
    /// Tables never turned into entities (compared in lower case).
    pub skip_tables: BTreeSet<String>,
    /// Values sampled to confirm that a date-named text column holds ISO dates.
    pub date_sample: usize,
    /// Longest a single data probe may take before it is skipped with a note.
    pub probe_timeout: Duration,
}

impl Default for IntrospectOptions {
    fn default() -> Self {
        IntrospectOptions {
            low_cardinality_max: 50,
            skip_tables: clarion_owned_tables(),
            date_sample: 20,
            probe_timeout: Duration::from_secs(15),
        }
    }
}

/// A drafted model, the schema it was read from, and what introspection left out or
/// guessed (shown to the admin at the top of the file).
#[derive(Clone, Debug)]
pub struct Introspection {
    pub model: SemanticModel,
    pub schema: SchemaInfo,
    pub notes: Vec<String>,
}

/// Why introspection failed.
#[derive(Debug, Error)]
pub enum IntrospectError {
    #[error("cannot read the schema: {0}")]
    Db(#[from] sqlx::Error),
    #[error("no tables to draft a model from (Clarion's own tables are skipped)")]
    NoTables,
    /// The draft does not validate: a defect of introspection, never of the database.
    #[error("the drafted model does not validate:\n{0}")]
    Invalid(#[from] ModelError),
    #[error("cannot write the model as TOML: {0}")]
    Toml(#[from] toml::ser::Error),
}

impl Introspection {
    /// The model as a TOML file, with a header saying where it came from and the notes.
    pub fn to_toml(&self, source: &str) -> Result<String, IntrospectError> {
        let mut out = format!(
            "# Semantic model drafted by `server introspect` from {source}.\n\
             # A starting point: review labels, synonyms, keys, units, personal data (pii) and\n\
             # allowed values, then add measures, time dimensions, areas and dictionary terms.\n\
             # Format: server/docs/semantic-model.md.\n"
        );
        if !self.notes.is_empty() {
            out.push_str("#\n# Notes:\n");
            for n in &self.notes {
                out.push_str(&format!("# - {n}\n"));
            }
        }
        out.push('\n');
        out.push_str(&self.model.to_toml_string()?);
        Ok(out)
    }
}

/// One column kept as an attribute, while the model is being drafted.
struct ColumnDraft {
    column: String,
    name: String,
    words: Vec<String>,
    ty: AttributeType,
    sql_type: String,
    nullable: bool,
    /// Holds text the database can list distinct values of.
    textual: bool,
}

/// One table kept as an entity.
struct TableDraft {
    table: String,
    name: String,
    words: Vec<String>,
    columns: Vec<ColumnDraft>,
    raw: RawTable,
}

impl TableDraft {
    fn column(&self, column: &str) -> Option<&ColumnDraft> {
        self.columns.iter().find(|c| c.column == column)
    }
}

/// Drafts a semantic model named `model_name` from the schema of `db`.
pub async fn introspect(
    db: &Database,
    model_name: &str,
    opts: &IntrospectOptions,
) -> Result<Introspection, IntrospectError> {
    let backend = db.backend();
    let mut notes = Vec::new();
    let raw_tables = catalog::read_tables(db).await?;

    // Tables and columns kept, with their types.
    let mut drafts: Vec<TableDraft> = Vec::new();
    let mut entity_names = HashSet::new();
    for raw in raw_tables {
        if opts.skip_tables.contains(&raw.name.to_ascii_lowercase()) {
            continue;
        }
        if !is_plain_identifier(&raw.name) {
            notes.push(format!(
                "table {:?} skipped: its name is not a plain identifier",
                raw.name
            ));
            continue;
        }
        let name = unique(&names::snake_case(&raw.name), &mut entity_names);
        let mut attr_names = HashSet::new();
        let mut columns = Vec::new();
        for c in &raw.columns {
            if !is_plain_identifier(&c.name) {
                notes.push(format!(
                    "column {}.{:?} skipped: its name is not a plain identifier",
                    raw.name, c.name
                ));
                continue;
            }
            let Some((mut ty, textual)) = map_type(backend, &c.sql_type, c.user_defined) else {
                notes.push(format!(
                    "column {}.{} skipped: type {} has no attribute type",
                    raw.name, c.name, c.sql_type
                ));
                continue;
            };
            let words = names::split_words(&c.name);
            if ty == AttributeType::Text && names::looks_like_date(&words) {
                match probe(opts, catalog::sample(db, &raw.name, &c.name, opts.date_sample)).await {
                    Ok(values) if values.iter().all(|v| is_iso_date(v)) => ty = AttributeType::Date,
                    Ok(_) => {}
                    Err(e) => notes.push(format!(
                        "column {}.{}: cannot sample values ({e})",
                        raw.name, c.name
                    )),
                }
            }
            let snake = names::snake_case(&c.name);
            let attr = unique(if snake.is_empty() { "column" } else { &snake }, &mut attr_names);
            columns.push(ColumnDraft {
                column: c.name.clone(),
                name: attr,
                words,
                ty,
                sql_type: c.sql_type.clone(),
                nullable: c.nullable,
                textual,
            });
        }
        if columns.is_empty() {
            notes.push(format!(
                "table {:?} skipped: none of its columns has an attribute type",
                raw.name
            ));
            continue;
        }
        drafts.push(TableDraft {
            table: raw.name.clone(),
            name,
            words: names::split_words(&raw.name),
            columns,
            raw,
        });
    }
    if drafts.is_empty() {
        return Err(IntrospectError::NoTables);
    }

    let schema = SchemaInfo {
        tables: drafts
            .iter()
            .map(|d| {
                let columns = d
                    .raw
                    .columns
                    .iter()
                    .map(|c| {
                        (
                            c.name.clone(),
                            ColumnInfo {
                                sql_type: c.sql_type.clone(),
                                nullable: c.nullable,
                            },
                        )
                    })
                    .collect();
                (d.table.clone(), TableInfo { columns })
            })
            .collect(),
    };

    let joins = draft_joins(&drafts, &mut notes);
    let fk_columns: HashSet<(String, String)> = joins
        .iter()
        .filter_map(|j| super::model::split_qualified(&j.from).map(|(e, a)| (e.to_owned(), a.to_owned())))
        .collect();

    let mut entities = Vec::new();
    for d in &drafts {
        entities.push(draft_entity(db, d, &fk_columns, opts, &mut notes).await);
    }
    name_entities(&mut entities, &drafts);

    let mut time_dimensions: Vec<TimeDimension> = Vec::new();
    let mut dim_names = HashSet::new();
    for (e, d) in entities.iter_mut().zip(&drafts) {
        for c in d.columns.iter().filter(|c| c.ty == AttributeType::Date) {
            let dim = unique(&format!("{}_{}", e.name, c.name), &mut dim_names);
            let phrase = names::expand_all(&c.words).join(" ");
            let birthish = c
                .words
                .iter()
                .any(|w| ["birth", "dob", "death", "dod", "birthday"].contains(&w.as_str()));
            if e.default_time_dimension.is_none() && !c.nullable && !birthish {
                e.default_time_dimension = Some(dim.clone());
            }
            time_dimensions.push(TimeDimension {
                name: dim,
                attribute: format!("{}.{}", e.name, c.name),
                label: format!("{}: {phrase}", e.label),
                synonyms: Vec::new(),
                grains: Vec::new(),
            });
        }
    }

    let mut measures = Vec::new();
    let mut measure_names = HashSet::new();
    for (e, d) in entities.iter().zip(&drafts) {
        let exp = names::expand_all(&d.words);
        let (one, many) = (names::singular_phrase(&exp), names::plural_phrase(&exp));
        let label = format!("Number of {many}");
        let synonyms = dedup_words(
            &[format!("{one} count"), format!("count of {many}")],
            &[label.as_str()],
        );
        measures.push(Measure {
            name: unique(&format!("{}_count", e.name), &mut measure_names),
            label,
            entity: e.name.clone(),
            agg: MeasureAgg::Count,
            attribute: None,
            unit: None,
            synonyms,
            description: format!("How many {many} there are."),
            filter: None,
            condition: None,
        });
    }

    let model = SemanticModel {
        model: ModelInfo {
            name: if model_name.trim().is_empty() {
                "introspected".to_owned()
            } else {
                model_name.to_owned()
            },
            version: "draft".to_owned(),
            description: "Drafted by `server introspect`; review before use.".to_owned(),
        },
        entities,
        joins,
        measures,
        time_dimensions,
        ..SemanticModel::default()
    };
    model.validate("introspected model", Some(&schema))?;
    Ok(Introspection { model, schema, notes })
}

/// Joins from single-column foreign keys between kept tables of the same type.
fn draft_joins(drafts: &[TableDraft], notes: &mut Vec<String>) -> Vec<Join> {
    let mut joins: Vec<Join> = Vec::new();
    for d in drafts {
        for fk in &d.raw.foreign_keys {
            let what = format!(
                "foreign key {}({}) → {}",
                d.table,
                fk.columns.join(", "),
                fk.ref_table
            );
            let [column] = fk.columns.as_slice() else {
                notes.push(format!("{what} skipped: a join is one column to one column"));
                continue;
            };
            let Some(target) = drafts
                .iter()
                .find(|t| t.table.eq_ignore_ascii_case(&fk.ref_table))
            else {
                notes.push(format!(
                    "{what} skipped: the referenced table is not in the model"
                ));
                continue;
            };
            if std::ptr::eq(target, d) {
                notes.push(format!(
                    "{what} skipped: a join must connect two different tables"
                ));
                continue;
            }
            // SQLite leaves the referenced column out when it is the primary key.
            let ref_column = fk.ref_columns.first().or(target.raw.primary_key.first());
            let (Some(from), Some(to)) = (d.column(column), ref_column.and_then(|c| target.column(c))) else {
                notes.push(format!("{what} skipped: a column has no attribute"));
                continue;
            };
            if from.ty != to.ty {
                notes.push(format!("{what} skipped: it joins {} to {}", from.ty, to.ty));
                continue;
            }
            let join = Join {
                from: format!("{}.{}", d.name, from.name),
                to: format!("{}.{}", target.name, to.name),
                description: String::new(),
            };
            if !joins.iter().any(|j| j.from == join.from && j.to == join.to) {
                joins.push(join);
            }
        }
    }
    joins
}

/// One entity with its attributes; labels and entity synonyms come later, once every
/// entity's names are known ([`name_entities`]).
async fn draft_entity(
    db: &Database,
    d: &TableDraft,
    fk_columns: &HashSet<(String, String)>,
    opts: &IntrospectOptions,
    notes: &mut Vec<String>,
) -> Entity {
    let key_column = d
        .raw
        .primary_key
        .first()
        .and_then(|k| d.column(k))
        .or_else(|| d.columns.iter().find(|c| c.name == "id"))
        .or(d.columns.first())
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let mut description = format!("Rows of table `{}`.", d.table);
    if d.raw.primary_key.is_empty() {
        notes.push(format!(
            "table {} has no primary key: `{key_column}` is assumed to identify rows",
            d.table
        ));
        description.push_str(&format!(
            " No primary key: `{key_column}` is assumed to identify a row."
        ));
    }
    let display = d
        .columns
        .iter()
        .find(|c| c.ty == AttributeType::Text && c.name != key_column && names::looks_like_label(&c.words))
        .map(|c| c.name.clone());

    // Attribute names first, so that no synonym takes another attribute's name.
    let mut taken: HashSet<String> = d.columns.iter().map(|c| normalize_phrase(&c.name)).collect();
    let mut attributes = Vec::new();
    for c in &d.columns {
        let pii = names::looks_personal(&c.words);
        let role = if c.name == key_column {
            AttributeRole::Key
        } else if fk_columns.contains(&(d.name.clone(), c.name.clone())) {
            AttributeRole::ForeignKey
        } else if Some(&c.name) == display.as_ref() {
            AttributeRole::Label
        } else if names::looks_like_identifier(&c.words) {
            AttributeRole::Identifier
        } else {
            AttributeRole::Attribute
        };
        let mut synonyms = Vec::new();
        for s in attribute_synonyms(c) {
            let n = normalize_phrase(&s);
            if !n.is_empty() && taken.insert(n) {
                synonyms.push(s);
            }
        }
        let unit = if c.ty.is_numeric() {
            c.words
                .last()
                .filter(|_| c.words.len() > 1)
                .and_then(|w| names::unit_of(w))
                .map(str::to_owned)
        } else {
            None
        };
        let may_list = c.ty == AttributeType::Text
            && c.textual
            && !pii
            && matches!(role, AttributeRole::Attribute | AttributeRole::Label);
        let allowed = if may_list {
            allowed_values(db, d, c, opts, notes).await
        } else {
            None
        };
        attributes.push(Attribute {
            name: c.name.clone(),
            column: Some(c.column.clone()),
            ty: c.ty,
            unit,
            synonyms,
            description: format!("Column `{}` ({}).", c.column, c.sql_type),
            role,
            pii,
            weight: 1.0,
            derived: None,
            not_null: !c.nullable,
            allowed,
        });
    }
    Entity {
        name: d.name.clone(),
        table: d.table.clone(),
        key: key_column,
        label: String::new(),
        synonyms: Vec::new(),
        description,
        display_attribute: display,
        list_attributes: Vec::new(),
        default_time_dimension: None,
        unknown_word_terms: Vec::new(),
        attributes,
    }
}

/// Allowed values for a low-cardinality text column: database-sourced when the provider
/// can query the names, otherwise the current values as a static list.
async fn allowed_values(
    db: &Database,
    d: &TableDraft,
    c: &ColumnDraft,
    opts: &IntrospectOptions,
    notes: &mut Vec<String>,
) -> Option<AllowedValues> {
    let max = opts.low_cardinality_max;
    let count = match probe(opts, catalog::distinct_count(db, &d.table, &c.column, max)).await {
        Ok(n) => n,
        Err(e) => {
            notes.push(format!(
                "column {}.{}: cannot count distinct values ({e})",
                d.table, c.column
            ));
            return None;
        }
    };
    if count == 0 || count > max {
        return None;
    }
    if is_valid_identifier(&d.table) && is_valid_identifier(&c.column) {
        return Some(AllowedValues::Database { known: Vec::new() });
    }
    match probe(opts, catalog::distinct_values(db, &d.table, &c.column, max)).await {
        Ok(values) => {
            notes.push(format!(
                "column {}.{}: its values are listed statically (the allowed-values cache only reads \
                 lower-case snake_case names); update them when the data changes",
                d.table, c.column
            ));
            let values = values
                .into_iter()
                .map(|v| AllowedValue {
                    value: Value::Text(v),
                    label: String::new(),
                    synonyms: Vec::new(),
                })
                .collect();
            Some(AllowedValues::Static { values })
        }
        Err(e) => {
            notes.push(format!(
                "column {}.{}: cannot list distinct values ({e})",
                d.table, c.column
            ));
            None
        }
    }
}

/// Synonym candidates for an attribute, most useful first (unfiltered).
fn attribute_synonyms(c: &ColumnDraft) -> Vec<String> {
    let w = &c.words;
    let phrase = |ws: &[String]| names::expand_all(ws).join(" ");
    let mut out = vec![phrase(w)];
    if w.len() == 1 && w[0] == "dob" {
        out.extend(["birth date".to_owned(), "birthday".to_owned()]);
    }
    if let [rest @ .., last] = w.as_slice()
        && !rest.is_empty()
    {
        if names::unit_of(last).is_some() && c.ty.is_numeric() {
            out.push(phrase(rest));
        }
        if c.ty == AttributeType::Date && ["on", "at", "date", "dt"].contains(&last.as_str()) {
            out.push(phrase(rest));
            if last != "date" {
                out.push(format!("{} date", phrase(rest)));
            }
        }
    }
    if let [first, rest @ ..] = w.as_slice()
        && !rest.is_empty()
        && c.ty == AttributeType::Boolean
        && ["is", "has", "was"].contains(&first.as_str())
    {
        out.push(phrase(rest));
    }
    out
}

/// Labels and entity synonyms, chosen so that no word points at two entities: names
/// first, then labels, then synonyms in table order.
fn name_entities(entities: &mut [Entity], drafts: &[TableDraft]) {
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (i, e) in entities.iter().enumerate() {
        owner.insert(normalize_phrase(&e.name), i);
    }
    for (i, (e, d)) in entities.iter_mut().zip(drafts).enumerate() {
        let candidate = names::capitalize(&names::singular_phrase(&names::expand_all(&d.words)));
        let free = |w: &str| owner.get(&normalize_phrase(w)).is_none_or(|o| *o == i);
        e.label = if !candidate.is_empty() && free(&candidate) {
            candidate
        } else {
            names::capitalize(&normalize_phrase(&e.name))
        };
        owner.insert(normalize_phrase(&e.label), i);
    }
    for (i, (e, d)) in entities.iter_mut().zip(drafts).enumerate() {
        let exp = names::expand_all(&d.words);
        let mut candidates = vec![
            names::singular_phrase(&d.words),
            names::plural_phrase(&d.words),
            names::singular_phrase(&exp),
            names::plural_phrase(&exp),
        ];
        if exp.len() > 1
            && let Some(head) = exp.last()
        {
            candidates.extend([names::singular(head), names::plural(head)]);
        }
        let own = [normalize_phrase(&e.name), normalize_phrase(&e.label)];
        for c in candidates {
            let n = normalize_phrase(&c);
            if n.is_empty() || own.contains(&n) || owner.contains_key(&n) {
                continue;
            }
            owner.insert(n, i);
            e.synonyms.push(c);
        }
    }
}

/// The phrases, without duplicates or phrases equal to an `exclude`d one (normalised).
fn dedup_words(phrases: &[String], exclude: &[&str]) -> Vec<String> {
    let mut seen: HashSet<String> = exclude.iter().map(|e| normalize_phrase(e)).collect();
    phrases
        .iter()
        .filter(|p| seen.insert(normalize_phrase(p)))
        .cloned()
        .collect()
}

/// `base`, or `base_2`, `base_3`, … whichever is not yet in `taken` (which it joins).
fn unique(base: &str, taken: &mut HashSet<String>) -> String {
    let mut name = base.to_owned();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// Letters, digits and `_`, not starting with a digit: what the model format accepts
/// as a table or column name.
fn is_plain_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The attribute type of a declared SQL type, and whether the column holds listable
/// text; `None` for types the model has no attribute type for.
fn map_type(backend: Backend, sql_type: &str, user_defined: bool) -> Option<(AttributeType, bool)> {
    use AttributeType::*;
    match backend {
        Backend::Postgres => {
            if user_defined {
                // Enums and citext: text the database can list.
                return Some((Text, true));
            }
            let t = sql_type.to_ascii_lowercase();
            Some(match t.as_str() {
                "smallint" | "integer" | "bigint" => (Integer, false),
                "real" | "double precision" | "numeric" | "decimal" => (Real, false),
                "boolean" => (Boolean, false),
                "date" => (Date, false),
                _ if t.starts_with("timestamp") => (Date, false),
                "text" | "character varying" | "character" | "varchar" | "char" | "name" | "citext" => {
                    (Text, true)
                }
                "uuid" => (Text, false),
                _ => return None,
            })
        }
        Backend::Sqlite => {
            // SQLite's own affinity rules, with booleans and dates recognised by name.
            let t = sql_type.to_ascii_uppercase();
            Some(if t.contains("BOOL") {
                (Boolean, false)
            } else if t.contains("INT") {
                (Integer, false)
            } else if t.contains("DATE") || t.contains("TIME") {
                (Date, false)
            } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") || t.is_empty() {
                (Text, true)
            } else if t.contains("BLOB") {
                return None;
            } else {
                (Real, false)
            })
        }
    }
}

/// `YYYY-MM-DD` at the start (a date, or a timestamp in ISO form).
fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// Runs a data probe with the configured time limit; errors become one line of text.
async fn probe<T>(
    opts: &IntrospectOptions,
    fut: impl std::future::Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, String> {
    match tokio::time::timeout(opts.probe_timeout, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")),
        Err(_) => Err(format!("took longer than {:?}", opts.probe_timeout)),
    }
}

/// A model name from a database URL: the SQLite file's stem or the PostgreSQL
/// database's name, in snake_case.
fn model_name_from_url(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let last = path.rsplit('/').next().unwrap_or(path);
    let stem = last.rsplit_once('.').map_or(last, |(s, _)| s);
    let name = names::snake_case(stem);
    if name.is_empty() {
        "introspected".to_owned()
    } else {
        name
    }
}

/// Opens the database read-only: SQLite with a read-only handle (never creating a
/// file), PostgreSQL with read-only transactions and a statement time limit.
async fn open_read_only(url: &str) -> anyhow::Result<Database> {
    use sqlx::ConnectOptions;
    use std::str::FromStr;
    let shown = redact_url(url);
    match Backend::of_url(url)? {
        Backend::Sqlite => {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(url)
                .with_context(|| format!("{shown} is not a SQLite URL"))?
                .read_only(true)
                .create_if_missing(false)
                .disable_statement_logging();
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(2)
                .connect_with(opts)
                .await
                .with_context(|| format!("cannot open {shown}"))?;
            Ok(Database::Sqlite(pool))
        }
        Backend::Postgres => {
            let opts = sqlx::postgres::PgConnectOptions::from_str(url)
                .with_context(|| format!("{shown} is not a PostgreSQL URL"))?
                .options([
                    ("default_transaction_read_only", "on"),
                    ("statement_timeout", "30000"),
                ])
                .application_name("clarion-introspect")
                .disable_statement_logging();
            let pool = sqlx::postgres::PgPoolOptions::new()
                .max_connections(2)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await
                .with_context(|| format!("cannot connect to {shown}"))?;
            Ok(Database::Postgres(pool))
        }
    }
}

/// CLI glue: introspects `database_url` and writes the model to `out`. Without `out`
/// the model itself is returned (for standard output) and the summary goes to standard
/// error; with `out`, a one-line summary is returned.
pub async fn cli_introspect(database_url: &str, out: Option<&std::path::Path>) -> anyhow::Result<String> {
    let db = open_read_only(database_url).await?;
    let name = model_name_from_url(database_url);
    let result = introspect(&db, &name, &IntrospectOptions::default()).await;
    db.close().await;
    let drafted = result?;
    let text = drafted.to_toml(&redact_url(database_url))?;
    let m = &drafted.model;
    let summary = format!(
        "Drafted model \"{name}\": {} entities, {} attributes, {} joins, {} database-sourced columns, {} notes",
        m.entities.len(),
        m.entities.iter().map(|e| e.attributes.len()).sum::<usize>(),
        m.joins.len(),
        m.database_sourced().len(),
        drafted.notes.len(),
    );
    match out {
        Some(path) => {
            write_file(path, &text)?;
            Ok(format!("{summary}; written to {}", path.display()))
        }
        None => {
            eprintln!("{summary}");
            Ok(text.trim_end().to_owned())
        }
    }
}

/// CLI glue for `server introspect --indexes`: the indexes the semantic model's derived
/// attributes need (`model`, default the shipped wound-care model), which of them the
/// database already has, and `CREATE INDEX` statements for the rest. Reads only.
pub async fn cli_indexes(database_url: &str, model: Option<&Path>) -> anyhow::Result<String> {
    let owned;
    let model = match model {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            owned = SemanticModel::from_toml_str(&text, &path.display().to_string())?;
            &owned
        }
        None => SemanticModel::wound_care_shared(),
    };
    let db = open_read_only(database_url).await?;
    let result = indexes::recommend(&db, model).await;
    db.close().await;
    Ok(indexes::to_text(&result?).trim_end().to_owned())
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clarion_owned_tables_come_from_the_migrations_but_not_the_clinical_ones() {
        let owned = clarion_owned_tables();
        for t in ["users", "user_settings", "_sqlx_migrations"] {
            assert!(owned.contains(t), "{t} missing from {owned:?}");
        }
        for t in ["clinics", "clinicians", "patients", "wounds", "assessments"] {
            assert!(!owned.contains(t), "{t} is clinical data, not Clarion's own");
        }
    }

    #[test]
    fn the_compiled_in_list_covers_every_non_clinical_migration_on_disk() {
        // Catches a stale build: sqlx embeds migrations at compile time.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
        let owned = clarion_owned_tables();
        for backend in ["sqlite", "postgres"] {
            for file in std::fs::read_dir(dir.join(backend)).unwrap() {
                let path = file.unwrap().path();
                if path.to_string_lossy().contains("clinical") {
                    continue;
                }
                for t in created_tables(&std::fs::read_to_string(&path).unwrap()) {
                    assert!(owned.contains(&t), "{t} from {} is not skipped", path.display());
                }
            }
        }
    }

    #[test]
    fn create_table_names_are_read_past_comments_quotes_and_if_not_exists() {
        let sql = "-- CREATE TABLE nope (x)\nCREATE TABLE IF NOT EXISTS \"Threads\" (id INT);\n\
                   create table main.messages(id int); CREATE INDEX i ON messages (id);";
        assert_eq!(created_tables(sql), ["threads", "messages"]);
    }

    #[test]
    fn sql_types_map_to_attribute_types_per_backend() {
        use AttributeType::*;
        let cases = [
            (Backend::Sqlite, "INTEGER", Some(Integer)),
            (Backend::Sqlite, "BOOLEAN", Some(Boolean)),
            (Backend::Sqlite, "REAL", Some(Real)),
            (Backend::Sqlite, "NUMERIC(10,2)", Some(Real)),
            (Backend::Sqlite, "VARCHAR(20)", Some(Text)),
            (Backend::Sqlite, "", Some(Text)),
            (Backend::Sqlite, "DATETIME", Some(Date)),
            (Backend::Sqlite, "BLOB", None),
            (Backend::Postgres, "bigint", Some(Integer)),
            (Backend::Postgres, "double precision", Some(Real)),
            (Backend::Postgres, "timestamp with time zone", Some(Date)),
            (Backend::Postgres, "character varying", Some(Text)),
            (Backend::Postgres, "jsonb", None),
            (Backend::Postgres, "interval", None),
            (Backend::Postgres, "bytea", None),
        ];
        for (b, t, want) in cases {
            assert_eq!(map_type(b, t, false).map(|m| m.0), want, "{b:?} {t}");
        }
        assert_eq!(
            map_type(Backend::Postgres, "book_format", true),
            Some((Text, true)),
            "an enum"
        );
    }

    #[test]
    fn iso_dates_and_timestamps_are_recognised_and_other_text_is_not() {
        assert!(is_iso_date("2024-02-29") && is_iso_date("2024-02-29T10:00:00Z"));
        assert!(!is_iso_date("29/02/2024") && !is_iso_date("2024-2-9") && !is_iso_date("yesterday"));
    }

    #[test]
    fn model_names_come_from_the_file_or_database_name() {
        assert_eq!(model_name_from_url("sqlite://data/clarion.db"), "clarion");
        assert_eq!(
            model_name_from_url("sqlite:///tmp/x/LibraryData.sqlite?mode=ro"),
            "library_data"
        );
        assert_eq!(
            model_name_from_url("postgres://u:p@host:5432/warehouse"),
            "warehouse"
        );
    }

    #[test]
    fn unique_names_get_a_numbered_suffix() {
        let mut taken = HashSet::new();
        assert_eq!(unique("book_loans", &mut taken), "book_loans");
        assert_eq!(unique("book_loans", &mut taken), "book_loans_2");
        assert_eq!(unique("book_loans", &mut taken), "book_loans_3");
    }
}

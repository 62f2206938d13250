//! A description of the database schema a model is checked against: tables, their
//! columns and declared SQL types.
//!
//! Validation uses it to reject a model that names a table or column the database
//! does not have, or types a column incompatibly. Introspection (or a test) fills it;
//! [`SchemaInfo::wound_care_demo`] builds it from the demo migration, which is compiled
//! in, so the model and the migration cannot drift apart unnoticed. Pure: no I/O, no
//! database access.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::model::AttributeType;

/// The demo clinical schema (SQLite dialect), compiled in.
const WOUND_CARE_DDL: &str = include_str!("../../../migrations/sqlite/0002_clinical.sql");

/// Tables and columns of a database.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SchemaInfo {
    /// Table name → its columns.
    pub tables: BTreeMap<String, TableInfo>,
}

/// The columns of one table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableInfo {
    /// Column name → its declaration.
    pub columns: BTreeMap<String, ColumnInfo>,
}

/// One column's declaration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    /// Declared SQL type as the database reports it (`INTEGER`, `double precision`, …).
    pub sql_type: String,
    /// Whether the column accepts NULL.
    pub nullable: bool,
}

/// The broad family of a declared SQL type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SqlFamily {
    Integer,
    Real,
    Boolean,
    Text,
    Date,
    Unknown,
}

fn family(sql_type: &str) -> SqlFamily {
    let t = sql_type.to_ascii_uppercase();
    if t.contains("BOOL") {
        SqlFamily::Boolean
    } else if t.contains("INT") || t.contains("SERIAL") {
        SqlFamily::Integer
    } else if ["REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL"]
        .iter()
        .any(|k| t.contains(k))
    {
        SqlFamily::Real
    } else if t.contains("DATE") || t.contains("TIME") {
        SqlFamily::Date
    } else if ["CHAR", "CLOB", "TEXT", "STRING", "UUID"]
        .iter()
        .any(|k| t.contains(k))
        || t.is_empty()
    {
        SqlFamily::Text
    } else {
        SqlFamily::Unknown
    }
}

impl ColumnInfo {
    /// Whether a model attribute of type `ty` can read this column. Lenient where the
    /// backends are (SQLite stores booleans as integers and dates as text); unknown SQL
    /// types are accepted.
    pub fn fits(&self, ty: AttributeType) -> bool {
        let f = family(&self.sql_type);
        match ty {
            _ if f == SqlFamily::Unknown => true,
            AttributeType::Integer => f == SqlFamily::Integer,
            AttributeType::Real => matches!(f, SqlFamily::Real | SqlFamily::Integer),
            AttributeType::Boolean => matches!(f, SqlFamily::Boolean | SqlFamily::Integer),
            AttributeType::Text => f == SqlFamily::Text,
            AttributeType::Date => matches!(f, SqlFamily::Date | SqlFamily::Text),
        }
    }
}

impl SchemaInfo {
    /// The demo wound-care schema, parsed from `migrations/sqlite/0002_clinical.sql`.
    pub fn wound_care_demo() -> SchemaInfo {
        // The migration is compiled in and covered by tests, so a parse failure is a
        // build defect, not a runtime condition.
        SchemaInfo::from_sqlite_ddl(WOUND_CARE_DDL).expect("the demo migration parses")
    }

    /// The column `table.column`, if the schema has it.
    pub fn column(&self, table: &str, column: &str) -> Option<&ColumnInfo> {
        self.tables.get(table)?.columns.get(column)
    }

    /// Reads the `CREATE TABLE` statements of simple SQLite DDL (one column per item,
    /// `--` comments). Other statements are ignored. Errors name the statement.
    pub fn from_sqlite_ddl(ddl: &str) -> Result<SchemaInfo, String> {
        let without_comments: String = ddl
            .lines()
            .map(|l| l.split_once("--").map_or(l, |(code, _)| code))
            .collect::<Vec<_>>()
            .join("\n");
        let mut schema = SchemaInfo::default();
        for statement in without_comments.split(';') {
            let s = statement.trim();
            let upper = s.to_ascii_uppercase();
            if !upper.starts_with("CREATE TABLE") {
                continue;
            }
            let open = s
                .find('(')
                .ok_or_else(|| format!("no column list in `{}`", first_line(s)))?;
            let close = s
                .rfind(')')
                .ok_or_else(|| format!("unclosed column list in `{}`", first_line(s)))?;
            let head: Vec<&str> = s[..open].split_whitespace().collect();
            let name = head
                .last()
                .ok_or("a CREATE TABLE without a name")?
                .trim_matches(['"', '`'])
                .to_owned();
            let mut table = TableInfo::default();
            for item in split_top_level(&s[open + 1..close]) {
                let item = item.trim();
                let first = item.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
                if item.is_empty()
                    || ["PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT"].contains(&first.as_str())
                {
                    continue;
                }
                let mut words = item.split_whitespace();
                let column = words
                    .next()
                    .unwrap_or_default()
                    .trim_matches(['"', '`'])
                    .to_owned();
                let mut ty = Vec::new();
                for w in words.by_ref() {
                    const STOP: [&str; 9] = [
                        "NOT",
                        "NULL",
                        "PRIMARY",
                        "REFERENCES",
                        "DEFAULT",
                        "UNIQUE",
                        "CHECK",
                        "COLLATE",
                        "GENERATED",
                    ];
                    if STOP.contains(&w.to_ascii_uppercase().as_str()) {
                        break;
                    }
                    ty.push(w);
                }
                let upper_item = item.to_ascii_uppercase();
                let nullable = !upper_item.contains("NOT NULL") && !upper_item.contains("PRIMARY KEY");
                table.columns.insert(
                    column,
                    ColumnInfo {
                        sql_type: ty.join(" "),
                        nullable,
                    },
                );
            }
            schema.tables.insert(name, table);
        }
        Ok(schema)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// Splits a column list on commas that are not inside parentheses.
fn split_top_level(body: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&body[start..]);
    out
}

/// `^[a-z_][a-z0-9_]*$`, at most 63 bytes (PostgreSQL's identifier limit).
pub fn is_valid_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_lowercase() || b == b'_' => {}
        _ => return false,
    }
    name.len() <= 63 && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_schema_has_the_five_clinical_tables_with_their_columns() {
        let s = SchemaInfo::wound_care_demo();
        let tables: Vec<&str> = s.tables.keys().map(String::as_str).collect();
        assert_eq!(
            tables,
            ["assessments", "clinicians", "clinics", "patients", "wounds"]
        );
        assert_eq!(s.tables["wounds"].columns.len(), 12);
        assert_eq!(s.tables["assessments"].columns.len(), 12);
        let healed = s.column("wounds", "healed_date").unwrap();
        assert!(healed.nullable);
        assert_eq!(healed.sql_type, "TEXT");
        let area = s.column("assessments", "area_cm2").unwrap();
        assert!(!area.nullable && area.sql_type == "REAL");
        assert!(
            !s.column("wounds", "id").unwrap().nullable,
            "a primary key is not nullable"
        );
    }

    #[test]
    fn comments_with_commas_and_table_constraints_are_not_read_as_columns() {
        let s = SchemaInfo::from_sqlite_ddl(
            "CREATE TABLE t (a INTEGER NOT NULL, -- x | y, z\n b NUMERIC(10, 2), PRIMARY KEY (a));\n\
             CREATE INDEX t_a ON t (a);",
        )
        .unwrap();
        let cols: Vec<&str> = s.tables["t"].columns.keys().map(String::as_str).collect();
        assert_eq!(cols, ["a", "b"]);
        assert_eq!(s.column("t", "b").unwrap().sql_type, "NUMERIC(10, 2)");
    }

    #[test]
    fn column_types_fit_attribute_types_the_way_both_backends_store_them() {
        let col = |t: &str| ColumnInfo {
            sql_type: t.to_owned(),
            nullable: false,
        };
        let cases = [
            ("INTEGER", AttributeType::Integer, true),
            ("INTEGER", AttributeType::Real, true),
            ("INTEGER", AttributeType::Boolean, true),
            ("INTEGER", AttributeType::Text, false),
            ("REAL", AttributeType::Integer, false),
            ("double precision", AttributeType::Real, true),
            ("BOOLEAN", AttributeType::Boolean, true),
            ("TEXT", AttributeType::Date, true),
            ("TEXT", AttributeType::Real, false),
            ("date", AttributeType::Date, true),
            ("timestamp with time zone", AttributeType::Date, true),
            ("character varying", AttributeType::Text, true),
            ("jsonb", AttributeType::Text, true),
        ];
        for (sql, ty, fits) in cases {
            assert_eq!(col(sql).fits(ty), fits, "{sql} as {ty}");
        }
    }
}

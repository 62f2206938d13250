//! SQL fragments: text and bound values kept apart until the very end.
//!
//! A [`Sql`] is a list of parts, each either fixed renderer text or a bound value.
//! Raw text can only be pushed as `&'static str` (keywords, operators, function
//! names written in this module's source), and the only runtime text that can enter
//! SQL is an [`Ident`], which is validated (`[A-Za-z_][A-Za-z0-9_]*`, at most 63
//! bytes) and always double-quoted. Values never become text: [`Sql::finish`] turns
//! each one into a placeholder (`?` or `$n`) and returns the values in placeholder
//! order. This module must not format a value into SQL text, ever.

use chrono::NaiveDate;
use serde::Serialize;
use std::fmt;

use super::dialect::Dialect;
use super::render::RenderError;

/// A value bound to a placeholder of a rendered statement.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum BoundValue {
    /// A boolean (SQLite stores it as 0/1; sqlx encodes it accordingly).
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A double-precision number.
    Real(f64),
    /// Text.
    Text(String),
    /// A calendar date (ISO text on SQLite, `DATE` on PostgreSQL).
    Date(NaiveDate),
}

impl fmt::Display for BoundValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundValue::Bool(b) => write!(f, "bool {b}"),
            BoundValue::Int(i) => write!(f, "int {i}"),
            BoundValue::Real(r) => write!(f, "real {r:?}"),
            BoundValue::Text(t) => write!(f, "text {t:?}"),
            BoundValue::Date(d) => write!(f, "date {d}"),
        }
    }
}

/// A validated SQL identifier (table, column or alias name).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Ident(String);

/// PostgreSQL truncates longer identifiers; refuse them instead.
const MAX_IDENT_BYTES: usize = 63;

impl Ident {
    /// Validates `name` as a plain identifier.
    pub(crate) fn new(name: &str) -> Result<Ident, RenderError> {
        if is_plain_identifier(name) {
            Ok(Ident(name.to_owned()))
        } else {
            Err(RenderError::BadIdentifier {
                name: name.to_owned(),
            })
        }
    }

    /// A dotted output name (`wounds.latest_area`): every part a plain identifier.
    pub(crate) fn dotted(parts: &[&str]) -> Result<Ident, RenderError> {
        let joined = parts.join(".");
        if parts.iter().all(|p| is_plain_identifier(p)) && joined.len() <= MAX_IDENT_BYTES {
            Ok(Ident(joined))
        } else {
            Err(RenderError::BadIdentifier { name: joined })
        }
    }

    /// The unquoted name.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`, at most 63 bytes.
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= MAX_IDENT_BYTES
}

#[derive(Clone, Debug, PartialEq)]
enum Part {
    Text(&'static str),
    Ident(Ident),
    Param(BoundValue),
}

/// A piece of SQL under construction: fixed text, quoted identifiers and bound values.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Sql {
    parts: Vec<Part>,
}

impl Sql {
    /// An empty fragment.
    pub(crate) fn new() -> Sql {
        Sql::default()
    }

    /// A fragment holding fixed text.
    pub(crate) fn text(text: &'static str) -> Sql {
        let mut s = Sql::new();
        s.push(text);
        s
    }

    /// A fragment holding one bound value.
    pub(crate) fn param(value: BoundValue) -> Sql {
        let mut s = Sql::new();
        s.push_param(value);
        s
    }

    /// `"alias"."column"`.
    pub(crate) fn column(alias: &Ident, column: &Ident) -> Sql {
        let mut s = Sql::new();
        s.push_ident(alias).push(".").push_ident(column);
        s
    }

    /// Appends fixed renderer text.
    pub(crate) fn push(&mut self, text: &'static str) -> &mut Self {
        self.parts.push(Part::Text(text));
        self
    }

    /// Appends a quoted identifier.
    pub(crate) fn push_ident(&mut self, ident: &Ident) -> &mut Self {
        self.parts.push(Part::Ident(ident.clone()));
        self
    }

    /// Appends a placeholder bound to `value`.
    pub(crate) fn push_param(&mut self, value: BoundValue) -> &mut Self {
        self.parts.push(Part::Param(value));
        self
    }

    /// Appends another fragment.
    pub(crate) fn push_sql(&mut self, other: Sql) -> &mut Self {
        self.parts.extend(other.parts);
        self
    }

    /// Appends a copy of another fragment (its values are bound again).
    pub(crate) fn push_sql_ref(&mut self, other: &Sql) -> &mut Self {
        self.parts.extend(other.parts.iter().cloned());
        self
    }

    /// `items` separated by `sep`.
    pub(crate) fn join(items: impl IntoIterator<Item = Sql>, sep: &'static str) -> Sql {
        let mut out = Sql::new();
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                out.push(sep);
            }
            out.push_sql(item);
        }
        out
    }

    /// `(self)`.
    pub(crate) fn parenthesized(self) -> Sql {
        let mut out = Sql::text("(");
        out.push_sql(self).push(")");
        out
    }

    /// True when nothing has been pushed.
    pub(crate) fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The statement text with placeholders, and the values in placeholder order.
    ///
    /// On PostgreSQL identical values share one `$n`, so an expression that appears
    /// in both `SELECT` and `GROUP BY` is textually identical in both places (the
    /// planner matches grouped expressions structurally). SQLite's `?` is positional.
    pub(crate) fn finish(self, dialect: Dialect) -> (String, Vec<BoundValue>) {
        let mut sql = String::new();
        let mut values: Vec<BoundValue> = Vec::new();
        for part in self.parts {
            match part {
                Part::Text(t) => sql.push_str(t),
                Part::Ident(i) => {
                    sql.push('"');
                    sql.push_str(i.as_str());
                    sql.push('"');
                }
                Part::Param(v) => {
                    let existing = if dialect.dedups_params() {
                        values.iter().position(|x| same_value(x, &v))
                    } else {
                        None
                    };
                    let n = match existing {
                        Some(i) => i + 1,
                        None => {
                            values.push(v);
                            values.len()
                        }
                    };
                    sql.push_str(&dialect.placeholder(n));
                }
            }
        }
        (sql, values)
    }
}

/// Equality for sharing a placeholder: same variant and same value (bitwise for reals).
fn same_value(a: &BoundValue, b: &BoundValue) -> bool {
    match (a, b) {
        (BoundValue::Real(x), BoundValue::Real(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_must_be_plain_words() {
        for ok in ["wounds", "area_cm2", "_x", "A1"] {
            assert!(Ident::new(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "1x",
            "a b",
            "a\"b",
            "wounds; DROP",
            "a-b",
            "é",
            &"x".repeat(64),
        ] {
            assert!(Ident::new(bad).is_err(), "{bad}");
        }
        assert!(Ident::dotted(&["wounds", "area"]).is_ok());
        assert!(Ident::dotted(&["wounds", "a\"b"]).is_err());
    }

    #[test]
    fn values_become_placeholders_in_order() {
        let mut s = Sql::text("SELECT ");
        s.push_param(BoundValue::Int(1))
            .push(", ")
            .push_param(BoundValue::Text("x".into()));
        s.push(", ").push_param(BoundValue::Int(1));
        let (sqlite, v1) = s.clone().finish(Dialect::Sqlite);
        assert_eq!(sqlite, "SELECT ?, ?, ?");
        assert_eq!(v1.len(), 3);
        let (pg, v2) = s.finish(Dialect::Postgres);
        assert_eq!(pg, "SELECT $1, $2, $1");
        assert_eq!(v2, vec![BoundValue::Int(1), BoundValue::Text("x".into())]);
    }

    #[test]
    fn identifiers_are_quoted() {
        let s = Sql::column(&Ident::new("w").unwrap(), &Ident::new("area_cm2").unwrap());
        assert_eq!(s.finish(Dialect::Sqlite).0, "\"w\".\"area_cm2\"");
    }
}

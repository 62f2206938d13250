//! The SQL dialects Clarion renders for, and every difference between them.
//!
//! All dialect-specific SQL lives in the capability methods of [`Dialect`]: date
//! arithmetic, date truncation, output casts, median, placeholders, collation for
//! sorting and boolean literals. The renderer asks; it never branches on the dialect
//! itself. Dates are compared and returned as ISO `YYYY-MM-DD` on both backends
//! (SQLite stores them as text, PostgreSQL as `DATE`), and date cut-offs relative to
//! "today" are computed in Rust from the plan's `today` and bound — the database
//! clock is never read. This module must not format values into SQL text.

use crate::db::Backend;
use chrono::{Days, Months, NaiveDate};
use serde::{Deserialize, Serialize};

use super::fragment::{BoundValue, Sql};
use crate::semantic::{AttributeType, Grain, Span, SpanUnit};

/// A SQL dialect the renderer supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// SQLite 3.39 or later (window functions, `NULLS LAST`, `IS NOT DISTINCT FROM`;
    /// sqlx bundles a newer one).
    Sqlite,
    /// PostgreSQL 12 or later.
    Postgres,
}

impl From<Backend> for Dialect {
    fn from(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => Dialect::Sqlite,
            Backend::Postgres => Dialect::Postgres,
        }
    }
}
impl Dialect {
    /// Both dialects, for tests and tools that render for each.
    pub const ALL: [Dialect; 2] = [Dialect::Sqlite, Dialect::Postgres];

    /// Lowercase name (`sqlite`, `postgres`).
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }

    /// The placeholder for the `n`-th (1-based) distinct bound value.
    pub fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => "?".to_owned(),
            Dialect::Postgres => format!("${n}"),
        }
    }

    /// Whether identical values may share one numbered placeholder (`$n`).
    pub fn dedups_params(self) -> bool {
        matches!(self, Dialect::Postgres)
    }

    /// A boolean literal (SQLite has no boolean type: 1 and 0).
    pub fn bool_literal(self, value: bool) -> &'static str {
        match (self, value) {
            (Dialect::Sqlite, true) => "1",
            (Dialect::Sqlite, false) => "0",
            (Dialect::Postgres, true) => "TRUE",
            (Dialect::Postgres, false) => "FALSE",
        }
    }

    /// Whether the dialect has a median aggregate. SQLite has none; the renderer
    /// computes it there with window functions in a CTE.
    pub fn has_median_aggregate(self) -> bool {
        matches!(self, Dialect::Postgres)
    }

    /// Collation applied to text sort keys so that both backends order text the same
    /// way (byte order: SQLite's `BINARY`, PostgreSQL's `"C"`).
    pub fn text_sort_collation(self) -> Option<&'static str> {
        match self {
            Dialect::Sqlite => None,
            Dialect::Postgres => Some("\"C\""),
        }
    }

    /// The sqlparser dialect that parses this dialect's SQL.
    pub fn parser_dialect(self) -> Box<dyn sqlparser::dialect::Dialect> {
        match self {
            Dialect::Sqlite => Box::new(sqlparser::dialect::SQLiteDialect {}),
            Dialect::Postgres => Box::new(sqlparser::dialect::PostgreSqlDialect {}),
        }
    }

    /// Whole days from `from` to `to` (integer; null when either is null).
    pub(crate) fn days_between(self, from: Sql, to: Sql) -> Sql {
        let mut s = Sql::new();
        match self {
            Dialect::Sqlite => {
                s.push("CAST(julianday(")
                    .push_sql(to)
                    .push(") - julianday(")
                    .push_sql(from);
                s.push(") AS INTEGER)");
            }
            Dialect::Postgres => {
                s.push("(").push_sql(to).push(" - ").push_sql(from).push(")");
            }
        }
        s
    }

    /// The calendar year of a date, as an integer.
    pub(crate) fn year_of(self, date: Sql) -> Sql {
        let mut s = Sql::new();
        match self {
            Dialect::Sqlite => s
                .push("CAST(strftime('%Y', ")
                .push_sql(date)
                .push(") AS INTEGER)"),
            Dialect::Postgres => s
                .push("CAST(EXTRACT(YEAR FROM ")
                .push_sql(date)
                .push(") AS INTEGER)"),
        };
        s
    }

    /// `month * 100 + day` of a date, as an integer (for whole-year differences).
    pub(crate) fn month_day_of(self, date: Sql) -> Sql {
        let mut s = Sql::new();
        match self {
            Dialect::Sqlite => s
                .push("CAST(strftime('%m%d', ")
                .push_sql(date)
                .push(") AS INTEGER)"),
            Dialect::Postgres => s
                .push("CAST(EXTRACT(MONTH FROM ")
                .push_sql(date.clone())
                .push(") * 100 + EXTRACT(DAY FROM ")
                .push_sql(date)
                .push(") AS INTEGER)"),
        };
        s
    }

    /// The first day of the grain's period containing `date`, as ISO text (weeks
    /// start on Monday, quarters in January, April, July and October).
    pub(crate) fn truncate_date(self, date: Sql, grain: Grain) -> Sql {
        let mut s = Sql::new();
        match self {
            Dialect::Sqlite => match grain {
                Grain::Day => s.push("date(").push_sql(date).push(")"),
                // 'weekday 0' moves forward to Sunday (or stays); six days back is Monday.
                Grain::Week => s.push("date(").push_sql(date).push(", 'weekday 0', '-6 days')"),
                Grain::Month => s.push("strftime('%Y-%m-01', ").push_sql(date).push(")"),
                // the month's first day, back to the quarter's first month; NULL stays NULL
                // (a printf of the parts made '-00-01' of it)
                Grain::Quarter => s
                    .push("date(")
                    .push_sql(date.clone())
                    .push(", 'start of month', '-' || ((CAST(strftime('%m', ")
                    .push_sql(date)
                    .push(") AS INTEGER) - 1) % 3) || ' months')"),
                Grain::Year => s.push("strftime('%Y-01-01', ").push_sql(date).push(")"),
            },
            Dialect::Postgres => {
                let field = match grain {
                    Grain::Day => return self.date_text(date),
                    Grain::Week => "'week'",
                    Grain::Month => "'month'",
                    Grain::Quarter => "'quarter'",
                    Grain::Year => "'year'",
                };
                s.push("to_char(date_trunc(")
                    .push(field)
                    .push(", CAST(")
                    .push_sql(date);
                s.push(" AS TIMESTAMP)), 'YYYY-MM-DD')")
            }
        };
        s
    }

    /// A date as ISO `YYYY-MM-DD` text (SQLite already stores it so).
    pub(crate) fn date_text(self, date: Sql) -> Sql {
        match self {
            Dialect::Sqlite => date,
            Dialect::Postgres => {
                let mut s = Sql::text("to_char(CAST(");
                s.push_sql(date).push(" AS TIMESTAMP), 'YYYY-MM-DD')");
                s
            }
        }
    }

    /// The median aggregate, where the dialect has one.
    pub(crate) fn median(self, expr: Sql) -> Option<Sql> {
        match self {
            Dialect::Sqlite => None,
            Dialect::Postgres => {
                let mut s = Sql::text("percentile_cont(0.5) WITHIN GROUP (ORDER BY ");
                s.push_sql(expr).push(")");
                Some(s)
            }
        }
    }

    /// Casts an output column so both backends return the same Rust type: integers
    /// as 64-bit, reals as double precision, dates as ISO text.
    pub(crate) fn output(self, expr: Sql, ty: AttributeType) -> Sql {
        let mut s = Sql::new();
        match (self, ty) {
            (_, AttributeType::Date) => return self.date_text(expr),
            (_, AttributeType::Text | AttributeType::Boolean) => return expr,
            (Dialect::Sqlite, AttributeType::Integer) => return expr,
            (Dialect::Sqlite, AttributeType::Real) => s.push("CAST(").push_sql(expr).push(" AS REAL)"),
            (Dialect::Postgres, AttributeType::Integer) => s.push("CAST(").push_sql(expr).push(" AS BIGINT)"),
            (Dialect::Postgres, AttributeType::Real) => {
                s.push("CAST(").push_sql(expr).push(" AS DOUBLE PRECISION)")
            }
        };
        s
    }

    /// A real output rounded to `places` decimals ("rounded to 1 decimal"), still a
    /// double on both backends. `places` is bound, never written into the SQL.
    pub(crate) fn round(self, expr: Sql, places: u8) -> Sql {
        let mut s = Sql::new();
        match self {
            Dialect::Sqlite => {
                s.push("ROUND(")
                    .push_sql(expr)
                    .push(", ")
                    .push_param(BoundValue::Int(i64::from(places)))
                    .push(")");
            }
            Dialect::Postgres => {
                s.push("CAST(ROUND(CAST(")
                    .push_sql(expr)
                    .push(" AS NUMERIC), CAST(")
                    .push_param(BoundValue::Int(i64::from(places)))
                    .push(" AS INTEGER)) AS DOUBLE PRECISION)");
            }
        }
        s
    }

    /// `expr` as a sort key: text sorted by bytes on both backends. `ty` is the SQL
    /// type of `expr` itself (a PostgreSQL `DATE` takes no collation).
    pub(crate) fn sort_key(self, expr: Sql, ty: AttributeType) -> Sql {
        match (ty, self.text_sort_collation()) {
            (AttributeType::Text, Some(collation)) => {
                let mut s = expr;
                s.push(" COLLATE ").push(collation);
                s
            }
            _ => expr,
        }
    }
}

/// `today` minus a span, with calendar months and years (the 31st minus one month is
/// the last day of the previous month). `None` when the date would be out of range.
pub fn date_minus(today: NaiveDate, span: Span) -> Option<NaiveDate> {
    match span.unit {
        SpanUnit::Days => today.checked_sub_days(Days::new(u64::from(span.n))),
        SpanUnit::Weeks => today.checked_sub_days(Days::new(u64::from(span.n) * 7)),
        SpanUnit::Months => today.checked_sub_months(Months::new(span.n)),
        SpanUnit::Years => today.checked_sub_months(Months::new(span.n.checked_mul(12)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::fragment::{BoundValue, Ident};

    fn col() -> Sql {
        Sql::column(&Ident::new("w").unwrap(), &Ident::new("d").unwrap())
    }

    #[test]
    fn placeholders_differ_by_dialect() {
        assert_eq!(Dialect::Sqlite.placeholder(3), "?");
        assert_eq!(Dialect::Postgres.placeholder(3), "$3");
    }

    #[test]
    fn month_truncation_uses_strftime_on_sqlite_and_date_trunc_on_postgres() {
        let s = Dialect::Sqlite
            .truncate_date(col(), Grain::Month)
            .finish(Dialect::Sqlite)
            .0;
        assert_eq!(s, "strftime('%Y-%m-01', \"w\".\"d\")");
        let p = Dialect::Postgres
            .truncate_date(col(), Grain::Month)
            .finish(Dialect::Postgres)
            .0;
        assert_eq!(
            p,
            "to_char(date_trunc('month', CAST(\"w\".\"d\" AS TIMESTAMP)), 'YYYY-MM-DD')"
        );
    }

    #[test]
    fn day_differences_use_julianday_on_sqlite_and_date_subtraction_on_postgres() {
        let today = Sql::param(BoundValue::Date(NaiveDate::from_ymd_opt(2026, 1, 1).unwrap()));
        let (s, v) = Dialect::Sqlite
            .days_between(col(), today.clone())
            .finish(Dialect::Sqlite);
        assert_eq!(s, "CAST(julianday(?) - julianday(\"w\".\"d\") AS INTEGER)");
        assert_eq!(v.len(), 1);
        let (p, _) = Dialect::Postgres
            .days_between(col(), today)
            .finish(Dialect::Postgres);
        assert_eq!(p, "($1 - \"w\".\"d\")");
    }

    #[test]
    fn only_postgres_has_a_median_aggregate() {
        assert!(Dialect::Sqlite.median(col()).is_none());
        assert!(Dialect::Postgres.median(col()).is_some());
        assert!(!Dialect::Sqlite.has_median_aggregate());
    }

    #[test]
    fn outputs_are_cast_to_one_rust_type_per_kind() {
        let p = Dialect::Postgres
            .output(col(), AttributeType::Integer)
            .finish(Dialect::Postgres)
            .0;
        assert_eq!(p, "CAST(\"w\".\"d\" AS BIGINT)");
        let s = Dialect::Sqlite
            .output(col(), AttributeType::Integer)
            .finish(Dialect::Sqlite)
            .0;
        assert_eq!(s, "\"w\".\"d\"");
        assert_eq!(Dialect::Sqlite.bool_literal(true), "1");
        assert_eq!(Dialect::Postgres.bool_literal(false), "FALSE");
    }

    #[test]
    fn calendar_spans_clamp_to_month_ends() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).unwrap();
        assert_eq!(
            date_minus(
                d(2026, 3, 31),
                Span {
                    n: 1,
                    unit: SpanUnit::Months
                }
            ),
            Some(d(2026, 2, 28))
        );
        assert_eq!(
            date_minus(
                d(2026, 3, 31),
                Span {
                    n: 2,
                    unit: SpanUnit::Weeks
                }
            ),
            Some(d(2026, 3, 17))
        );
        assert_eq!(
            date_minus(
                d(2024, 2, 29),
                Span {
                    n: 1,
                    unit: SpanUnit::Years
                }
            ),
            Some(d(2023, 2, 28))
        );
        assert_eq!(date_minus(d(2026, 1, 10), Span::days(10)), Some(d(2025, 12, 31)));
    }
}

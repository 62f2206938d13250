//! Property: every random valid plan over the wound-care model renders for both
//! dialects, parses back as exactly one statement with sqlparser (SQLite and
//! PostgreSQL dialects), passes the guard, binds exactly as many values as it has
//! placeholders, and never carries a text value in its SQL text.

mod sql_support;

use proptest::prelude::*;
use server::sql::{BoundValue, Dialect, guard, render, render_count, render_with_cap};
use sql_support::{HOSTILE_TEXT, MODEL};
use sqlparser::parser::Parser;

/// Placeholders in the text: `?` for SQLite, the highest `$n` for PostgreSQL (the
/// renderer never writes `?` or `$` inside a string literal).
fn placeholders(sql: &str, dialect: Dialect) -> usize {
    match dialect {
        Dialect::Sqlite => sql.matches('?').count(),
        Dialect::Postgres => sql
            .split('$')
            .skip(1)
            .filter_map(|rest| {
                rest.split(|c: char| !c.is_ascii_digit())
                    .next()?
                    .parse::<usize>()
                    .ok()
            })
            .max()
            .unwrap_or(0),
    }
}

fn check_rendered(r: &server::sql::Rendered, dialect: Dialect) -> Result<(), TestCaseError> {
    let statements = Parser::parse_sql(dialect.parser_dialect().as_ref(), &r.sql)
        .map_err(|e| TestCaseError::fail(format!("{dialect:?} does not parse: {e}\n{}", r.sql)))?;
    prop_assert_eq!(statements.len(), 1, "{}", r.sql);
    prop_assert_eq!(
        guard::check(&r.sql, &MODEL, dialect),
        Ok(()),
        "guard refused rendered SQL:\n{}",
        r.sql
    );
    prop_assert_eq!(
        placeholders(&r.sql, dialect),
        r.values.len(),
        "{}\n{:?}",
        r.sql,
        r.values
    );
    prop_assert!(
        !r.sql.contains(HOSTILE_TEXT) && !r.sql.contains("O'Brien"),
        "a value leaked into SQL text:\n{}",
        r.sql
    );
    for v in &r.values {
        if let BoundValue::Text(t) = v {
            prop_assert!(
                t.len() < 4 || !r.sql.contains(&format!("'{t}'")),
                "{t:?} appears as a literal:\n{}",
                r.sql
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_plans_render_parse_back_and_pass_the_guard(plan in sql_support::plan()) {
        for dialect in Dialect::ALL {
            let rendered = render(&plan, &MODEL, dialect)
                .map_err(|e| TestCaseError::fail(format!("{dialect:?}: {e}\n{plan:#?}")))?;
            check_rendered(&rendered, dialect)?;
            let capped = render_with_cap(&plan, &MODEL, dialect, 100)
                .map_err(|e| TestCaseError::fail(format!("{dialect:?}: {e}")))?;
            check_rendered(&capped, dialect)?;
            let count = render_count(&plan, &MODEL, dialect)
                .map_err(|e| TestCaseError::fail(format!("{dialect:?}: {e}")))?;
            check_rendered(&count, dialect)?;
        }
    }
}

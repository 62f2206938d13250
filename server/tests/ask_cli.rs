//! `server ask` end to end: the real binary against a fresh SQLite file (seeded on first
//! use), non-interactive (best guesses, open questions listed) and interactive (a
//! numbered choice typed on standard input). Expected numbers come from hand-written
//! SQL on the same database, not from the engine.

use std::io::Write;
use std::process::{Command, Stdio};

fn server() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_server"));
    c.env_remove("DATABASE_URL").env("CLARION_LOG", "warn");
    c
}

async fn scalar(url: &str, sql: &str) -> i64 {
    let pool = sqlx::SqlitePool::connect(url).await.unwrap();
    let n: i64 = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
    pool.close().await;
    n
}

fn ask(url: &str, question: &str, extra: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = server()
        .args(["ask", question, "--database", url, "--today", "2026-11-01"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_answers_with_a_table_and_asks_with_numbered_options_when_interactive() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("ask.db").display());

    // Non-interactive, clear question: the count, as a table.
    let (ok, out, err) = ask(&url, "how many open wounds", &["--sql"], "");
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    let open = scalar(&url, "SELECT COUNT(*) FROM wounds WHERE status = 'open'").await;
    assert!(out.contains(&format!("| {open}")), "expected {open} in:\n{out}");
    assert!(out.contains("SQL: SELECT"), "{out}");
    assert!(out.contains("1 row"), "{out}");

    // Non-interactive, critical vague word: best guess applied, the question listed.
    let (ok, out, err) = ask(&url, "how many serious wounds", &[], "");
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("Open questions"), "{out}");
    let full = scalar(&url, "SELECT COUNT(*) FROM wounds WHERE depth = 'full_thickness'").await;
    assert!(
        out.contains(&format!("| {full}")),
        "best guess = full thickness ({full}):\n{out}"
    );

    // Interactive: the numbered options go to stderr; typing 2 picks "Infected".
    let (ok, out, err) = ask(&url, "how many serious wounds", &["--interactive"], "2\n");
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        err.contains("*1.") && err.contains(" 2."),
        "numbered options with the default marked:\n{err}"
    );
    let infected = scalar(
        &url,
        "SELECT COUNT(*) FROM wounds w WHERE (SELECT a.infection_signs FROM assessments a \
         WHERE a.wound_id = w.id ORDER BY a.assessed_on DESC LIMIT 1) = 1",
    )
    .await;
    assert!(
        out.contains(&format!("| {infected}")),
        "after choosing 2 = infected ({infected}):\n{out}"
    );
    assert!(!out.contains("Open questions"), "nothing left open:\n{out}");

    // A data-changing request is refused, never run.
    let (ok, out, _) = ask(&url, "delete all patients", &[], "");
    assert!(ok);
    assert!(out.contains("I can only"), "{out}");
    assert_eq!(
        scalar(&url, "SELECT COUNT(*) FROM patients").await,
        2000,
        "nothing deleted"
    );
}

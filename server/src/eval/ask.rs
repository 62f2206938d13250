//! `server ask "question"`: one question from the command line, answered against the
//! clinical database.
//!
//! Non-interactive by default (F14): the engine's best guesses are applied, and the
//! answer is printed with its assumptions and the questions it would have asked
//! ("open questions"). With `--interactive` each clarification question is asked in
//! the terminal with numbered options; Enter accepts the default (marked `*`), `?`
//! means "I don't know — use your best judgment".
//!
//! It shares the evaluation's plumbing (allowed values from the database, rendering,
//! execution into cells). Rendered SQL runs on a read-only connection (SQLite opened
//! read-only; PostgreSQL inside `SET TRANSACTION READ ONLY` with a statement timeout),
//! capped at [`ROW_CAP`] rows. Prompting goes through [`Prompter`] so the interactive
//! flow is tested without a terminal.

use chrono::NaiveDate;
use sqlx::postgres::PgRow;
use sqlx::{Row, TypeInfo, ValueRef};
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::str::FromStr;
use std::time::Duration;

use super::compare::{Cell, Rows};
use super::exec::row_cells;
use crate::dataset::{self, GenConfig};
use crate::db::Database;
use crate::engine::{
    AllowedValuesSnapshot, Ambiguity, ConversationContext, Decision, EngineIndex, EngineInput, Resolution,
    Resolutions, Understanding, understand,
};
use crate::semantic::SemanticModel;
use crate::sql::{Dialect, Rendered, render_with_cap};
use crate::warehouse::{AllowedValuesConfig, AllowedValuesProvider, ColumnSpec};

/// Most rows printed.
pub const ROW_CAP: u32 = 200;
/// Longest a question's statement may run.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// Clarification rounds before proceeding on best guesses (F10).
pub const MAX_ROUNDS: u32 = 2;

/// Asks the user one clarification question and returns the answer.
pub trait Prompter {
    /// Shows `ambiguity` and reads the choice.
    fn choose(&mut self, ambiguity: &Ambiguity) -> std::io::Result<Resolution>;
}

/// A prompter over a reader and a writer (the terminal, or buffers in tests).
pub struct TerminalPrompter<R, W> {
    input: R,
    output: W,
}

impl<R: BufRead, W: Write> TerminalPrompter<R, W> {
    /// Prompts on `output`, reads lines from `input`.
    pub fn new(input: R, output: W) -> Self {
        TerminalPrompter { input, output }
    }
}

impl<R: BufRead, W: Write> Prompter for TerminalPrompter<R, W> {
    fn choose(&mut self, ambiguity: &Ambiguity) -> std::io::Result<Resolution> {
        write!(self.output, "{}", format_question(ambiguity))?;
        loop {
            write!(
                self.output,
                "Choice [Enter = default, ? = use your best judgment]: "
            )?;
            self.output.flush()?;
            let mut line = String::new();
            if self.input.read_line(&mut line)? == 0 {
                // End of input: take the default rather than hang.
                return Ok(default_resolution(ambiguity));
            }
            match parse_choice(line.trim(), ambiguity) {
                Ok(r) => return Ok(r),
                Err(msg) => writeln!(self.output, "{msg}")?,
            }
        }
    }
}

/// The question with numbered options, the default marked with `*`.
pub fn format_question(a: &Ambiguity) -> String {
    let mut s = format!("\n{}\n", a.question);
    if !a.reason.is_empty() {
        let _ = writeln!(s, "  ({})", a.reason);
    }
    for (i, o) in a.options.iter().enumerate() {
        let mark = if o.default { "*" } else { " " };
        let _ = write!(s, "  {mark}{}. {}", i + 1, o.label);
        if !o.description.is_empty() && o.description != o.label {
            let _ = write!(s, " — {}", o.description);
        }
        s.push('\n');
    }
    s
}

fn default_resolution(a: &Ambiguity) -> Resolution {
    match a.default_option() {
        Some(o) => Resolution::Option { id: o.id.clone() },
        None => Resolution::DontKnow,
    }
}

/// Reads one typed choice: empty = the default, `?` = best judgment, a number = that
/// option, an option id = that option.
pub fn parse_choice(input: &str, a: &Ambiguity) -> Result<Resolution, String> {
    if input.is_empty() {
        return Ok(default_resolution(a));
    }
    if input == "?" {
        return Ok(Resolution::DontKnow);
    }
    if let Ok(n) = input.parse::<usize>() {
        return a
            .options
            .get(n.wrapping_sub(1))
            .map(|o| Resolution::Option { id: o.id.clone() })
            .ok_or_else(|| format!("Please type a number from 1 to {}.", a.options.len()));
    }
    a.option(input)
        .map(|o| Resolution::Option { id: o.id.clone() })
        .ok_or_else(|| {
            format!(
                "Please type a number from 1 to {}, or press Enter.",
                a.options.len()
            )
        })
}

/// The final understanding of a question: the engine's answer, after interactive
/// rounds when a prompter is given (at most [`MAX_ROUNDS`], then best guesses).
pub fn resolve(
    model: &SemanticModel,
    index: &EngineIndex,
    allowed: &AllowedValuesSnapshot,
    question: &str,
    today: NaiveDate,
    mut prompter: Option<&mut dyn Prompter>,
) -> std::io::Result<Understanding> {
    let context = ConversationContext::empty();
    let mut answers = Resolutions::empty();
    let mut rounds = 0;
    loop {
        let check = crate::sql::RenderCheck { model };
        let input = EngineInput::new(model, question, today)
            .with_index(index)
            .with_check(&check)
            .with_allowed(allowed)
            .with_context(&context)
            .with_resolutions(&answers);
        let u = understand(&input);
        let Some(p) = prompter.as_deref_mut() else {
            return Ok(u);
        };
        if !matches!(u.decision, Decision::Clarify) || rounds == MAX_ROUNDS {
            return Ok(u);
        }
        rounds += 1;
        let before = answers.answers.len();
        for a in u.questions() {
            let choice = p.choose(a)?;
            answers.answers.insert(a.id.clone(), choice);
        }
        if answers.answers.len() == before {
            return Ok(u);
        }
    }
}

/// The answer to one question, ready to print.
pub fn format_answer(
    u: &Understanding,
    columns: &[String],
    rows: &Rows,
    truncated: bool,
    sql: Option<&str>,
) -> String {
    let mut s = String::new();
    if !u.restatement.is_empty() {
        let _ = writeln!(s, "{}", u.restatement);
    }
    if !u.assumptions.is_empty() {
        let _ = writeln!(s, "\nAssumptions:");
        for a in &u.assumptions {
            let _ = writeln!(s, "  • {} → {}", a.piece, a.assumed);
        }
    }
    let open: Vec<&Ambiguity> = u.questions().collect();
    if !open.is_empty() {
        let _ = writeln!(
            s,
            "\nOpen questions (answered with the best guess; use --interactive to choose):"
        );
        for a in open {
            let options: Vec<String> = a
                .options
                .iter()
                .map(|o| {
                    if o.default {
                        format!("[{}]", o.label)
                    } else {
                        o.label.clone()
                    }
                })
                .collect();
            let _ = writeln!(s, "  • {} {}", a.question, options.join(" | "));
        }
    }
    if let Some(sql) = sql {
        let _ = writeln!(s, "\nSQL: {sql}");
    }
    s.push('\n');
    s.push_str(&format_table(columns, rows));
    let _ = writeln!(
        s,
        "{} row{}{}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        if truncated {
            format!(" (first {ROW_CAP} shown)")
        } else {
            String::new()
        }
    );
    s
}

/// A plain-text table with a header row.
pub fn format_table(columns: &[String], rows: &Rows) -> String {
    let cell_text = |c: &Cell| match c {
        Cell::Real(r) => format!("{:.2}", r),
        other => other.to_string(),
    };
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    let texts: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(cell_text).collect()).collect();
    for row in &texts {
        for (i, t) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(t.chars().count());
            }
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut s = line(columns);
    s.push_str(&format!(
        "|{}|\n",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("|")
    ));
    for row in &texts {
        s.push_str(&line(row));
    }
    s
}

/// Runs `rendered` read-only and returns its rows.
async fn execute(url: &str, rendered: &Rendered) -> anyhow::Result<Rows> {
    if url.starts_with("sqlite:") {
        let opts = sqlx::sqlite::SqliteConnectOptions::from_str(url)?.read_only(true);
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(opts)
            .await?;
        let fetched = tokio::time::timeout(STATEMENT_TIMEOUT, rendered.sqlite_query().fetch_all(&pool)).await;
        pool.close().await;
        let rows =
            fetched.map_err(|_| anyhow::anyhow!("the query took longer than {STATEMENT_TIMEOUT:?}"))??;
        rows.iter()
            .map(row_cells)
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)
    } else {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(url)
            .await?;
        let mut tx = pool.begin().await?;
        sqlx::query("SET TRANSACTION READ ONLY").execute(&mut *tx).await?;
        sqlx::query("SET LOCAL statement_timeout = '30s'")
            .execute(&mut *tx)
            .await?;
        let rows = rendered.postgres_query().fetch_all(&mut *tx).await?;
        tx.rollback().await?;
        pool.close().await;
        rows.iter()
            .map(pg_cells)
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)
    }
}

fn pg_cells(row: &PgRow) -> Result<Vec<Cell>, String> {
    (0..row.len())
        .map(|i| {
            let raw = row.try_get_raw(i).map_err(|e| e.to_string())?;
            if raw.is_null() {
                return Ok(Cell::Null);
            }
            let err = |e: sqlx::Error| e.to_string();
            Ok(match raw.type_info().name() {
                "INT2" | "INT4" | "INT8" => Cell::Int(
                    row.try_get::<i64, _>(i)
                        .or_else(|_| row.try_get::<i32, _>(i).map(i64::from))
                        .map_err(err)?,
                ),
                "FLOAT4" | "FLOAT8" => Cell::Real(row.try_get::<f64, _>(i).map_err(err)?),
                "BOOL" => Cell::Int(i64::from(row.try_get::<bool, _>(i).map_err(err)?)),
                "DATE" => Cell::Text(row.try_get::<NaiveDate, _>(i).map_err(err)?.to_string()),
                _ => Cell::Text(row.try_get::<String, _>(i).map_err(err)?),
            })
        })
        .collect()
}

/// CLI glue for `server ask`: opens (and on first use seeds) the database, answers the
/// question, and returns the text to print.
pub async fn cli_ask(
    database_url: &str,
    question: &str,
    interactive: bool,
    today: NaiveDate,
    show_sql: bool,
) -> anyhow::Result<String> {
    let model = SemanticModel::wound_care();
    let db = Database::connect_and_migrate(database_url).await?;
    // As the server's embedded default: a database seeded here ends on `today`.
    dataset::seed_if_empty(&db, &GenConfig::demo_ending_on(today)).await?;
    let provider = AllowedValuesProvider::new(
        db.clone(),
        ColumnSpec::from_model(&model),
        AllowedValuesConfig::default(),
    )?;
    provider.refresh_all().await;
    let snap = provider.snapshot_all().await;
    db.close().await;
    let allowed = AllowedValuesSnapshot::from_table_columns(
        &model,
        snap.iter().map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)),
    );
    let index = EngineIndex::build(&model);
    let u = if interactive {
        let stdin = std::io::stdin();
        let mut prompter = TerminalPrompter::new(stdin.lock(), std::io::stderr());
        resolve(&model, &index, &allowed, question, today, Some(&mut prompter))?
    } else {
        resolve(&model, &index, &allowed, question, today, None)?
    };
    if let Decision::Refuse { message, .. } = &u.decision {
        return Ok(message.clone());
    }
    let Some(plan) = &u.plan else {
        anyhow::bail!("the engine produced no plan for this question")
    };
    let dialect = if database_url.starts_with("sqlite:") {
        Dialect::Sqlite
    } else {
        Dialect::Postgres
    };
    let rendered = render_with_cap(plan, &model, dialect, ROW_CAP)?;
    let mut rows = execute(database_url, &rendered).await?;
    let truncated = rendered.is_truncated(rows.len());
    rows.truncate(ROW_CAP as usize);
    let columns: Vec<String> = rendered.columns.iter().map(|c| c.label.clone()).collect();
    Ok(format_answer(
        &u,
        &columns,
        &rows,
        truncated,
        show_sql.then_some(rendered.sql.as_str()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AmbiguityKind, AmbiguityOption, CustomValue, Effect, Severity};

    fn amb() -> Ambiguity {
        let opt = |id: &str, default| AmbiguityOption {
            id: id.into(),
            label: format!("Label {id}"),
            description: String::new(),
            default,
            effect: Effect::default(),
        };
        Ambiguity {
            id: "term:large@wounds".into(),
            kind: AmbiguityKind::VagueQualifier,
            severity: Severity::High,
            span: None,
            text: "large".into(),
            question: "What counts as a large wound?".into(),
            options: vec![opt("gt10", true), opt("gt25", false), opt("gt50", false)],
            custom: CustomValue::None,
            reason: String::new(),
            term: Some("large".into()),
            confidence: 0.5,
            ask: true,
        }
    }

    #[test]
    fn enter_takes_the_default_a_number_its_option_and_a_question_mark_best_judgment() {
        let a = amb();
        assert_eq!(parse_choice("", &a), Ok(Resolution::Option { id: "gt10".into() }));
        assert_eq!(
            parse_choice("3", &a),
            Ok(Resolution::Option { id: "gt50".into() })
        );
        assert_eq!(
            parse_choice("gt25", &a),
            Ok(Resolution::Option { id: "gt25".into() })
        );
        assert_eq!(parse_choice("?", &a), Ok(Resolution::DontKnow));
        assert!(parse_choice("0", &a).is_err());
        assert!(parse_choice("9", &a).is_err());
        assert!(parse_choice("huge", &a).is_err());
    }

    #[test]
    fn the_terminal_prompter_shows_numbered_options_with_the_default_marked_and_retries_bad_input() {
        let mut out = Vec::new();
        let mut p = TerminalPrompter::new(&b"7\n2\n"[..], &mut out);
        assert_eq!(
            p.choose(&amb()).unwrap(),
            Resolution::Option { id: "gt25".into() }
        );
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("What counts as a large wound?"), "{shown}");
        assert!(
            shown.contains("*1. Label gt10") && shown.contains(" 2. Label gt25"),
            "{shown}"
        );
        assert!(shown.contains("from 1 to 3"), "bad input is explained: {shown}");
    }

    #[test]
    fn end_of_input_takes_the_default_instead_of_hanging() {
        let mut out = Vec::new();
        let mut p = TerminalPrompter::new(&b""[..], &mut out);
        assert_eq!(
            p.choose(&amb()).unwrap(),
            Resolution::Option { id: "gt10".into() }
        );
    }

    #[test]
    fn tables_pad_columns_to_the_widest_value() {
        let t = format_table(
            &["Clinic".into(), "Wounds".into()],
            &vec![
                vec![Cell::Text("Riverside".into()), Cell::Int(12)],
                vec![Cell::Text("Bay".into()), Cell::Real(12.3456)],
            ],
        );
        assert_eq!(
            t,
            "| Clinic    | Wounds |\n|-----------|--------|\n| Riverside | 12     |\n| Bay       | 12.35  |\n"
        );
    }
}

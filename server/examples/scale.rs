//! The scale benchmark: every answerable question of the labeled set against the release
//! server on a freshly seeded database, on SQLite or PostgreSQL, at a given scale.
//!
//! ```sh
//! cargo build -p server --profile server-release --bin server --example scale
//! target/server-release/examples/scale --backend sqlite --scale 100    # 1× (the demo size)
//! target/server-release/examples/scale --backend postgres --scale 1000 # 10×
//! ```
//!
//! What it does:
//! 1. Creates a fresh database (a temporary SQLite file, or a new PostgreSQL database
//!    next to `--pg-admin`), seeds it with `server seed`'s dataset at `--scale` and, on
//!    PostgreSQL, runs `VACUUM ANALYZE`. `--database URL` uses that database instead
//!    (seeded only when its clinical tables are empty) and keeps it.
//! 2. Starts the release server on it (`--server`, default the `server` binary next to
//!    this example's directory) on a free loopback port, or targets `--addr`.
//! 3. Asks every answerable eval item (`server/eval/questions/*.toml`, refusals left out;
//!    a follow-up after its previous question in the same thread) with `"interactive":
//!    false` `--runs` times after one warm-up, and times each request end to end.
//! 4. Reads each question in-process exactly as the server does (same model, allowed
//!    values, date, renderer, live or from the summaries), checks the SQL is the one the
//!    server ran, and times that statement alone on the database (`--runs` times after a
//!    warm-up).
//! 5. Asks `--rounds` of the `ask` items interactively: the first round, the same round
//!    again (option counts cached), and its answer (each question's preselected options).
//!
//! It prints p50/p95 per category (the eval file), the items over the 100 ms budget,
//! the 10 slowest questions with their SQL and their SQL's time alone, the overhead
//! (server time over SQL time) and the rounds' figures; `--csv FILE` writes one line
//! per item. Not a test: it measures, and exits non-zero only when something failed
//! (a status other than the expected one, a SQL mismatch), never on a slow figure.
//! The server inherits this process's environment (`CLARION_SUMMARIES=0 scale …`
//! measures without the summaries).

#[path = "../tests/common/http.rs"]
mod http;

use clap::{Parser, ValueEnum};
use http::Client;
use serde_json::{Value, json};
use server::db::Database;
use server::engine::{
    AllowedValuesSnapshot, ConversationContext, Decision, EngineInput, GateThresholds, Preferences,
    Resolutions, understand,
};
use server::eval::set::{Behaviour, Item, LabeledSet};
use server::semantic::SemanticModel;
use server::sql::{Dialect, RenderCheck, Rendered, SummaryUse, render_with_cap, render_with_cap_using};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The date the labeled set is read against (its gold SQL's "today").
const TODAY: &str = "2026-11-01";
/// The budget every answerable question's p95 is checked against.
const BUDGET_MS: f64 = 100.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    Sqlite,
    Postgres,
}

#[derive(Parser, Debug)]
#[command(about = "Clarion's scale benchmark: the eval questions against the release server")]
struct Args {
    /// Which database engine to seed and serve from.
    #[arg(long, value_enum, default_value_t = BackendArg::Sqlite)]
    backend: BackendArg,
    /// Dataset scale (`server seed --scale`): 100 is the demo size (1×), 1000 is 10×.
    #[arg(long, default_value_t = 100)]
    scale: u32,
    /// Use this database (seeded only when empty; never dropped) instead of a fresh one.
    #[arg(long)]
    database: Option<String>,
    /// PostgreSQL admin URL a fresh database is created from.
    #[arg(
        long,
        env = "CLARION_TEST_PG_URL",
        default_value = "postgres://127.0.0.1:5432/test"
    )]
    pg_admin: String,
    /// The release server binary (default: `server` next to this example's directory).
    #[arg(long)]
    server: Option<std::path::PathBuf>,
    /// Measure an already running server at this loopback address (needs --database).
    #[arg(long)]
    addr: Option<String>,
    /// Measured runs of each question (after one warm-up).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Clarification rounds to measure (`ask` items that give a round).
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    /// Only these categories (eval file names: clear, assume, ask, followup, blind1 …).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Keep the fresh database (its URL is printed).
    #[arg(long)]
    keep: bool,
    /// Write one line per item here (category, id, server p50/p95, SQL p50, question, SQL).
    #[arg(long)]
    csv: Option<std::path::PathBuf>,
}

/// One measured item.
struct Measured {
    item: Item,
    category: String,
    server: Vec<f64>,
    sql_alone: Vec<f64>,
    sql: String,
}

fn main() {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot start a runtime: {e}")));
    if let Err(e) = rt.block_on(run(args)) {
        fail(&format!("{e:#}"));
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let model = SemanticModel::wound_care_shared();
    let today = chrono::NaiveDate::parse_from_str(TODAY, "%Y-%m-%d")?;
    let dialect = match args.backend {
        BackendArg::Sqlite => Dialect::Sqlite,
        BackendArg::Postgres => Dialect::Postgres,
    };

    // 1. the database
    let fresh = args.database.is_none();
    let url = match &args.database {
        Some(u) => u.clone(),
        None => fresh_database(&args).await?,
    };
    println!("database: {}", server::db::redact_url(&url));
    let db = Database::connect_and_migrate(&url).await?;
    let counts = server::dataset::clinical_counts(&db).await?;
    if counts.is_empty() {
        let t = Instant::now();
        let report = server::dataset::seed(
            &db,
            &server::dataset::GenConfig::new(args.scale, server::dataset::DEFAULT_SEED),
            server::dataset::OnExisting::Refuse,
        )
        .await?;
        println!(
            "seeded at scale {} in {:.1} s: {}",
            args.scale,
            t.elapsed().as_secs_f64(),
            report.counts
        );
    } else {
        println!("existing data: {counts}");
    }
    if let Database::Postgres(p) = &db {
        let t = Instant::now();
        sqlx::query("VACUUM ANALYZE").execute(p).await?;
        println!("VACUUM ANALYZE in {:.1} s", t.elapsed().as_secs_f64());
    }

    // 2. the server
    let (addr, mut child) = match &args.addr {
        Some(a) => {
            if fresh {
                anyhow::bail!("--addr measures a running server: give the --database it serves from too");
            }
            (a.clone(), None)
        }
        None => {
            let (a, c) = start_server(&args, &url)?;
            (a, Some(c))
        }
    };
    if std::env::var("CLARION_SUMMARIES").as_deref() != Ok("0") {
        wait_for_summaries(&db).await?;
    }
    let result = measure(&args, &addr, &db, model, today, dialect).await;
    if let Some(c) = child.as_mut() {
        let _ = Command::new("kill").arg("-TERM").arg(c.id().to_string()).status();
        let _ = c.wait();
    }
    db.close().await;
    if fresh && !args.keep {
        drop_database(&args, &url).await;
    } else if fresh {
        println!("kept: {}", server::db::redact_url(&url));
    }
    result
}

async fn measure(
    args: &Args,
    addr: &str,
    db: &Database,
    model: &'static SemanticModel,
    today: chrono::NaiveDate,
    dialect: Dialect,
) -> anyhow::Result<()> {
    let mut client = Client::new(addr);
    let r = client.login("demo", "clarion-demo")?;
    if r.status != 303 || client.cookie.is_none() {
        anyhow::bail!("signing in as demo answered {}: {}", r.status, r.body);
    }

    // the engine's inputs, as the server builds them
    let allowed = allowed_values(db, model).await;
    let set = LabeledSet::load(std::path::Path::new(server::eval::set::DEFAULT_DIR), model)?;
    let items: Vec<Item> = set
        .items
        .into_iter()
        .filter(|i| i.behaviour != Behaviour::Refuse)
        .filter(|i| args.only.is_empty() || args.only.iter().any(|c| *c == category(i)))
        .collect();
    println!(
        "{} answerable items, {} run(s) each after a warm-up, today {TODAY}",
        items.len(),
        args.runs
    );

    let mut measured = Vec::new();
    let (mut skipped, mut mismatched, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    let started = Instant::now();
    for item in &items {
        let Some((live, summary)) = read_in_process(model, &allowed, today, dialect, item) else {
            skipped.push(format!("{} {:?}: not answered as read", item.id, item.question));
            continue;
        };
        // the server, end to end
        let mut server_ms = Vec::new();
        let mut server_sql = None;
        for run in 0..=args.runs {
            match ask_once(&mut client, item) {
                Ok((ms, sql)) => {
                    if run > 0 {
                        server_ms.push(ms);
                    }
                    server_sql.get_or_insert(sql);
                }
                Err(e) => {
                    errors.push(format!("{} {:?}: {e}", item.id, item.question));
                    break;
                }
            }
        }
        let Some(server_sql) = server_sql else { continue };
        // the server reads the summaries when they are current: time what it ran
        let rendered = if server_sql == summary.sql { summary } else { live };
        if server_sql != rendered.sql {
            mismatched.push(format!("{} {:?}", item.id, item.question));
        }
        // the statement alone
        let mut alone = Vec::new();
        for run in 0..=args.runs {
            let t = Instant::now();
            execute(db, &rendered).await?;
            if run > 0 {
                alone.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        measured.push(Measured {
            category: category(item),
            item: item.clone(),
            server: server_ms,
            sql_alone: alone,
            sql: rendered.sql,
        });
    }
    println!(
        "measured {} item(s) in {:.1} s",
        measured.len(),
        started.elapsed().as_secs_f64()
    );
    report(&measured);

    // 5. rounds
    rounds(args, &mut client, &items, &measured)?;

    if let Some(path) = &args.csv {
        write_csv(path, &measured)?;
        println!("per-item figures: {}", path.display());
    }
    for s in skipped.iter().take(5) {
        println!("skipped: {s}");
    }
    if skipped.len() > 5 {
        println!("skipped: … {} in all", skipped.len());
    }
    for m in &mismatched {
        eprintln!("SQL differs from the server's: {m}");
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if !errors.is_empty() || !mismatched.is_empty() {
        anyhow::bail!("{} error(s), {} SQL mismatch(es)", errors.len(), mismatched.len());
    }
    Ok(())
}

/// The category of an item: its eval file's name (`clear`, `blind3` …).
fn category(item: &Item) -> String {
    std::path::Path::new(&item.file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| item.file.clone())
}

/// The statement the server runs for `item` asked non-interactively: the same engine
/// input (model, allowed values, date, default settings, no preferences), the same
/// renderer and row cap: (live, with the summaries where they apply). `None` when it
/// is refused or gives no plan.
fn read_in_process(
    model: &SemanticModel,
    allowed: &AllowedValuesSnapshot,
    today: chrono::NaiveDate,
    dialect: Dialect,
    item: &Item,
) -> Option<(Rendered, Rendered)> {
    let check = RenderCheck { model };
    let prefs = Preferences::empty();
    let none = Resolutions::empty();
    let thresholds = GateThresholds::for_sensitivity(app::protocol::Settings::default().sensitivity);
    let read = |question: &str, context: &ConversationContext| {
        let input = EngineInput::new(model, question, today)
            .with_check(&check)
            .with_allowed(allowed)
            .with_context(context)
            .with_preferences(&prefs)
            .with_thresholds(thresholds)
            .with_resolutions(&none);
        understand(&input)
    };
    let context = match &item.previous {
        Some(previous) => {
            let empty = ConversationContext::empty();
            let plan = read(previous, &empty).plan?;
            let streak = server::engine::suggest::streak(model, &plan, &empty);
            ConversationContext::after(plan, streak)
        }
        None => ConversationContext::empty(),
    };
    let u = read(&item.question, &context);
    if matches!(u.decision, Decision::Refuse { .. }) {
        return None;
    }
    let row_cap = server::warehouse::exec::ExecLimits::default().row_cap;
    let plan = u.plan?;
    let live = render_with_cap(&plan, model, dialect, row_cap).ok()?;
    let summary = render_with_cap_using(&plan, model, dialect, row_cap, SummaryUse::CURRENT).ok()?;
    Some((live, summary))
}

/// One request for `item` (its previous question first, unmeasured, in the same
/// thread): the time of the measured request and the SQL it ran.
fn ask_once(client: &mut Client, item: &Item) -> anyhow::Result<(f64, String)> {
    let mut body = json!({"question": item.question, "interactive": false});
    if let Some(previous) = &item.previous {
        let r = client.json(
            "POST",
            "/api/v1/query",
            &json!({"question": previous, "interactive": false}),
        )?;
        if r.status != 200 {
            anyhow::bail!("its previous question answered {}", r.status);
        }
        body["thread_id"] = r.json()["thread_id"].clone();
    }
    let t = Instant::now();
    let r = client.json("POST", "/api/v1/query", &body)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if r.status != 200 {
        anyhow::bail!("answered {}: {}", r.status, r.body);
    }
    let sql = r.json()["sql"].as_str().unwrap_or_default().to_owned();
    Ok((ms, sql))
}

/// Runs a rendered statement on the clinical data and discards its rows.
async fn execute(db: &Database, rendered: &Rendered) -> anyhow::Result<usize> {
    Ok(match db {
        Database::Sqlite(p) => rendered.sqlite_query().fetch_all(p).await?.len(),
        Database::Postgres(p) => rendered.postgres_query().fetch_all(p).await?.len(),
    })
}

async fn allowed_values(db: &Database, model: &SemanticModel) -> AllowedValuesSnapshot {
    use server::warehouse::{AllowedValuesConfig, AllowedValuesProvider, ColumnSpec};
    let Ok(provider) = AllowedValuesProvider::new(
        db.clone(),
        ColumnSpec::from_model(model),
        AllowedValuesConfig::default(),
    ) else {
        return AllowedValuesSnapshot::from_model_static(model);
    };
    provider.refresh_all().await;
    let snap = provider.snapshot_all().await;
    AllowedValuesSnapshot::from_table_columns(
        model,
        snap.iter().map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)),
    )
}

/// The `p`th percentile (nearest rank) of sorted figures.
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p / 100.0) * (sorted.len() - 1) as f64).round() as usize]
}

fn sorted(v: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = v.into_iter().collect();
    v.sort_by(f64::total_cmp);
    v
}

fn report(measured: &[Measured]) {
    let mut by_cat: BTreeMap<&str, Vec<&Measured>> = BTreeMap::new();
    for m in measured {
        by_cat.entry(&m.category).or_default().push(m);
    }
    println!();
    println!(
        "{:<10} {:>5} {:>10} {:>10} {:>10} {:>10} {:>8}",
        "category", "items", "p50 ms", "p95 ms", "SQL p50", "SQL p95", ">100ms"
    );
    let row = |name: &str, ms: &[&Measured]| {
        let server = sorted(ms.iter().flat_map(|m| m.server.iter().copied()));
        let alone = sorted(ms.iter().flat_map(|m| m.sql_alone.iter().copied()));
        let over = ms.iter().filter(|m| item_p95(m) > BUDGET_MS).count();
        println!(
            "{:<10} {:>5} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8}",
            name,
            ms.len(),
            pct(&server, 50.0),
            pct(&server, 95.0),
            pct(&alone, 50.0),
            pct(&alone, 95.0),
            over
        );
    };
    for (cat, ms) in &by_cat {
        row(cat, ms);
    }
    let all: Vec<&Measured> = measured.iter().collect();
    row("all", &all);

    // overhead: what the server adds to the statement alone
    let server_p50: f64 = measured
        .iter()
        .map(|m| pct(&sorted(m.server.clone()), 50.0))
        .sum();
    let sql_p50: f64 = measured
        .iter()
        .map(|m| pct(&sorted(m.sql_alone.clone()), 50.0))
        .sum();
    let added = sorted(
        measured
            .iter()
            .map(|m| pct(&sorted(m.server.clone()), 50.0) - pct(&sorted(m.sql_alone.clone()), 50.0)),
    );
    println!();
    println!(
        "overhead: server p50 {:.0} ms over SQL alone p50 {:.0} ms summed over items = ratio {:.2}; \
         added per request p50 {:.1} ms, p95 {:.1} ms",
        server_p50,
        sql_p50,
        server_p50 / sql_p50.max(1e-9),
        pct(&added, 50.0),
        pct(&added, 95.0)
    );
    let over: Vec<&Measured> = measured.iter().filter(|m| item_p95(m) > BUDGET_MS).collect();
    println!(
        "budget: {} of {} item(s) have a p95 over {BUDGET_MS} ms",
        over.len(),
        measured.len()
    );

    let mut slowest: Vec<&Measured> = measured.iter().collect();
    slowest.sort_by(|a, b| item_p95(b).total_cmp(&item_p95(a)));
    println!();
    println!("10 slowest (server p95; SQL alone p50):");
    for m in slowest.iter().take(10) {
        println!(
            "  {:>7.1} ms  SQL {:>7.1} ms  [{} {}] {}",
            item_p95(m),
            pct(&sorted(m.sql_alone.clone()), 50.0),
            m.category,
            m.item.id,
            m.item.question
        );
        println!("             {}", m.sql);
    }
}

fn item_p95(m: &Measured) -> f64 {
    pct(&sorted(m.server.clone()), 95.0)
}

/// Rounds: the first time, the same round again (counts cached), its answer; compared
/// with the same question answered at once.
fn rounds(args: &Args, client: &mut Client, items: &[Item], measured: &[Measured]) -> anyhow::Result<()> {
    if args.rounds == 0 {
        return Ok(());
    }
    let plain: BTreeMap<u32, f64> = measured
        .iter()
        .map(|m| (m.item.id, pct(&sorted(m.server.clone()), 50.0)))
        .collect();
    let (mut first, mut again, mut answer, mut ratio) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for item in items
        .iter()
        .filter(|i| i.behaviour == Behaviour::Ask && i.previous.is_none())
    {
        if first.len() >= args.rounds {
            break;
        }
        let ask = json!({"question": item.question});
        let t = Instant::now();
        let r = client.json("POST", "/api/v1/query", &ask)?;
        let first_ms = t.elapsed().as_secs_f64() * 1e3;
        if r.status != 202 {
            continue;
        }
        let mut repeats = Vec::new();
        let mut last = r;
        for _ in 0..args.runs.max(1) {
            let t = Instant::now();
            let r = client.json("POST", "/api/v1/query", &ask)?;
            repeats.push(t.elapsed().as_secs_f64() * 1e3);
            if r.status != 202 {
                anyhow::bail!("round {:?} repeated answered {}", item.question, r.status);
            }
            last = r;
        }
        let t = Instant::now();
        let a = client.json(
            "POST",
            "/api/v1/query/clarify",
            &json!({"clarification_id": last.json()["clarification_id"], "answers": defaults(&last.json())}),
        )?;
        let answer_ms = t.elapsed().as_secs_f64() * 1e3;
        if !matches!(a.status, 200 | 202) {
            anyhow::bail!("answering the round of {:?}: {}", item.question, a.status);
        }
        let repeat = pct(&sorted(repeats.clone()), 50.0);
        if let Some(p) = plain.get(&item.id) {
            ratio.push(repeat / p.max(1e-9));
        }
        first.push(first_ms);
        again.extend(repeats);
        answer.push(answer_ms);
    }
    let (first, again, answer, ratio) = (sorted(first), sorted(again), sorted(answer), sorted(ratio));
    println!();
    println!(
        "rounds: {} question(s); first round p50 {:.1} ms p95 {:.1} ms; the same round again p50 {:.1} ms p95 {:.1} ms; \
         its answer p50 {:.1} ms p95 {:.1} ms; round again / plain answer p50 {:.2} max {:.2}",
        first.len(),
        pct(&first, 50.0),
        pct(&first, 95.0),
        pct(&again, 50.0),
        pct(&again, 95.0),
        pct(&answer, 50.0),
        pct(&answer, 95.0),
        pct(&ratio, 50.0),
        ratio.last().copied().unwrap_or(f64::NAN)
    );
    Ok(())
}

/// Every question of a round answered with its preselected option (or "don't know").
fn defaults(round: &Value) -> Vec<Value> {
    round["questions"]
        .as_array()
        .map(|qs| {
            qs.iter()
                .map(|q| {
                    let default = q["options"]
                        .as_array()
                        .and_then(|o| o.iter().find(|o| o["default"] == true).or(o.first()))
                        .map(|o| o["id"].clone());
                    match default {
                        Some(id) => json!({"question_id": q["id"], "option_id": id}),
                        None => json!({"question_id": q["id"], "dont_know": true}),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

fn write_csv(path: &std::path::Path, measured: &[Measured]) -> anyhow::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        f,
        "category,id,server_p50_ms,server_p95_ms,sql_p50_ms,question,sql"
    )?;
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for m in measured {
        let server = sorted(m.server.clone());
        writeln!(
            f,
            "{},{},{:.2},{:.2},{:.2},{},{}",
            m.category,
            m.item.id,
            pct(&server, 50.0),
            pct(&server, 95.0),
            pct(&sorted(m.sql_alone.clone()), 50.0),
            quote(&m.item.question),
            quote(&m.sql)
        )?;
    }
    Ok(())
}

/// Waits until the server has built its summaries of the data (it starts at once).
async fn wait_for_summaries(db: &Database) -> anyhow::Result<()> {
    let sql = "SELECT COALESCE((SELECT max_id FROM summary_state WHERE name = 'wound_assessment_ends'), -1) \
               = (SELECT COALESCE(MAX(id), 0) FROM assessments)";
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(600) {
        let built = match db {
            Database::Sqlite(p) => sqlx::query_scalar::<_, bool>(sql).fetch_one(p).await?,
            Database::Postgres(p) => sqlx::query_scalar::<_, bool>(sql).fetch_one(p).await?,
        };
        if built {
            println!(
                "summaries built ({:.1} s after the start)",
                t.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    anyhow::bail!("the server did not build its summaries within 10 minutes")
}

/// A fresh database for this run: a temporary SQLite file or a new PostgreSQL database.
async fn fresh_database(args: &Args) -> anyhow::Result<String> {
    let tag = format!("{}_{}", args.scale, std::process::id());
    match args.backend {
        BackendArg::Sqlite => {
            let path = std::env::temp_dir().join(format!("clarion-scale-{tag}.db"));
            Ok(format!("sqlite://{}", path.display()))
        }
        BackendArg::Postgres => {
            let admin = sqlx::PgPool::connect(&args.pg_admin).await?;
            let name = format!("clarion_scale_{tag}");
            // a name we made from two numbers, never input
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&admin)
                .await?;
            admin.close().await;
            Ok(with_database_name(&args.pg_admin, &name))
        }
    }
}

async fn drop_database(args: &Args, url: &str) {
    match args.backend {
        BackendArg::Sqlite => {
            let path = url.trim_start_matches("sqlite://");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
        BackendArg::Postgres => {
            let Some(name) = url
                .rsplit('/')
                .next()
                .map(|s| s.split('?').next().unwrap_or(s).to_owned())
            else {
                return;
            };
            if let Ok(admin) = sqlx::PgPool::connect(&args.pg_admin).await {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&admin)
                    .await;
                admin.close().await;
            }
        }
    }
}

/// `postgres://h:5432/test?x=y` with the database name replaced.
fn with_database_name(admin: &str, name: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (admin, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let root = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{root}/{name}?{q}"),
        None => format!("{root}/{name}"),
    }
}

/// Starts the release server on a free loopback port and waits for `/healthz`.
fn start_server(args: &Args, url: &str) -> anyhow::Result<(String, Child)> {
    let bin = match &args.server {
        Some(p) => p.clone(),
        None => {
            let me = std::env::current_exe()?;
            // target/<profile>/examples/scale → target/<profile>/server
            me.parent()
                .and_then(|d| d.parent())
                .map(|d| d.join("server"))
                .ok_or_else(|| anyhow::anyhow!("cannot find the server binary; pass --server"))?
        }
    };
    if !bin.exists() {
        anyhow::bail!(
            "{} does not exist: build it with `cargo build -p server --profile server-release --bin server`, or pass --server",
            bin.display()
        );
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let addr = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(std::env::temp_dir().join(format!("clarion-scale-{port}.log")))?;
    let child = Command::new(&bin)
        .arg("serve")
        .env("DATABASE_URL", url)
        .env("CLARION_ADDR", &addr)
        .env("CLARION_DEMO", "1")
        .env("CLARION_TODAY", TODAY)
        .env("CLARION_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut c = Client::new(&addr);
    c.timeout = Duration::from_secs(5);
    while Instant::now() < deadline {
        if c.get("/healthz").is_ok_and(|r| r.status == 200) {
            println!("server: {} on {addr}", bin.display());
            return Ok((addr, child));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    anyhow::bail!("the server did not answer /healthz on {addr} within 120 s")
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

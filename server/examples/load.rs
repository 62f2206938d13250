//! A small load tool for Clarion's JSON API over loopback: signs in (the `/login` form
//! or `--token`), sends `--requests` questions over `--concurrency` keep-alive
//! connections, checks every status, and prints the latency percentiles.
//!
//! ```sh
//! cargo run -p server --profile server-release --example load -- \
//!   --addr 127.0.0.1:3000 --question "show me serious wounds" --expect 202 \
//!   --concurrency 4 --requests 400
//! ```
//!
//! With `--answer`, every 202 is also answered (each question's preselected option)
//! and the `clarify` latency is reported separately. Requests go only to `--addr`,
//! which must be a loopback address; the run is bounded by `--requests` and `--max-secs`.

#[path = "../tests/common/http.rs"]
mod http;

use clap::Parser;
use http::Client;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Parser, Debug, Clone)]
#[command(about = "Measure Clarion's /api/v1/query latency over loopback")]
struct Args {
    /// Server address (loopback only).
    #[arg(long, default_value = "127.0.0.1:3000")]
    addr: String,
    /// The question sent with every request.
    #[arg(long, default_value = "how many open wounds by clinic")]
    question: String,
    /// The status every request must get (200 answer, 202 clarification round).
    #[arg(long, default_value_t = 200)]
    expect: u16,
    /// Parallel connections.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Measured requests in all.
    #[arg(long, default_value_t = 200)]
    requests: usize,
    /// Unmeasured requests first (per connection).
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Answer every round with its preselected options and measure `clarify` too.
    #[arg(long)]
    answer: bool,
    /// Sign-in name (ignored with --token).
    #[arg(long, default_value = "demo")]
    username: String,
    /// Sign-in password (ignored with --token).
    #[arg(long, default_value = "clarion-demo")]
    password: String,
    /// An API token instead of signing in.
    #[arg(long)]
    token: Option<String>,
    /// A file of API tokens, one a line, handed to the connections in turn (one user
    /// may run only `CLARION_USER_CONCURRENT_QUERIES` questions at once, at most 100:
    /// more concurrent clients need more users).
    #[arg(long)]
    tokens: Option<std::path::PathBuf>,
    /// Stop after this many seconds even if requests remain.
    #[arg(long, default_value_t = 300)]
    max_secs: u64,
}

#[derive(Default)]
struct Samples {
    ask: Vec<Duration>,
    clarify: Vec<Duration>,
    errors: Vec<String>,
}

fn main() {
    let args = Args::parse();
    let ip: std::net::SocketAddr = args.addr.parse().unwrap_or_else(|e| {
        eprintln!("error: --addr {:?} is not ip:port ({e})", args.addr);
        std::process::exit(2)
    });
    if !ip.ip().is_loopback() {
        eprintln!("error: --addr must be a loopback address (this tool only loads a local server)");
        std::process::exit(2);
    }
    // One sign-in, shared by every connection (sessions live in the database), or the
    // tokens of --tokens in turn.
    let tokens: Vec<String> = match &args.tokens {
        Some(path) => std::fs::read_to_string(path)
            .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display())))
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    };
    if args.tokens.is_some() && tokens.is_empty() {
        fail("--tokens: the file holds no token");
    }
    let mut first = Client::new(&args.addr);
    match (&args.token, tokens.first()) {
        (_, Some(t)) | (Some(t), None) => first.bearer = Some(t.clone()),
        (None, None) => match first.login(&args.username, &args.password) {
            Ok(r) if r.status == 303 && first.cookie.is_some() => {}
            Ok(r) => fail(&format!("sign-in answered {}: {}", r.status, r.body)),
            Err(e) => fail(&format!("cannot reach {}: {e}", args.addr)),
        },
    }
    let (cookie, bearer) = (first.cookie.clone(), first.bearer.clone());
    let tokens = Arc::new(tokens);

    let samples = Arc::new(Mutex::new(Samples::default()));
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.max_secs);
    let started = Instant::now();
    let workers: Vec<_> = (0..args.concurrency.max(1))
        .map(|w| {
            let (args, samples, next) = (args.clone(), samples.clone(), next.clone());
            let (cookie, bearer, tokens) = (cookie.clone(), bearer.clone(), tokens.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&args.addr);
                c.cookie = cookie;
                c.bearer = if tokens.is_empty() {
                    bearer
                } else {
                    Some(tokens[w % tokens.len()].clone())
                };
                for _ in 0..args.warmup {
                    let _ = one(&mut c, &args);
                }
                while next.fetch_add(1, Ordering::SeqCst) < args.requests && Instant::now() < deadline {
                    let r = one(&mut c, &args);
                    let mut s = samples.lock().expect("samples");
                    match r {
                        Ok((ask, clarify)) => {
                            s.ask.push(ask);
                            s.clarify.extend(clarify);
                        }
                        Err(e) => s.errors.push(e),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let wall = started.elapsed();
    let s = samples.lock().expect("samples");
    println!(
        "{} request(s) of {:?} (expect {}), concurrency {}, {:.1} s, {:.1} req/s, {} error(s)",
        s.ask.len(),
        args.question,
        args.expect,
        args.concurrency,
        wall.as_secs_f64(),
        s.ask.len() as f64 / wall.as_secs_f64(),
        s.errors.len()
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average after the run: {}", load.trim());
    }
    report("query  ", &s.ask);
    if args.answer {
        report("clarify", &s.clarify);
    }
    for e in s.errors.iter().take(5) {
        eprintln!("error: {e}");
    }
    if !s.errors.is_empty() || s.ask.is_empty() {
        std::process::exit(1);
    }
}

/// One measured question (and its clarification when `--answer`).
fn one(c: &mut Client, args: &Args) -> Result<(Duration, Option<Duration>), String> {
    let t = Instant::now();
    let r = c
        .json("POST", "/api/v1/query", &json!({"question": args.question}))
        .map_err(|e| e.to_string())?;
    let ask = t.elapsed();
    if r.status != args.expect {
        return Err(format!("expected {}, got {}: {}", args.expect, r.status, r.body));
    }
    if !(args.answer && r.status == 202) {
        return Ok((ask, None));
    }
    let round = r.json();
    let answers: Vec<Value> = round["questions"]
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
        .unwrap_or_default();
    let t = Instant::now();
    let a = c
        .json(
            "POST",
            "/api/v1/query/clarify",
            &json!({"clarification_id": round["clarification_id"], "answers": answers}),
        )
        .map_err(|e| e.to_string())?;
    let clarify = t.elapsed();
    if !matches!(a.status, 200 | 202) {
        return Err(format!("clarify got {}: {}", a.status, a.body));
    }
    Ok((ask, Some(clarify)))
}

fn report(name: &str, samples: &[Duration]) {
    if samples.is_empty() {
        println!("{name}  no samples");
        return;
    }
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((p / 100.0) * (ms.len() - 1) as f64).round() as usize];
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    println!(
        "{name}  n={}  min {:.1} ms  p50 {:.1} ms  p95 {:.1} ms  p99 {:.1} ms  max {:.1} ms  mean {:.1} ms",
        ms.len(),
        ms[0],
        pct(50.0),
        pct(95.0),
        pct(99.0),
        ms[ms.len() - 1],
        mean
    );
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

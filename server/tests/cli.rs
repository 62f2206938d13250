//! The real binary: startup errors are one clear line, and SIGTERM shuts down cleanly.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn server() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_server"));
    c.env_remove("DATABASE_URL").env("CLARION_LOG", "warn");
    c
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn assert_one_line_error(out: &std::process::Output, needle: &str) {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr, got: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert!(lines[0].contains(needle), "expected {needle:?} in {err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
}

#[test]
fn an_unsupported_database_url_is_one_clear_line() {
    let out = server()
        .env("DATABASE_URL", "mysql://root:hunter2@localhost/x")
        .output()
        .unwrap();
    assert_one_line_error(&out, "DATABASE_URL");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("hunter2"),
        "password is redacted"
    );
}

#[test]
fn an_unreachable_database_is_one_clear_line() {
    let port = free_port();
    let out = server()
        .env(
            "DATABASE_URL",
            format!("postgres://nobody:s3cret@127.0.0.1:{port}/nothing"),
        )
        .output()
        .unwrap();
    assert_one_line_error(&out, "cannot open the database");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("s3cret"),
        "password is redacted"
    );
}

#[test]
fn a_port_in_use_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let out = server()
        .env("CLARION_DATA_DIR", dir.path())
        .env("CLARION_ADDR", addr.to_string())
        .output()
        .unwrap();
    assert_one_line_error(&out, "cannot listen on");
}

#[test]
fn a_bad_bind_address_names_the_variable() {
    let out = server().env("CLARION_ADDR", "not-an-address").output().unwrap();
    assert_one_line_error(&out, "CLARION_ADDR");
}

fn http_get(addr: &str, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    Some(buf)
}

#[test]
fn first_start_creates_the_database_prints_the_demo_login_and_sigterm_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut child = server()
        .env("CLARION_DATA_DIR", dir.path().join("nested"))
        .env("CLARION_ADDR", &addr)
        .env("CLARION_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // generous: the first start seeds the demo data, and a debug build on a busy two-core
    // machine has taken over 30 s
    let deadline = Instant::now() + Duration::from_secs(120);
    let health = loop {
        if let Some(r) = http_get(&addr, "/healthz") {
            break r;
        }
        assert!(Instant::now() < deadline, "server did not come up");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        health.starts_with("HTTP/1.0 200") || health.starts_with("HTTP/1.1 200"),
        "{health}"
    );
    assert!(
        dir.path().join("nested/clarion.db").exists(),
        "SQLite file created under the data dir"
    );

    // SAFETY-free: signal through the kill command rather than libc.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(15);
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "clean exit code after SIGTERM: {exit:?}");

    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(
        stdout.contains("demo   / clarion-demo"),
        "demo login printed: {stdout}"
    );
    assert!(stdout.contains(&format!("http://{addr}")), "{stdout}");
    let logs = format!("{stdout}{stderr}");
    assert!(logs.contains("shut down cleanly"), "{logs}");
}

//! The README's JSON API walkthrough works as written: every `sh` block of its
//! "### Walkthrough" subsection runs, in order, as one `bash -euo pipefail` script
//! against a real `server` process (the embedded default with its demo accounts, in a
//! scratch directory laid out like the repository root: `target/clarion-server` and
//! `data/`), with `127.0.0.1:3000` replaced by a free port. Each `HTTP nnn` line the
//! commands print must match the `# → HTTP nnn` comment written under it.

#[path = "common/http.rs"]
mod http;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_server");
const README_ADDR: &str = "127.0.0.1:3000";

/// The `sh` blocks of the README's "### Walkthrough" subsection, in order.
fn walkthrough_blocks(readme: &str) -> Vec<String> {
    let mut in_section = false;
    let mut in_block = false;
    let mut blocks = Vec::new();
    let mut current = String::new();
    for line in readme.lines() {
        if !in_block && line.starts_with('#') && !line.starts_with("#!") {
            in_section = line.trim() == "### Walkthrough";
            continue;
        }
        if !in_section {
            continue;
        }
        if in_block {
            if line.trim_start().starts_with("```") {
                blocks.push(std::mem::take(&mut current));
                in_block = false;
            } else {
                current.push_str(line);
                current.push('\n');
            }
        } else if line.trim() == "```sh" {
            in_block = true;
        }
    }
    assert!(!in_block, "an unclosed code block in the walkthrough");
    blocks
}

/// The statuses the README promises: every `# → HTTP nnn` comment, in order.
fn expected_statuses(script: &str) -> Vec<String> {
    script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# → HTTP "))
        .map(|s| s.trim().to_owned())
        .collect()
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_extraction_finds_blocks_and_statuses() {
    let sample = "## JSON API\n```sh\nnot this\n```\n### Walkthrough\ntext\n```sh\na\n# → HTTP 200\n```\n```json\n{}\n```\n```sh\nb\n```\n### Latency\n```sh\nnot this either\n```\n";
    let blocks = walkthrough_blocks(sample);
    assert_eq!(blocks, ["a\n# → HTTP 200\n", "b\n"]);
    assert_eq!(expected_statuses(&blocks.concat()), ["200"]);
}

#[test]
fn the_readme_json_api_walkthrough_runs_as_written_against_a_real_server() {
    for tool in ["bash", "curl", "jq"] {
        assert!(has(tool), "the README walkthrough needs {tool} on PATH");
    }
    let readme_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(readme_path).expect("README.md");
    let blocks = walkthrough_blocks(&readme);
    assert!(blocks.len() >= 5, "the walkthrough has its sh blocks: {blocks:?}");
    let written = blocks.join("\n");
    let expected = expected_statuses(&written);
    for status in ["303", "200", "202", "409", "400", "401"] {
        assert!(
            expected.iter().any(|s| s == status),
            "the walkthrough shows an HTTP {status}: {expected:?}"
        );
    }
    for needle in [
        "/login",
        "/api/v1/query",
        "/api/v1/query/clarify",
        "/api/v1/threads/",
        "/api/v1/history",
        "/api/v1/settings",
        "/api/v1/preferences",
        "token create",
    ] {
        assert!(written.contains(needle), "the walkthrough uses {needle}");
    }

    // A scratch "repository root": target/clarion-server and the embedded data/ directory,
    // seeded small (the demo scale only changes the numbers).
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("target")).unwrap();
    std::fs::create_dir_all(root.path().join("data")).unwrap();
    std::os::unix::fs::symlink(BIN, root.path().join("target/clarion-server")).unwrap();
    let db_url = format!("sqlite://{}", root.path().join("data/clarion.db").display());
    let seeded = Command::new(BIN)
        .args(["seed", "--scale", "1", "--database", &db_url])
        .current_dir(root.path())
        .env_remove("DATABASE_URL")
        .env("CLARION_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        seeded.status.success(),
        "{}",
        String::from_utf8_lossy(&seeded.stderr)
    );

    let addr = format!("127.0.0.1:{}", http::free_port());
    let log = tempfile::NamedTempFile::new().unwrap();
    let append = || std::fs::OpenOptions::new().append(true).open(log.path()).unwrap();
    let mut server = Command::new(BIN)
        .arg("serve")
        .current_dir(root.path())
        .env_remove("DATABASE_URL")
        .env_remove("CLARION_DATA_DIR")
        .env("CLARION_ADDR", &addr)
        .env("CLARION_LOG", "warn")
        .env("CLARION_TODAY", "2026-11-01")
        .stdout(append())
        .stderr(append())
        .spawn()
        .unwrap();
    http::wait_healthy(&addr, Duration::from_secs(60));

    let script = format!("set -euo pipefail\n{}", written.replace(README_ADDR, &addr));
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(root.path())
        .env_remove("DATABASE_URL")
        .env_remove("CLARION_DATA_DIR")
        .env("CLARION_LOG", "warn")
        .output()
        .unwrap();
    let _ = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = server.kill();
    let _ = server.wait();

    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let transcript = format!(
        "--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server log\n{}",
        std::fs::read_to_string(log.path()).unwrap_or_default()
    );
    assert!(
        out.status.success(),
        "the walkthrough failed ({:?}):\n{transcript}",
        out.status
    );
    let got: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("HTTP "))
        .map(|s| s.trim().to_owned())
        .collect();
    assert_eq!(got, expected, "statuses printed vs. promised:\n{transcript}");
    // what the jq lines print
    assert!(stdout.contains("\"needs_clarification\""), "{transcript}");
    assert!(stdout.contains("term:serious@wounds"), "{transcript}");
    assert!(stdout.contains("\"code\":\"conflict\""), "{transcript}");
    assert!(stdout.contains("\"code\":\"empty_question\""), "{transcript}");
}

//! The server's modules form one-way layers: no module reaches (through
//! `crate::…` paths) into a module that reaches back into it. A cycle makes every
//! part depend on every other; this test names the first one it finds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`engine/read/time.rs` → `engine`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// The modules a file's code (tests left out) names as `crate::<module>`.
fn uses(text: &str) -> BTreeSet<String> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or(text)
        .lines()
        // comments (and doc links) are not dependencies
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let code = code.as_str();
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
        // `use crate::{a, b::c}` names several.
        if rest.starts_with('{') {
            let group = &rest[1..rest.find('}').unwrap_or(rest.len())];
            for item in group.split(',') {
                let n: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !n.is_empty() {
                    found.insert(n);
                }
            }
        }
    }
    found
}

#[test]
fn the_server_modules_depend_on_each_other_one_way_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let module = module_of(&src, f);
        // the crate root, and test modules kept in files of their own
        if module == "lib" || module == "main" || f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let deps = graph.entry(module.clone()).or_default();
        for d in uses(&text) {
            if d != module {
                deps.insert(d);
            }
        }
    }
    // Depth-first search for a cycle, reporting its path.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if graph.contains_key(next)
                && let Some(c) = visit(next, graph, stack, done)
            {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, &graph, &mut Vec::new(), &mut done) {
            panic!(
                "the server's modules import each other in a circle: {}",
                cycle.join(" → ")
            );
        }
    }
    // The test reads what it should: the top layers see the lower ones.
    assert!(graph["orchestrator"].contains("engine") && graph["http"].contains("auth"));
}

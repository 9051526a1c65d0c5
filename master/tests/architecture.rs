//! The master's import rules (`docs/architecture.md`, "The master"),
//! checked on its sources: every `crate::` and `super::` path in
//! `master/src/**/*.rs` (unit tests aside: they may build a whole
//! `MasterState`) is resolved to the module it names, and a module may
//! name only itself and what [`MAY_IMPORT`] lists for it. A failure names
//! the file and line of each import that goes the wrong way.
//!
//! The table is the doc's rules written out: the edge (`grpc`, `http`)
//! over the coordinator (`core`) over the owners, `jobs` over `blocks`
//! over `cluster`, and the leaves every layer may use. A module added to
//! the master fails here until it has a row, which is where its place in
//! the layers is decided.

mod scan;

use scan::{code_lines, sources};
use std::path::Path;

/// Each module of the master and the module paths it may import: a path
/// allows itself and everything under it.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    // The crate root wires everything together.
    ("lib", &["*"]),
    // The edge: each protocol's handlers over the coordinator, naming the
    // owners' types they convert; neither edge imports the other.
    (
        "grpc",
        &["core", "blocks", "cluster", "jobs", "error", "lockmark"],
    ),
    (
        "http",
        &[
            "core", "blocks", "cluster", "jobs", "error", "stats", "lockmark",
        ],
    ),
    // The coordinator: turns each event into calls on the owners.
    (
        "core",
        &["blocks", "cluster", "jobs", "error", "stats", "lockmark"],
    ),
    // The owners, one way: jobs reads the namespace, both read membership.
    ("jobs", &["blocks", "cluster", "error", "lockmark"]),
    ("blocks", &["cluster", "error"]),
    // Membership: the commands and heartbeats it carries are the
    // `protocol` crate's, so it names no owner.
    ("cluster", &["error"]),
    // Leaves.
    ("error", &["blocks::editlog"]),
    ("stats", &[]),
    ("lockmark", &[]),
];

/// Items of the crate root that any module may call.
const ROOT_ITEMS: &[(&str, &str)] = &[("now", "the master's clock (simulated under turmoil)")];

/// One import: where it is and the module path it names.
struct Import {
    file: String,
    line: usize,
    path: Vec<String>,
}

/// The module path of a source file: `jobs/job.rs` is `jobs::job`,
/// `jobs/mod.rs` is `jobs`, `lib.rs` the root.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") || rel == "lib" {
        parts.pop();
    }
    parts
}

fn ident_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len())
}

/// The module paths a `use` tree or path names, from just after its
/// `crate::` or `super::`: `a::b::C` is `[a, b, C]`, `{a, b::c}` is
/// `[a]` and `[b, c]`.
fn paths_in(s: &str) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(rest) = s.strip_prefix('{') {
        let mut depth = 1;
        let mut items = vec![String::new()];
        for c in rest.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 1 => {
                    items.push(String::new());
                    continue;
                }
                _ => {}
            }
            if depth == 0 {
                break;
            }
            items.last_mut().unwrap().push(c);
        }
        return items
            .iter()
            .filter(|i| !i.trim().is_empty())
            .flat_map(|i| paths_in(i))
            .collect();
    }
    let mut path = Vec::new();
    let mut rest = s;
    loop {
        let n = ident_len(rest);
        if n == 0 {
            if rest.starts_with('{') {
                // `a::{b, c}`: every branch shares the prefix.
                return paths_in(rest)
                    .into_iter()
                    .map(|p| path.iter().cloned().chain(p).collect())
                    .collect();
            }
            break;
        }
        path.push(rest[..n].to_string());
        rest = &rest[n..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    vec![path]
}

/// Every `crate::` and `super::` path of a file, resolved from the crate
/// root.
fn imports(rel: &str, text: &str) -> Vec<Import> {
    let module = module_of(rel);
    let lines = code_lines(text);
    let joined = lines.join("\n");
    let line_at = |pos: usize| joined[..pos].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (key, from_root) in [("crate::", true), ("super::", false)] {
        let mut at = 0;
        while let Some(found) = joined[at..].find(key) {
            let pos = at + found;
            at = pos + key.len();
            // Not the tail of a longer name (`my_crate::`) or a path
            // already counted (`super::super::`).
            let before = joined[..pos].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base = if from_root { vec![] } else { module.clone() };
            let mut rest = &joined[at..];
            if !from_root {
                base.pop();
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            for p in paths_in(rest) {
                let path: Vec<String> = base.iter().cloned().chain(p).collect();
                out.push(Import {
                    file: rel.to_string(),
                    line: line_at(pos),
                    path,
                });
            }
        }
    }
    out
}

/// Why `import` breaks the rules, if it does.
fn violation(import: &Import) -> Option<String> {
    let from = module_of(&import.file);
    let from_top = from.first().map_or("lib", String::as_str);
    let target_top = import.path.first()?;
    if target_top == from_top || target_top == "self" {
        return None;
    }
    let Some((_, allowed)) = MAY_IMPORT.iter().find(|(m, _)| *m == from_top) else {
        return Some(format!("module `{from_top}` has no row in MAY_IMPORT"));
    };
    if !MAY_IMPORT.iter().any(|(m, _)| m == target_top) {
        if ROOT_ITEMS.iter().any(|(i, _)| i == target_top) {
            return None;
        }
        return Some(format!(
            "`crate::{target_top}` is neither a module in MAY_IMPORT nor a ROOT_ITEMS item"
        ));
    }
    let named = import.path.join("::");
    let ok = allowed
        .iter()
        .any(|a| *a == "*" || named == *a || named.starts_with(&format!("{a}::")));
    (!ok).then(|| format!("`{from_top}` may not import `{named}` (allowed: {allowed:?})"))
}

#[test]
fn imports_follow_the_layers_of_the_architecture_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    assert!(files.len() > 30, "scanned {} files only", files.len());
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        if rel.ends_with("_tests.rs") || rel == "main.rs" {
            continue;
        }
        for i in imports(&rel, &std::fs::read_to_string(f).unwrap()) {
            seen += 1;
            if let Some(why) = violation(&i) {
                bad.push(format!("master/src/{}:{}: {why}", i.file, i.line));
            }
        }
    }
    assert!(
        seen > 100,
        "found {seen} imports only: is the parser broken?"
    );
    assert!(
        bad.is_empty(),
        "imports against docs/architecture.md's layers (move the shared item \
         down, or change the doc and MAY_IMPORT together):\n{}",
        bad.join("\n")
    );
}

/// The parser finds what the check relies on, so a silent miss cannot
/// pass the rule above.
#[test]
fn the_parser_resolves_use_trees_and_super() {
    let text = "use crate::{blocks::namespace::Edit, cluster::{Command, Outbox}};\n\
                // use crate::http::x;\n\
                fn f() { crate::core::lock::lock(s, \"x\"); }\n\
                use super::report::Ended;\n\
                use super::super::grpc::Shared;\n";
    let got: Vec<(usize, String)> = imports("jobs/job.rs", text)
        .into_iter()
        .map(|i| (i.line, i.path.join("::")))
        .collect();
    let want = [
        (1, "blocks::namespace::Edit"),
        (1, "cluster::Command"),
        (1, "cluster::Outbox"),
        (3, "core::lock::lock"),
        (4, "jobs::report::Ended"),
        (5, "grpc::Shared"),
    ];
    let want: Vec<(usize, String)> = want.iter().map(|(l, p)| (*l, p.to_string())).collect();
    assert_eq!(got, want);
    let bad: Vec<String> = imports("jobs/job.rs", text)
        .iter()
        .filter_map(violation)
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    let tests = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::core::MasterState;\n}\n";
    assert_eq!(
        imports("jobs/job.rs", tests).len(),
        1,
        "unit tests are exempt"
    );
}

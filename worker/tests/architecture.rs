//! The worker's import rules (`docs/architecture.md`, "The worker"),
//! checked on its sources, unit tests aside.
//!
//! Protobuf and tonic stay at the worker's edge: outside `worker/src/edge/`
//! the code works on the worker's own and the `protocol` crate's types, so
//! no `proto::` or `tonic::` path may appear there. And each group
//! (`control`, `edge`, `store`, `task`, `mem`, `node`) imports only what
//! [`MAY_IMPORT`] lists for it: every `crate::` and `super::` path is
//! resolved to the module it names. A failure names the file and line.

use std::path::{Path, PathBuf};

/// What only the edge may name.
const EDGE_ONLY: &[&str] = &["proto::", "tonic::"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("worker/src is readable") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The places in `text` (a file of `worker/src`) that name an edge-only
/// path, as `line: text`; a file's unit tests (from an inline
/// `mod tests {` on) are left out.
fn offences(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("mod tests {") {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        if EDGE_ONLY.iter().any(|p| code.contains(p)) {
            found.push(format!("{}: {}", i + 1, line.trim()));
        }
    }
    found
}

#[test]
fn protobuf_and_tonic_only_at_the_edge() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 30, "worker/src was not found whole");
    let edge = root.join("edge");
    let mut bad = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&edge)) {
        let text = std::fs::read_to_string(f).expect("a source file");
        for o in offences(&text) {
            bad.push(format!("{}:{o}", f.strip_prefix(&root).unwrap().display()));
        }
    }
    assert!(
        bad.is_empty(),
        "protobuf or tonic outside worker/src/edge/ (map them at the edge):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_sees_a_path_and_skips_comments_and_tests() {
    let text = "use crate::x;\nfn f() -> tonic::Status { todo!() }\n// proto::Old in a comment\n#[cfg(test)]\nmod tests {\n    use proto::Y;\n}\n";
    assert_eq!(
        offences(text),
        vec!["2: fn f() -> tonic::Status { todo!() }"]
    );
}

// ------------------------------------------------------------ the groups' imports

/// Each group of `worker/src` and the module paths it may import (a path
/// allows itself and everything under it); `docs/architecture.md`, "The
/// worker", says why. A module added at the top fails here until it has a
/// row, which is where its place is decided.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    // The crate root wires the owners and their loops together.
    ("lib", &["*"]),
    // The node holds the owners: each group's handle, nothing else.
    (
        "node",
        &[
            "store::blocks",
            "store::cache",
            "store::disk",
            "store::pipeline::Target",
            "task::runner",
            "edge::master_client",
        ],
    ),
    // The steps that span the owners: registration and heartbeats, the
    // master's commands, the drain. They reach the master and the peers
    // through the edge's clients.
    (
        "control",
        &[
            "node",
            "store",
            "task",
            "edge::master_client",
            "edge::peers",
        ],
    ),
    // The edge: handlers over the owners and the clients of the master
    // and the peers; nothing of `control`, which drives it.
    ("edge", &["node", "store", "task"]),
    // The blocks: a corrupt replica is reported and a pipeline write
    // forwarded through the edge's clients, and nothing else of the edge
    // (the pipeline's failures are its own type, mapped to a status at
    // the edge). Not the node: the block side takes its own owner and the
    // link.
    ("store", &["edge::master_client", "edge::peers"]),
    // The attempts: they read blocks, write parts into the block store in
    // process (`edge::service::Local`), fetch from peers and report to
    // the master through the edge's clients. Not the node: the task
    // runner holds the handles of the owners an attempt uses.
    (
        "task",
        &[
            "store",
            "mem",
            "edge::master_client",
            "edge::peers",
            "edge::shuffle::locate",
            "edge::service::Local",
        ],
    ),
    // Leaves.
    ("mem", &[]),
];

/// One import: where it is and the module path it names.
struct Import {
    file: String,
    line: usize,
    path: Vec<String>,
}

/// The file's lines up to its inline unit tests (`#[cfg(test)]` before a
/// `mod name {`), with comment lines blanked so line numbers hold.
fn code_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("#[cfg(test)]") {
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.trim_start())
                .find(|l| !l.starts_with("#["));
            if next.is_some_and(|n| n.starts_with("mod ") && n.ends_with('{')) {
                break;
            }
        }
        out.push(if t.starts_with("//") {
            String::new()
        } else {
            l.to_string()
        });
    }
    out
}

/// The module path of a source file: `task/map.rs` is `task::map`,
/// `task/mod.rs` is `task`, `lib.rs` the root.
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
    let joined = code_lines(text).join("\n");
    let line_at = |pos: usize| joined[..pos].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (key, from_root) in [("crate::", true), ("super::", false)] {
        let mut at = 0;
        while let Some(found) = joined[at..].find(key) {
            let pos = at + found;
            at = pos + key.len();
            // Not the tail of a longer name or a path already counted
            // (`super::super::`).
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
                out.push(Import {
                    file: rel.to_string(),
                    line: line_at(pos),
                    path: base.iter().cloned().chain(p).collect(),
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
        return Some(format!("group `{from_top}` has no row in MAY_IMPORT"));
    };
    if !MAY_IMPORT.iter().any(|(m, _)| m == target_top) {
        return Some(format!(
            "`crate::{target_top}` is not a group in MAY_IMPORT"
        ));
    }
    let named = import.path.join("::");
    let ok = allowed
        .iter()
        .any(|a| *a == "*" || named == *a || named.starts_with(&format!("{a}::")));
    (!ok).then(|| format!("`{from_top}` may not import `{named}` (allowed: {allowed:?})"))
}

#[test]
fn the_groups_import_each_other_as_the_architecture_doc_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        if rel == "main.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("a source file");
        for i in imports(&rel, &text) {
            seen += 1;
            if let Some(why) = violation(&i) {
                bad.push(format!("worker/src/{}:{}: {why}", i.file, i.line));
            }
        }
    }
    assert!(
        seen > 100,
        "found {seen} imports only: is the parser broken?"
    );
    assert!(
        bad.is_empty(),
        "imports against docs/architecture.md's worker groups (move the item, \
         or change the doc and MAY_IMPORT together):\n{}",
        bad.join("\n")
    );
}

/// The parser finds what the check relies on, so a silent miss cannot
/// pass the rule above.
#[test]
fn the_parser_resolves_use_trees_and_super_and_skips_tests() {
    let text = "use crate::{node::Node, edge::{master_client::MasterLink, peers}};\n\
                // use crate::control::apply;\n\
                fn f() { crate::control::apply::handle(n, c); }\n\
                use super::feeds::Feed;\n\
                use super::super::store::blocks::Blocks;\n\
                #[cfg(test)]\n\
                mod tests {\n    use crate::control::drain;\n}\n";
    let got: Vec<(usize, String)> = imports("task/external/mod.rs", text)
        .into_iter()
        .map(|i| (i.line, i.path.join("::")))
        .collect();
    let want = [
        (1, "node::Node"),
        (1, "edge::master_client::MasterLink"),
        (1, "edge::peers"),
        (3, "control::apply::handle"),
        (4, "task::feeds::Feed"),
        (5, "store::blocks::Blocks"),
    ];
    let want: Vec<(usize, String)> = want.iter().map(|(l, p)| (*l, p.to_string())).collect();
    assert_eq!(got, want);
    let bad: Vec<String> = imports("task/external/mod.rs", text)
        .iter()
        .filter_map(violation)
        .collect();
    assert_eq!(
        bad.len(),
        2,
        "task may name neither the node nor control: {bad:?}"
    );
    assert!(bad[0].contains("node::Node"), "{bad:?}");
    assert!(bad[1].contains("control::apply::handle"), "{bad:?}");
}

//! The worker's import rules (`docs/architecture.md`, "The worker"),
//! checked on its sources, unit tests aside.
//!
//! Protobuf and tonic stay at the worker's edge: outside `worker/src/edge/`
//! the code works on the worker's own and the `protocol` crate's types, so
//! no `proto::` or `tonic::` path may appear there. And each group
//! (`control`, `edge`, `store`, `task`, `mem`, `node`) imports only what
//! [`MAY_IMPORT`] lists for it: every `crate::` and `super::` path is
//! resolved to the module it names. A failure names the file and line.

#[path = "../../testkit/source_scan.rs"]
mod scan;

use scan::{check, imports, sources, violation, Rules};
use std::path::Path;

/// What only the edge may name.
const EDGE_ONLY: &[&str] = &["proto::", "tonic::"];

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

const RULES: Rules = Rules {
    may_import: MAY_IMPORT,
    root_items: &[],
};

#[test]
fn the_groups_import_each_other_as_the_architecture_doc_says() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (bad, seen) = check(dir, &RULES, &|rel| rel == "main.rs");
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
        .filter_map(|i| violation(i, &RULES))
        .collect();
    assert_eq!(
        bad.len(),
        2,
        "task may name neither the node nor control: {bad:?}"
    );
    assert!(bad[0].contains("node::Node"), "{bad:?}");
    assert!(bad[1].contains("control::apply::handle"), "{bad:?}");
}

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

#[path = "../../testkit/source_scan.rs"]
mod scan;

use scan::{check, imports, violation, Rules};
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
/// (`now`: the master's clock, simulated under turmoil.)
const ROOT_ITEMS: &[&str] = &["now"];

const RULES: Rules = Rules {
    may_import: MAY_IMPORT,
    root_items: ROOT_ITEMS,
};

#[test]
fn imports_follow_the_layers_of_the_architecture_doc() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (bad, seen) = check(dir, &RULES, &|rel| {
        rel.ends_with("_tests.rs") || rel == "main.rs"
    });
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
        .filter_map(|i| violation(i, &RULES))
        .collect();
    assert_eq!(bad.len(), 2, "{bad:?}");
    let tests = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::core::MasterState;\n}\n";
    assert_eq!(
        imports("jobs/job.rs", tests).len(),
        1,
        "unit tests are exempt"
    );
}

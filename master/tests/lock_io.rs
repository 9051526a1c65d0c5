//! No file I/O under the master's lock but the edit log's: the master's
//! sources are scanned for file APIs, which may appear only in the edit log
//! and in the job side's file modules, whose every function that touches a
//! file asserts it runs with the lock released
//! (`lockmark::assert_unlocked`, a panic in the debug builds every other
//! test runs). A new file API anywhere else fails here, with its place.
//! Files read inside another crate (the TLS certificates, through
//! `rpc::tls`) are invisible to that scan, so the calls of those functions
//! are listed too, each call site with why the lock is free there.

#[path = "../../testkit/source_scan.rs"]
mod scan;

use scan::sources;
use std::path::Path;

/// File APIs, as the master's code spells them.
const FILE_APIS: &[&str] = &[
    "std::fs::",
    "File::",
    "OpenOptions",
    "sync_all",
    "sync_data",
    "read_to_string",
    "tokio::fs::",
];

/// Where file I/O may be, and why.
const ALLOWED: &[(&str, &str)] = &[
    (
        "blocks/editlog.rs",
        "the edit log: its append and fsync are what the lock must order",
    ),
    (
        "jobs/history.rs",
        "history files, written and read off the lock",
    ),
    (
        "jobs/recovery.rs",
        "submitted records off the lock; the scan at start, before the state is shared",
    ),
    (
        "jobs/schedstate.rs",
        "the policy's state off the lock; its load at start, before the state is shared",
    ),
];

/// Functions of other crates that read files, as the master calls them:
/// the scan for file APIs cannot see the reads inside them (the TLS
/// certificates and keys, `rpc/src/tls.rs`).
const CROSS_CRATE_FILE_FNS: &[&str] = &[
    "tls::server_config(",
    "tls::web_config(",
    "tls::client_config(",
];

/// Where the master may call them, as `(file, enclosing fn, why the lock
/// is not held there)`.
const CROSS_CRATE_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "lib.rs",
        "run_with_http",
        "before the state is opened: a bad certificate stops the master at start",
    ),
    (
        "lib.rs",
        "serve",
        "on a copy of the config taken out of the lock",
    ),
    (
        "http/mod.rs",
        "serve",
        "on a copy of the config taken out of the lock",
    ),
];

#[test]
fn file_io_only_where_the_lock_is_not_held() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 30, "scanned {} files only", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        if rel.ends_with("_tests.rs") {
            continue;
        }
        let code = scan::code_lines(&std::fs::read_to_string(f).unwrap()).join("\n");
        let uses: Vec<&str> = FILE_APIS
            .iter()
            .copied()
            .filter(|a| code.contains(a))
            .collect();
        if uses.is_empty() {
            continue;
        }
        match ALLOWED.iter().find(|(p, _)| *p == rel) {
            None => bad.push(format!("{rel}: {uses:?}")),
            Some(("blocks/editlog.rs", _)) => {}
            Some(_) if !code.contains("assert_unlocked(") => {
                bad.push(format!("{rel}: file I/O without assert_unlocked"))
            }
            Some(_) => {}
        }
    }
    assert!(
        bad.is_empty(),
        "file I/O where the master's lock may be held (write it through jobs/disk.rs, \
         or read it in core/offlock.rs): {bad:#?}"
    );
}

/// Every function of the allowed modules that opens a file asserts first:
/// counted as at least one assertion per `pub fn` that touches a file.
#[test]
fn each_file_function_of_the_job_side_asserts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (rel, _) in &ALLOWED[1..] {
        let code = scan::code_lines(&std::fs::read_to_string(root.join(rel)).unwrap()).join("\n");
        for f in code.split("\npub fn ").skip(1) {
            let body = f.split("\n}\n").next().unwrap();
            let name = body.split('(').next().unwrap();
            let touches = FILE_APIS.iter().any(|a| body.contains(a));
            // The scans at start run before the state is shared.
            let at_start = ["recover", "load"].contains(&name);
            if touches && !at_start {
                assert!(
                    body.contains("assert_unlocked("),
                    "{rel}: fn {name} touches a file without asserting the lock is free"
                );
            }
        }
    }
}

/// The name of the function whose body holds line `at` of `code`.
fn enclosing_fn(code: &str, at: usize) -> String {
    code.lines()
        .take(at + 1)
        .filter_map(|l| {
            let (_, rest) = l.split_once("fn ")?;
            let name = rest.split(['(', '<']).next()?;
            let fn_line = l.trim_start().starts_with("fn ")
                || l.trim_start().starts_with("pub ")
                || l.trim_start().starts_with("async ");
            (fn_line && !name.is_empty()).then(|| name.trim().to_string())
        })
        .last()
        .unwrap_or_default()
}

/// Cross-crate file reads are called only where the lock is known to be
/// free; a new call site fails here until it is reviewed and listed.
#[test]
fn cross_crate_file_reads_only_off_the_lock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut bad = Vec::new();
    let mut found = 0;
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        if rel.ends_with("_tests.rs") {
            continue;
        }
        let code = scan::code_lines(&std::fs::read_to_string(f).unwrap()).join("\n");
        for (i, line) in code.lines().enumerate() {
            let Some(api) = CROSS_CRATE_FILE_FNS.iter().find(|a| line.contains(*a)) else {
                continue;
            };
            found += 1;
            let func = enclosing_fn(&code, i);
            if !CROSS_CRATE_ALLOWED
                .iter()
                .any(|(p, f, _)| *p == rel && *f == func)
            {
                bad.push(format!("{rel}: fn {func} calls {api}...)"));
            }
        }
    }
    assert!(
        found >= 3,
        "found {found} TLS loads only: is the scan broken?"
    );
    assert!(
        bad.is_empty(),
        "files read through another crate where the master's lock may be held \
         (copy what they need out of the lock first, then list the call \
         site in CROSS_CRATE_ALLOWED): {bad:#?}"
    );
}

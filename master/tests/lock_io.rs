//! No file I/O under the master's lock but the edit log's: the master's
//! sources are scanned for file APIs, which may appear only in the edit log
//! and in the job side's file modules, whose every function that touches a
//! file asserts it runs with the lock released
//! (`core::lock::assert_unlocked`, a panic in the debug builds every other
//! test runs). A new file API anywhere else fails here, with its place.

use std::path::{Path, PathBuf};

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

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code before the file's unit tests, without comments.
fn code(text: &str) -> String {
    let end = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

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
        let code = code(&std::fs::read_to_string(f).unwrap());
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
        let code = code(&std::fs::read_to_string(root.join(rel)).unwrap());
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

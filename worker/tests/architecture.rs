//! Protobuf and tonic stay at the worker's edge: outside `worker/src/edge/`
//! the code works on the worker's own types (`docs/architecture.md`, "The
//! worker"), so no `proto::` or `tonic::` path may appear there but in
//! unit tests. A new one fails here, with its place.

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

//! What the master's source-scanning tests share: the files of
//! `master/src`, and each file's code before its inline unit tests.

use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`.
pub fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's lines up to its inline unit tests (`#[cfg(test)]` before a
/// `mod name {`; a `#[cfg(test)]` file included by `#[path]` ends
/// nothing), with comment lines blanked so line numbers hold.
pub fn code_lines(text: &str) -> Vec<String> {
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

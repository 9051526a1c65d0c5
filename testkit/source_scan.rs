//! What the source-scanning tests of the daemons share (included by
//! `#[path]` from `master/tests/` and `worker/tests/`, not a crate): the
//! `.rs` files of a tree, each file's code before its inline unit tests,
//! and the `crate::`/`super::` paths it names, resolved from the crate
//! root, judged against a table of which top module may import which.
//! Each crate's `architecture.rs` holds its own table; the rules are
//! `docs/architecture.md`'s.

#![allow(dead_code)]

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

/// One import: where it is and the module path it names.
pub struct Import {
    pub file: String,
    pub line: usize,
    pub path: Vec<String>,
}

/// The module path of a source file: `jobs/job.rs` is `jobs::job`,
/// `jobs/mod.rs` is `jobs`, `lib.rs` the root.
pub fn module_of(rel: &str) -> Vec<String> {
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
pub fn imports(rel: &str, text: &str) -> Vec<Import> {
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

/// Which top module may import which: each row is a module and the
/// module paths it may name (a path allows itself and everything under
/// it; `*` allows all); `root_items` are items of the crate root any
/// module may name.
pub struct Rules<'a> {
    pub may_import: &'a [(&'a str, &'a [&'a str])],
    pub root_items: &'a [&'a str],
}

/// Why `import` breaks `rules`, if it does.
pub fn violation(import: &Import, rules: &Rules) -> Option<String> {
    let from = module_of(&import.file);
    let from_top = from.first().map_or("lib", String::as_str);
    let target_top = import.path.first()?;
    if target_top == from_top || target_top == "self" {
        return None;
    }
    let Some((_, allowed)) = rules.may_import.iter().find(|(m, _)| *m == from_top) else {
        return Some(format!("module `{from_top}` has no row in MAY_IMPORT"));
    };
    if !rules.may_import.iter().any(|(m, _)| m == target_top) {
        if rules.root_items.contains(&target_top.as_str()) {
            return None;
        }
        return Some(format!(
            "`crate::{target_top}` is neither a module in MAY_IMPORT nor a root item"
        ));
    }
    let named = import.path.join("::");
    let ok = allowed
        .iter()
        .any(|a| *a == "*" || named == *a || named.starts_with(&format!("{a}::")));
    (!ok).then(|| format!("`{from_top}` may not import `{named}` (allowed: {allowed:?})"))
}

/// Every import of `crate_dir/src` against `rules`, as
/// `crate_dir/src/file:line: why`, and how many imports were seen; files
/// for which `skip` holds (by path relative to `src`) are left out.
pub fn check(crate_dir: &Path, rules: &Rules, skip: &dyn Fn(&str) -> bool) -> (Vec<String>, usize) {
    let root = crate_dir.join("src");
    let name = crate_dir.file_name().unwrap().to_string_lossy().to_string();
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().to_string();
        if skip(&rel) {
            continue;
        }
        for i in imports(&rel, &std::fs::read_to_string(f).unwrap()) {
            seen += 1;
            if let Some(why) = violation(&i, rules) {
                bad.push(format!("{name}/src/{}:{}: {why}", i.file, i.line));
            }
        }
    }
    (bad, seen)
}

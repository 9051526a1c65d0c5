//! Globs in `mr fs cat|ls|get|rm` paths, as Hadoop's `FileSystem.globStatus`
//! gives them (`mr fs cat '/out/part-*'`): `*`, `?` and `[...]` (`[a-z]`,
//! `[!x]`) in the last component, matched against the master's listing of
//! the parent directory. A glob in an earlier component is refused rather
//! than half-supported.

use anyhow::bail;
use rpc::dfs::Dfs;

/// Whether `path` holds a glob character.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// Matches one path component against one glob component.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_at(&p, &n)
}

fn match_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| match_at(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && match_at(&p[1..], &n[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(1).position(|&c| c == ']').map(|i| i + 1) else {
                // An unclosed bracket is a literal '['.
                return n.first() == Some(&'[') && match_at(&p[1..], &n[1..]);
            };
            let Some(&c) = n.first() else { return false };
            let mut set = &p[1..close];
            let negate = matches!(set.first(), Some('!' | '^'));
            if negate {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && match_at(&p[close + 1..], &n[1..])
        }
        Some(&c) => n.first() == Some(&c) && match_at(&p[1..], &n[1..]),
    }
}

/// The paths `raw` names: itself when it holds no glob, else every entry
/// of its parent directory whose name matches, sorted; none is an error.
pub async fn expand(dfs: &Dfs, raw: &str) -> anyhow::Result<Vec<String>> {
    if !is_glob(raw) {
        return Ok(vec![raw.to_string()]);
    }
    let (parent, pattern) = raw.rsplit_once('/').unwrap_or(("", raw));
    if is_glob(parent) {
        bail!("{raw}: globs are supported in the last path component only");
    }
    let parent = if parent.is_empty() { "/" } else { parent };
    let mut out: Vec<String> = dfs
        .list(parent)
        .await?
        .into_iter()
        .filter(|e| matches(pattern, e.path.rsplit('/').next().unwrap_or("")))
        .map(|e| e.path)
        .collect();
    out.sort();
    if out.is_empty() {
        bail!("{raw}: no file matches");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_a_shell_does() {
        assert!(matches("part-*", "part-00000"));
        assert!(!matches("part-*", "_SUCCESS"));
        assert!(matches("*", ""));
        assert!(matches("p?rt-0000[0-2]", "part-00001"));
        assert!(!matches("p?rt-0000[0-2]", "part-00003"));
        assert!(matches("part-0000[!0]", "part-00003"));
        assert!(!matches("part-0000[!0]", "part-00000"));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(matches("x[", "x["));
        assert!(is_glob("/out/part-*") && !is_glob("/out/part-00000"));
    }
}

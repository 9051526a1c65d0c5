//! Namespace paths: absolute, normalised, unable to escape the root.
//!
//! Limits follow HDFS's `fs-limits` (255-byte components) so that a path
//! accepted here is one any tool can show.

use std::fmt;

/// Longest path component in bytes, as HDFS's `dfs.namenode.fs-limits.max-component-length`.
pub const MAX_COMPONENT: usize = 255;
/// Longest whole path in bytes.
pub const MAX_PATH: usize = 4096;

/// Why a path was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("path {0:?} is not absolute: paths start with '/'")]
    NotAbsolute(String),
    #[error("path {0:?} contains '..': paths cannot leave the namespace")]
    DotDot(String),
    #[error("path {0:?} has a component longer than {MAX_COMPONENT} bytes")]
    ComponentTooLong(String),
    #[error("path is longer than {MAX_PATH} bytes")]
    TooLong,
    #[error("path {0:?} contains a control character")]
    Control(String),
    #[error("path {0:?} names the root, not a file")]
    Root(String),
}

/// A validated, normalised namespace path (`/a/b`; the root is `/`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DfsPath(String);

impl DfsPath {
    /// Validates and normalises: duplicate and trailing slashes and `.`
    /// components are dropped; `..` is refused rather than resolved, so that a
    /// typo never silently names another file.
    pub fn parse(raw: &str) -> Result<Self, PathError> {
        if raw.len() > MAX_PATH {
            return Err(PathError::TooLong);
        }
        if !raw.starts_with('/') {
            return Err(PathError::NotAbsolute(raw.to_string()));
        }
        if raw.chars().any(|c| c.is_control()) {
            return Err(PathError::Control(raw.escape_debug().to_string()));
        }
        let mut out = String::with_capacity(raw.len());
        for comp in raw.split('/') {
            match comp {
                "" | "." => continue,
                ".." => return Err(PathError::DotDot(raw.to_string())),
                c if c.len() > MAX_COMPONENT => {
                    return Err(PathError::ComponentTooLong(raw.to_string()))
                }
                c => {
                    out.push('/');
                    out.push_str(c);
                }
            }
        }
        if out.is_empty() {
            out.push('/');
        }
        Ok(DfsPath(out))
    }

    /// Like [`DfsPath::parse`], but the root is refused: files cannot live there.
    pub fn parse_file(raw: &str) -> Result<Self, PathError> {
        let p = Self::parse(raw)?;
        if p.is_root() {
            return Err(PathError::Root(raw.to_string()));
        }
        Ok(p)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The prefix every descendant starts with (`/a/` for `/a`, `/` for the root).
    pub fn dir_prefix(&self) -> String {
        if self.is_root() {
            "/".to_string()
        } else {
            format!("{}/", self.0)
        }
    }

    /// `/a/b` joined with `c` is `/a/b/c`.
    pub fn join(&self, name: &str) -> Result<Self, PathError> {
        Self::parse(&format!("{}/{}", self.0, name))
    }
}

impl fmt::Display for DfsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises() {
        assert_eq!(DfsPath::parse("//a///b/./c/").unwrap().as_str(), "/a/b/c");
        assert_eq!(DfsPath::parse("/").unwrap().as_str(), "/");
        assert_eq!(DfsPath::parse("/a").unwrap().dir_prefix(), "/a/");
    }

    #[test]
    fn refuses() {
        assert!(matches!(
            DfsPath::parse("a/b"),
            Err(PathError::NotAbsolute(_))
        ));
        assert!(matches!(
            DfsPath::parse("/a/../b"),
            Err(PathError::DotDot(_))
        ));
        assert!(matches!(DfsPath::parse("/.."), Err(PathError::DotDot(_))));
        assert!(matches!(DfsPath::parse("/a\n"), Err(PathError::Control(_))));
        assert!(DfsPath::parse(&format!("/{}", "x".repeat(256))).is_err());
        assert!(DfsPath::parse_file("/").is_err());
        assert!(DfsPath::parse_file("/a/b").unwrap().join("..").is_err());
    }
}

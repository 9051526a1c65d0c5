//! Files shipped with a job (Streaming's `--file`, a job program): where
//! they live in the block store, named by the SHA-256 of their bytes
//! (`/.mr/files/SHA256/NAME`), so the client uploads a file once and a
//! worker can check that a path serves the bytes its name promises.

use std::io::Read;

/// Where shipped files live in the block store.
pub const SHIPPED_DIR: &str = "/.mr/files";

/// The (hash, name) of a shipped file's DFS path.
pub fn parse_shipped(path: &str) -> Result<(&str, &str), String> {
    let bad = || format!("{path:?} is not a shipped file ({SHIPPED_DIR}/SHA256/NAME)");
    let rest = path
        .strip_prefix(SHIPPED_DIR)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or_else(bad)?;
    let (hash, name) = rest.split_once('/').ok_or_else(bad)?;
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    if hash.len() != 64 || !hash.chars().all(hex) || !valid_name(name) {
        return Err(bad());
    }
    Ok((hash, name))
}

/// A file name a task's working directory can hold: no path, no hidden
/// name, nothing the shell would need quoting for.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'))
}

/// The SHA-256 of `r`'s bytes, in lower-case hex.
pub fn sha256_hex(mut r: impl Read) -> std::io::Result<String> {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        ctx.update(&buf[..n]);
    }
    Ok(ctx
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_paths_and_hashes() {
        let h = sha256_hex(&b"abc"[..]).unwrap();
        assert_eq!(
            h,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let p = format!("{SHIPPED_DIR}/{h}/m.py");
        assert_eq!(parse_shipped(&p).unwrap(), (h.as_str(), "m.py"));
        for bad in [
            "/etc/passwd".to_string(),
            format!("{SHIPPED_DIR}/{h}"),
            format!("{SHIPPED_DIR}/{h}/../x"),
            format!("{SHIPPED_DIR}/{h}/.hidden"),
            format!("{SHIPPED_DIR}/{h}/a b"),
            format!("{SHIPPED_DIR}/{}/m.py", "A".repeat(64)),
            format!("{SHIPPED_DIR}/abc/m.py"),
        ] {
            assert!(parse_shipped(&bad).is_err(), "{bad}");
        }
    }
}

//! CSVs read by their header's names, so that `mr sim heldout` reads the
//! columns it needs from directories written by older or newer binaries
//! (`trace_reread` insists on today's header, to write the report again).

use anyhow::Context;
use std::collections::BTreeMap;
use std::path::Path;

/// Splits one CSV line (`results::csv_line`'s quoting: a field with a
/// comma or a quote is quoted, quotes doubled).
pub fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().expect("a field").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().expect("a field").push(c),
        }
    }
    out
}

/// A CSV's rows as maps from its header's names.
pub fn read_table(path: &Path) -> anyhow::Result<Vec<BTreeMap<String, String>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines().filter(|l| !l.is_empty());
    let header = csv_fields(lines.next().unwrap_or(""));
    Ok(lines
        .map(|l| header.iter().cloned().zip(csv_fields(l)).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_lines_split_as_they_were_quoted() {
        assert_eq!(
            csv_fields("a,\"b,c\",\"d\"\"e\","),
            vec!["a", "b,c", "d\"e", ""]
        );
    }
}

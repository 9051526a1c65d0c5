//! Flag values both `mr bench` and the other `mr` commands read.

/// How Sort's records are framed; clap refuses any other word.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// Length-prefixed key and value (what `mr gen randomwriter` writes).
    Kv,
    /// Text lines, KEY<TAB>VALUE.
    Lines,
}

/// A size flag (`64MiB`) for clap: [`common::units::parse_size`].
pub fn parse_size(s: &str) -> Result<u64, String> {
    common::units::parse_size(s).map_err(|e| e.to_string())
}

/// A duration flag (`3s`) for clap: [`common::units::parse_duration`].
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    common::units::parse_duration(s).map_err(|e| e.to_string())
}

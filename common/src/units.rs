//! Human sizes (`64MiB`) and durations (`1s`, `250ms`) as they appear in
//! `cluster.toml` and on the command line.

use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// Why a size or duration from outside was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("invalid size {0:?}: expected a number with an optional B/KiB/MiB/GiB/TiB suffix (e.g. 64MiB)")]
    Size(String),
    #[error(
        "invalid rate {0:?}: expected a number with a bit/kbit/mbit/gbit suffix (e.g. 200mbit)"
    )]
    Rate(String),
    #[error("invalid duration {0:?}: expected a number with a ms/s/m/h/d suffix (e.g. 1s, 250ms)")]
    Duration(String),
}

/// Parses `123`, `4KiB`, `64MiB`, `1GiB`, `1.5GiB` (also `K`, `M`, `G`, `KB`...,
/// all binary: a block store has no use for powers of ten).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let t = s.trim();
    let err = || UnitError::Size(s.to_string());
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(err()),
    };
    if num.is_empty() {
        return Err(err());
    }
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult).ok_or_else(err);
    }
    let f: f64 = num.parse().map_err(|_| err())?;
    let v = f * mult as f64;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 {
        return Err(err());
    }
    Ok(v.round() as u64)
}

/// Formats bytes for humans, e.g. `64.0 MiB`.
pub fn format_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Parses a link rate as `tc` writes it (`200mbit`, `1gbit`, `500kbit`,
/// `1000bit`) into bytes per second.
pub fn parse_rate(s: &str) -> Result<f64, UnitError> {
    let t = s.trim().to_ascii_lowercase();
    let err = || UnitError::Rate(s.to_string());
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(err)?;
    let (num, unit) = t.split_at(split);
    let f: f64 = num.parse().map_err(|_| err())?;
    let bits = match unit {
        "bit" => f,
        "kbit" => f * 1e3,
        "mbit" => f * 1e6,
        "gbit" => f * 1e9,
        _ => return Err(err()),
    };
    if !(bits.is_finite() && bits > 0.0) {
        return Err(err());
    }
    Ok(bits / 8.0)
}

/// Parses `500ms`, `1s`, `1.5s`, `2m`.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let t = s.trim();
    let err = || UnitError::Duration(s.to_string());
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let f: f64 = num.parse().map_err(|_| err())?;
    let secs = match unit.trim() {
        "ms" => f / 1000.0,
        "s" | "" => f,
        "m" | "min" => f * 60.0,
        "h" => f * 3600.0,
        "d" => f * 86400.0,
        _ => return Err(err()),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// serde helper: a size given as an integer or a string with a suffix.
pub fn de_size<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        N(u64),
        S(String),
    }
    match Raw::deserialize(d)? {
        Raw::N(n) => Ok(n),
        Raw::S(s) => parse_size(&s).map_err(serde::de::Error::custom),
    }
}

/// serde helper: a duration given as a string with a suffix, or seconds.
pub fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        N(f64),
        S(String),
    }
    match Raw::deserialize(d)? {
        Raw::N(n) if n.is_finite() && n >= 0.0 => Ok(Duration::from_secs_f64(n)),
        Raw::N(n) => Err(serde::de::Error::custom(format!("invalid duration {n}"))),
        Raw::S(s) => parse_duration(&s).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("200mbit"), Ok(25e6));
        assert_eq!(parse_rate("1gbit"), Ok(125e6));
        assert_eq!(parse_rate("8kbit"), Ok(1e3));
        for bad in ["", "200", "mbit", "200mb", "-1mbit", "0mbit"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1 GiB"), Ok(1 << 30));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert!(parse_size("").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("99999999999TiB").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("6h"), Ok(Duration::from_secs(6 * 3600)));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn format() {
        assert_eq!(format_size(10), "10 B");
        assert_eq!(format_size(64 << 20), "64.0 MiB");
    }
}

//! The comparisons a trace report makes, named before the runs
//! (`--compare A:B`, repeatable; `B` may be `all`). Issue 41: choosing the
//! comparator after the fact (the best other policy by its mean) made the
//! comparison a selection of the data, and the p99 beside it compared with
//! a policy chosen for another figure. A comparison named in advance is a
//! hypothesis; several of them are one family under Holm's correction.

use std::fmt;

/// `policy − comparator`, paired by trace row and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub policy: String,
    pub comparator: String,
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.policy, self.comparator)
    }
}

/// The comparisons `specs` name among `policies`, in the order given,
/// without repeats; `A:all` is A against each other policy. Without specs,
/// each other policy against `baseline` (the default when none was named:
/// still fixed before the runs). An unknown policy, a policy against
/// itself or a spec without a colon is an error naming it.
pub fn expand(
    specs: &[String],
    policies: &[String],
    baseline: &str,
) -> Result<Vec<Comparison>, String> {
    let mut out: Vec<Comparison> = Vec::new();
    let mut push = |policy: &str, comparator: &str| {
        let c = Comparison {
            policy: policy.into(),
            comparator: comparator.into(),
        };
        if !out.contains(&c) {
            out.push(c);
        }
    };
    if specs.is_empty() {
        for p in policies.iter().filter(|p| *p != baseline) {
            push(p, baseline);
        }
        return Ok(out);
    }
    let known = |p: &str| {
        if policies.iter().any(|q| q == p) {
            Ok(())
        } else {
            Err(format!(
                "--compare: {p} is not one of --schedulers ({})",
                policies.join(",")
            ))
        }
    };
    for spec in specs {
        let (a, b) = spec.split_once(':').ok_or_else(|| {
            format!("--compare {spec:?}: POLICY:COMPARATOR, e.g. atlas:fifo or atlas:all")
        })?;
        known(a)?;
        if b == "all" {
            for q in policies.iter().filter(|q| *q != a) {
                push(a, q);
            }
        } else {
            known(b)?;
            if a == b {
                return Err(format!("--compare {spec}: a policy against itself"));
            }
            push(a, b);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn specs_expand_in_order_without_repeats() {
        let p = names(&["fifo", "delay", "atlas"]);
        let c = expand(
            &names(&["atlas:all", "delay:fifo", "atlas:fifo"]),
            &p,
            "fifo",
        )
        .unwrap();
        let s: Vec<String> = c.iter().map(|c| c.to_string()).collect();
        assert_eq!(s, ["atlas:fifo", "atlas:delay", "delay:fifo"]);
        // No spec: each other policy against the baseline.
        let c = expand(&[], &p, "delay").unwrap();
        let s: Vec<String> = c.iter().map(|c| c.to_string()).collect();
        assert_eq!(s, ["fifo:delay", "atlas:delay"]);
    }

    #[test]
    fn bad_specs_are_refused_by_name() {
        let p = names(&["fifo", "delay"]);
        for (spec, says) in [
            ("atlas:all", "atlas is not one of"),
            ("fifo:lsap", "lsap is not one of"),
            ("fifo", "POLICY:COMPARATOR"),
            ("fifo:fifo", "against itself"),
        ] {
            let e = expand(&names(&[spec]), &p, "fifo").unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }
}

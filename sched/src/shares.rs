//! `name:value,name:value` parameters (pool minimum shares and weights,
//! queue capacities), parsed with errors that name the parameter.

use super::error::SchedError;
use std::collections::BTreeMap;

pub fn parse(sched: &str, param: &str, v: &str) -> Result<BTreeMap<String, f64>, SchedError> {
    let bad = |why: &str| SchedError::BadValue {
        name: sched.into(),
        param: param.into(),
        value: v.into(),
        why: why.into(),
    };
    let mut out = BTreeMap::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, x) = part
            .split_once(':')
            .ok_or_else(|| bad("expected name:number pairs separated by commas"))?;
        let x: f64 = x
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| bad("each value must be a number >= 0"))?;
        out.insert(k.trim().to_string(), x);
    }
    Ok(out)
}

//! Policies by name, with their parameters, as the master config and
//! `mr admin scheduler set` select them.

use super::fifo::Fifo;
use super::Scheduler;
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SchedError {
    #[error("unknown scheduler {0:?}; known: {known}", known = NAMES.join(", "))]
    UnknownName(String),
    #[error("scheduler {name} has no parameter {param:?}; it takes: {takes}")]
    UnknownParam {
        name: String,
        param: String,
        takes: String,
    },
    #[error("scheduler {name}: parameter {param} = {value:?} is invalid: {why}")]
    BadValue {
        name: String,
        param: String,
        value: String,
        why: String,
    },
}

pub const NAMES: &[&str] = &["fifo"];

/// A policy name and its parameters, as configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedulerSpec {
    pub name: String,
    pub params: BTreeMap<String, String>,
}

impl SchedulerSpec {
    pub fn new(name: &str) -> Self {
        SchedulerSpec {
            name: name.to_string(),
            params: BTreeMap::new(),
        }
    }
}

/// Builds a policy, refusing unknown names and parameters.
pub fn build(spec: &SchedulerSpec) -> Result<Box<dyn Scheduler>, SchedError> {
    let takes = |allowed: &[&str]| -> Result<(), SchedError> {
        for k in spec.params.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(SchedError::UnknownParam {
                    name: spec.name.clone(),
                    param: k.clone(),
                    takes: if allowed.is_empty() {
                        "no parameters".into()
                    } else {
                        allowed.join(", ")
                    },
                });
            }
        }
        Ok(())
    };
    match spec.name.as_str() {
        "fifo" => {
            takes(&[])?;
            Ok(Box::new(Fifo))
        }
        other => Err(SchedError::UnknownName(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_unknown() {
        assert!(matches!(
            build(&SchedulerSpec::new("nope")),
            Err(SchedError::UnknownName(_))
        ));
        let mut s = SchedulerSpec::new("fifo");
        s.params.insert("x".into(), "1".into());
        let e = build(&s).err().unwrap();
        assert!(e.to_string().contains("no parameter"), "{e}");
        assert_eq!(build(&SchedulerSpec::new("fifo")).unwrap().name(), "fifo");
    }
}

//! `[scheduler]`: the placement policy and its parameters.

use super::*;

/// `[scheduler]`: the policy placing tasks, by name, with its parameters
/// (`[scheduler.params]`); `mr admin scheduler set` changes it at run time.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    #[serde(default = "default_scheduler")]
    pub name: String,
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, toml::Value>,
    /// Speculative execution: a backup attempt for a straggling task (the
    /// rule is `master::jobs::Job::speculation_candidates`). Off by default.
    #[serde(default)]
    pub speculative: bool,
}

pub(super) fn default_scheduler() -> String {
    "fifo".into()
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            name: default_scheduler(),
            params: Default::default(),
            speculative: false,
        }
    }
}

/// A policy name and its parameters, as configured. Built into a policy by
/// `sched::build`, which this crate does not link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedulerSpec {
    pub name: String,
    pub params: std::collections::BTreeMap<String, String>,
}

impl SchedulerSpec {
    pub fn new(name: &str) -> Self {
        SchedulerSpec {
            name: name.to_string(),
            params: Default::default(),
        }
    }
}

impl SchedulerConfig {
    pub fn spec(&self) -> SchedulerSpec {
        SchedulerSpec {
            name: self.name.clone(),
            params: self
                .params
                .iter()
                .map(|(k, v)| {
                    let s = match v {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect(),
        }
    }
}

//! PLACEHOLDER: being written; behaves as FIFO until then.

use super::registry::SchedError;
use super::*;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct CompatNb;

impl CompatNb {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        if let Some(k) = p.keys().next() {
            return Err(SchedError::UnknownParam {
                name: "compat-nb".into(),
                param: k.clone(),
                takes: "no parameters".into(),
            });
        }
        Ok(CompatNb)
    }
}

impl Scheduler for CompatNb {
    fn name(&self) -> &'static str {
        "compat-nb"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        super::fifo::Fifo.assign(view, trigger)
    }
}

//! PLACEHOLDER: being written; behaves as FIFO until then.

use super::registry::SchedError;
use super::*;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Acl;

impl Acl {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        if let Some(k) = p.keys().next() {
            return Err(SchedError::UnknownParam {
                name: "acl".into(),
                param: k.clone(),
                takes: "no parameters".into(),
            });
        }
        Ok(Acl)
    }
}

impl Scheduler for Acl {
    fn name(&self) -> &'static str {
        "acl"
    }

    fn assign(&mut self, view: &ClusterView, trigger: Trigger) -> Vec<Assignment> {
        super::fifo::Fifo.assign(view, trigger)
    }
}

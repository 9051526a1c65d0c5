//! HybSMRP's dynamic job priority (Eq. 1 of "HybSMRP: a hybrid scheduling
//! algorithm in Hadoop MapReduce framework"):
//!
//! Priority = (td / avgWaitTime)^α · (r / avgRunTime)^β · (n / avgNumTask)^γ
//!
//! with td the job's time in the queue (`now - submit_time`), r its average
//! map runtime (`avg_task_time`), n its remaining tasks (pending + running),
//! and the averages taken over the jobs in the queue. Higher priority is
//! served first. The paper's special cases: α = 1, β = γ = 0 is FCFS (the
//! default here); α = 0, β = -1, γ = 0 is its SJF. A ratio whose average is
//! 0 (nothing finished yet, everything just arrived) counts as 1, so a term
//! without information neither helps nor hurts.
//!
//! The paper pairs it with its localization ID (section "Data Localization
//! in HybSMRP", Algorithm 2), which is the matchmaking rule: see
//! [`super::matchmaking::Matchmaking::localization_id`].

use super::compose::JobOrder;
use super::registry::SchedError;
use super::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
pub struct HybsmrpOrder {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
}

impl Default for HybsmrpOrder {
    fn default() -> Self {
        HybsmrpOrder {
            alpha: 1.0,
            beta: 0.0,
            gamma: 0.0,
        }
    }
}

impl HybsmrpOrder {
    pub fn from_params(p: &BTreeMap<String, String>) -> Result<Self, SchedError> {
        let mut h = HybsmrpOrder::default();
        for (k, v) in p {
            let x: f64 = v
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| SchedError::BadValue {
                    name: "hybsmrp".into(),
                    param: k.clone(),
                    value: v.clone(),
                    why: "expected a number (the paper uses -1, 0 or 1)".into(),
                })?;
            match k.as_str() {
                "alpha" => h.alpha = x,
                "beta" => h.beta = x,
                "gamma" => h.gamma = x,
                _ => {
                    return Err(SchedError::UnknownParam {
                        name: "hybsmrp".into(),
                        param: k.clone(),
                        takes: "alpha, beta, gamma".into(),
                    })
                }
            }
        }
        Ok(h)
    }

    /// Eq. 1 for every job in the view, by job id.
    pub fn priorities(&self, view: &ClusterView) -> Vec<(u64, f64)> {
        let jobs = &view.jobs;
        if jobs.is_empty() {
            return vec![];
        }
        let k = jobs.len() as f64;
        let wait = |j: &JobView| (view.now - j.submit_time).max(0.0);
        let remaining = |j: &JobView| (j.pending + j.running) as f64;
        let avg_wait = jobs.iter().map(wait).sum::<f64>() / k;
        let avg_run = jobs.iter().map(|j| j.avg_task_time).sum::<f64>() / k;
        let avg_n = jobs.iter().map(remaining).sum::<f64>() / k;
        let term = |x: f64, avg: f64, e: f64| -> f64 {
            if e == 0.0 {
                return 1.0;
            }
            let ratio = if avg > 0.0 && x > 0.0 { x / avg } else { 1.0 };
            ratio.powf(e)
        };
        jobs.iter()
            .map(|j| {
                let p = term(wait(j), avg_wait, self.alpha)
                    * term(j.avg_task_time, avg_run, self.beta)
                    * term(remaining(j), avg_n, self.gamma);
                (j.id, p)
            })
            .collect()
    }
}

impl JobOrder for HybsmrpOrder {
    fn name(&self) -> &'static str {
        "hybsmrp"
    }

    fn order(&mut self, view: &ClusterView) -> Vec<u64> {
        let mut p = self.priorities(view);
        let order_of = |id: u64| view.jobs.iter().find(|j| j.id == id).map_or(0, |j| j.order);
        // Highest priority first; ties in submission order.
        p.sort_by(|a, b| b.1.total_cmp(&a.1).then(order_of(a.0).cmp(&order_of(b.0))));
        p.into_iter().map(|(id, _)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testkit;

    /// A job of `remaining` pending maps, submitted at `submit`, whose
    /// tasks took `avg_task` seconds on average.
    fn job(id: u64, submit: f64, avg_task: f64, remaining: u32) -> JobView {
        JobView {
            submit_time: submit,
            avg_task_time: avg_task,
            ..testkit::job(id, remaining)
        }
    }

    fn view() -> ClusterView {
        ClusterView {
            now: 100.0,
            // Job 1 arrived first but its tasks are long; job 3 is shortest.
            jobs: vec![
                job(1, 0.0, 30.0, 50),
                job(2, 40.0, 20.0, 10),
                job(3, 80.0, 5.0, 20),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn fcfs_serves_the_longest_waiting_job_first() {
        let mut h = HybsmrpOrder::default();
        assert_eq!(h.order(&view()), vec![1, 2, 3]);
    }

    #[test]
    fn sjf_serves_the_shortest_job_first() {
        let mut p = BTreeMap::new();
        p.insert("alpha".to_string(), "0".to_string());
        p.insert("beta".to_string(), "-1".to_string());
        p.insert("gamma".to_string(), "0".to_string());
        let mut h = HybsmrpOrder::from_params(&p).unwrap();
        assert_eq!(h.order(&view()), vec![3, 2, 1]);
    }
}

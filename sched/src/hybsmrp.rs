//! HybSMRP's dynamic job priority (Eq. 1 of Gandomi et al., "HybSMRP: a
//! hybrid scheduling algorithm in Hadoop MapReduce framework", Journal of
//! Big Data 2019, section "Proposed method"):
//!
//! Priority = (td / avgWaitTime)^α · (r / avgRunTime)^β · (n / avgNumTask)^γ
//!
//! with td "the duration that a job waits in the queue" (`now -
//! submit_time`), r "the average run time for the map task" of the job
//! (`avg_map_time`: maps only, reduces stay out), n its remaining tasks
//! (pending + running), and the averages taken over the jobs in the queue
//! (avgRunTime over those with a finished map). Higher priority is served
//! first. The paper's special cases: α = 1, β = γ = 0 is FCFS (the default
//! here), and the paper defines its order by the wait, not by a queue
//! position: "with the increase in job waiting time, priority is increased;
//! hence, the jobs which have been added to the queue earlier, get services
//! earlier", so the job that has waited longest comes first whatever its
//! submission number; α = 0, β = -1, γ = 0 is its SJF. A ratio whose
//! average is 0 (everything just arrived) counts as 1, so a term without
//! information neither helps nor hurts.
//!
//! A job with no finished map has no r. The paper does not say what it
//! gets; ratio 1 would rank it in the middle under SJF, behind every known
//! short job, so a new short job could wait for ever behind a stream of
//! known ones, while the point of SJF is to let short jobs through. We rank
//! such jobs first whenever β < 0 (ordered among themselves by the other
//! terms), which costs a long newcomer at most until its first map ends,
//! when its r becomes known; with β ≥ 0 its r term stays 1.
//!
//! The paper pairs it with its localization ID (section "Data Localization
//! in HybSMRP", Algorithm 2), which is the matchmaking rule: see
//! [`super::matchmaking::Matchmaking::localization_id`].

use super::compose::JobOrder;
use super::error::SchedError;
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
        let known: Vec<f64> = jobs
            .iter()
            .map(|j| j.avg_map_time)
            .filter(|r| *r > 0.0)
            .collect();
        let avg_run = if known.is_empty() {
            0.0
        } else {
            known.iter().sum::<f64>() / known.len() as f64
        };
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
                    * term(j.avg_map_time, avg_run, self.beta)
                    * term(remaining(j), avg_n, self.gamma);
                (j.id, p)
            })
            .collect()
    }

    /// Whether `job` goes ahead of every job with a known r: under a
    /// shortest-first β, one whose map runtime is not known yet (see the
    /// module doc).
    fn unknown_first(&self, job: &JobView) -> bool {
        self.beta < 0.0 && job.avg_map_time <= 0.0
    }
}

impl JobOrder for HybsmrpOrder {
    fn name(&self) -> &'static str {
        "hybsmrp"
    }

    fn order(&mut self, view: &ClusterView) -> Vec<u64> {
        let p = self.priorities(view);
        let mut ranked: Vec<(bool, f64, u64, u64)> = view
            .jobs
            .iter()
            .zip(p)
            .map(|(j, (_, prio))| (self.unknown_first(j), prio, j.order, j.id))
            .collect();
        // Unknown r first under SJF, then highest priority; ties in
        // submission order.
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
        ranked.into_iter().map(|r| r.3).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit;

    /// A job of `remaining` pending maps, submitted at `submit`, whose
    /// maps took `avg_task` seconds on average.
    fn job(id: u64, submit: f64, avg_map: f64, remaining: u32) -> JobView {
        JobView {
            submit_time: submit,
            avg_map_time: avg_map,
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

    fn sjf() -> HybsmrpOrder {
        HybsmrpOrder {
            alpha: 0.0,
            beta: -1.0,
            gamma: 0.0,
        }
    }

    #[test]
    fn fcfs_follows_the_wait_in_the_queue_not_the_queue_number() {
        // Submission numbers 1, 2, 3, but job 3 has waited longest and
        // job 1 least (say, numbered before a restart that re-queued them):
        // the paper's FCFS is by td, the time waited.
        let mut jobs = vec![
            job(1, 90.0, 0.0, 5),
            job(2, 50.0, 0.0, 5),
            job(3, 10.0, 0.0, 5),
        ];
        let v = ClusterView {
            now: 100.0,
            jobs: jobs.clone(),
            ..Default::default()
        };
        assert_eq!(HybsmrpOrder::default().order(&v), vec![3, 2, 1]);
        // Equal waits: submission order breaks the tie.
        for j in &mut jobs {
            j.submit_time = 40.0;
        }
        let v = ClusterView { jobs, ..v };
        assert_eq!(HybsmrpOrder::default().order(&v), vec![1, 2, 3]);
    }

    #[test]
    fn sjf_puts_a_job_with_no_finished_map_first() {
        let mut v = view();
        // Job 4 just arrived: no map of it has finished.
        v.jobs.push(job(4, 99.0, 0.0, 3));
        assert_eq!(sjf().order(&v), vec![4, 3, 2, 1]);
        // Under FCFS it has waited least: last.
        assert_eq!(HybsmrpOrder::default().order(&v), vec![1, 2, 3, 4]);
    }

    #[test]
    fn r_is_the_average_over_known_jobs() {
        let mut v = view();
        v.jobs.push(job(4, 99.0, 0.0, 3));
        let p = sjf().priorities(&v);
        // avgRunTime = (30 + 20 + 5) / 3, over the jobs with a finished map.
        let avg = 55.0 / 3.0;
        assert!((p[2].1 - avg / 5.0).abs() < 1e-9, "{p:?}");
        assert_eq!(p[3].1, 1.0);
    }
}

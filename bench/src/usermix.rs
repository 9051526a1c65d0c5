//! User jobs in a trace replay (`mr bench trace --user-job PATH[:K=V,...]`):
//! a seeded share of the trace's rows runs a job program (say
//! `examples/grep` or `examples/wordcount`) on the row's input blocks with
//! the row's reducers instead of the synthetic SWIM job, so that policies
//! are compared on jobs the project did not write. The draw depends on the
//! row and the seed only: every policy and repetition runs the same rows as
//! the same jobs. A user row's output is checked to have been committed
//! only (its bytes are the program's own), and its `want_shuffle` and
//! `want_output` in the job rows stay the row's targets, which the program
//! does not follow.

use crate::client::client;
use crate::client::Submit;
use anyhow::{bail, Context};
use mrjob::{JobParams, JobPlan};
use rpc::dfs::Dfs;
use std::path::PathBuf;

/// One `--user-job`: a program and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct UserJob {
    pub program: PathBuf,
    pub params: Vec<(String, String)>,
}

impl std::str::FromStr for UserJob {
    type Err = String;

    /// `PATH` or `PATH:K=V,K=V`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (path, rest) = s.split_once(':').unwrap_or((s, ""));
        if path.is_empty() {
            return Err(format!("--user-job {s:?}: PATH[:K=V,...]"));
        }
        let params = rest
            .split(',')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                kv.split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| format!("--user-job {s:?}: {kv:?} is not K=V"))
            })
            .collect::<Result<_, _>>()?;
        Ok(UserJob {
            program: PathBuf::from(path),
            params,
        })
    }
}

/// A user job ready to submit: described once, its program shipped.
#[derive(Debug, Clone)]
pub struct Shipped {
    pub name: String,
    pub plan: JobPlan,
    /// Its parameters, the shipped program's path among them.
    pub params: JobParams,
}

/// Describes and ships each user job once, before the replay.
pub async fn ship(dfs: &Dfs, jobs: &[UserJob]) -> anyhow::Result<Vec<Shipped>> {
    let mut out = Vec::new();
    for u in jobs {
        let mut params = JobParams::default();
        params.extra.extend(u.params.iter().cloned());
        let (plan, name) = client()
            .describe(&u.program, &params)
            .await
            .with_context(|| format!("--user-job {}", u.program.display()))?;
        if plan.input_format != mrjob::InputFormat::Lines {
            bail!(
                "--user-job {}: the replay's input is TeraGen's 100-byte text records, read as lines; this job reads another format",
                u.program.display()
            );
        }
        client()
            .ship_all(dfs, true, std::slice::from_ref(&u.program), &mut params)
            .await?;
        out.push(Shipped { name, plan, params });
    }
    Ok(out)
}

/// Which of `n` user jobs row `row` runs, if any: a draw seeded by the
/// row and `seed`, below `share` for a user row.
pub fn pick(row: usize, seed: u64, share: f64, n: usize) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(seed ^ (row as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (rng.f64() < share).then(|| rng.usize(..n))
}

/// The submission of user job `u` for a row with these inputs and reducers.
pub fn submit(u: &Shipped, inputs: Vec<String>, output: &str, reducers: u32) -> Submit {
    let mut plan = u.plan.clone();
    plan.map_only |= reducers == 0;
    Submit {
        job: u.name.clone(),
        inputs,
        output: output.into(),
        reducers,
        params: u.params.clone(),
        output_replication: 1,
        queue: "default".into(),
        plan: Some(plan),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_picks_the_same_rows_every_time() {
        let u: UserJob = "bin/grep:pattern=AB,x=1".parse().unwrap();
        assert_eq!(u.program, PathBuf::from("bin/grep"));
        assert_eq!(u.params[0], ("pattern".into(), "AB".into()));
        assert!("bin/x:novalue".parse::<UserJob>().is_err());
        assert!(":a=b".parse::<UserJob>().is_err());
        let picks: Vec<_> = (0..1000).map(|r| pick(r, 7, 0.3, 2)).collect();
        assert_eq!(
            picks,
            (0..1000).map(|r| pick(r, 7, 0.3, 2)).collect::<Vec<_>>()
        );
        let n = picks.iter().flatten().count();
        assert!((240..360).contains(&n), "{n} of 1000 at 0.3");
        assert!(picks.iter().flatten().any(|&i| i == 1));
        assert_eq!(pick(5, 7, 1.0, 0), None);
        assert!((0..100).all(|r| pick(r, 1, 0.0, 3).is_none()));
    }
}

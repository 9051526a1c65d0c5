//! Jobs whose code is not in the worker: Hadoop Streaming's commands and
//! job programs built against the `mrjob` crate. Each task runs its command
//! or program as a child process in the task's own working directory, in
//! its own process group, fed the task's input records on stdin and read
//! for output records on stdout (text lines for Streaming, framed records
//! for a program: [`codec`]). The framework around it is unchanged: the
//! map's output is partitioned, sorted and shuffled as a built-in job's.
//!
//! The child runs as the worker's OS user, as Hadoop's default container
//! executor runs tasks as the NodeManager's user: a job can read and write
//! whatever the worker can.
//!
//! - [`codec`]: records to and from the child (lines or frames).
//! - [`child`]: the process, its pipes, its stderr, its timeout and kill.
//! - [`combine`]: the combiner, once over a map's sorted output.
//! - [`files`]: shipped files (scripts, programs) cached by content hash.

pub mod child;
pub mod codec;
pub mod combine;
pub mod files;

use crate::task::code::Code;
use crate::task::outcome::Failure;
use crate::task::runner::TaskRunner;
use child::{Child, KillOnDrop, Killer};
use mrjob::{JobParams, JobPlan, TaskMode};
use protocol::TaskRef;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// Hadoop's `mapreduce.task.timeout` default: a task that neither reads
/// input nor writes output for this long is killed.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(600);

pub use mrjob::spec::keys;

/// A child's counters, added to its task's (summed into the job's).
pub fn add_counters(ctx: &mut mrjob::TaskCtx, counters: std::collections::BTreeMap<String, u64>) {
    for (k, n) in counters {
        ctx.count(&k, n);
    }
}

/// What a task of an external job runs.
#[derive(Debug, Clone)]
pub struct External {
    pub run: Runs,
    /// DFS paths of the files every task gets in its working directory.
    pub files: Vec<String>,
    pub cmdenv: Vec<(String, String)>,
    pub timeout: Duration,
    pub plan: JobPlan,
}

#[derive(Debug, Clone)]
pub enum Runs {
    Streaming {
        mapper: String,
        reducer: Option<String>,
        combiner: Option<String>,
    },
    /// The program's DFS path (also among the shipped files).
    Program { path: String },
}

impl External {
    /// The external job `params` describe, or `None` for a built-in job.
    pub fn decode(params: &JobParams, plan_json: &str) -> Result<Option<External>, String> {
        let get = |k: &str| params.extra.get(k).filter(|v| !v.is_empty()).cloned();
        let run = match (get(keys::MAPPER), get(keys::PROGRAM)) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err("a job is either streaming or a program, not both".into())
            }
            (Some(mapper), None) => Runs::Streaming {
                mapper,
                reducer: get(keys::REDUCER),
                combiner: get(keys::COMBINER),
            },
            (None, Some(path)) => Runs::Program { path },
        };
        let lines = |k: &str| -> Vec<String> {
            get(k)
                .map(|v| {
                    v.lines()
                        .filter(|l| !l.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut files = lines(keys::FILES);
        if let Runs::Program { path } = &run {
            if !files.contains(path) {
                files.push(path.clone());
            }
        }
        for f in &files {
            files::parse_shipped(f)?;
        }
        let cmdenv = lines(keys::CMDENV)
            .into_iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| format!("cmdenv {kv:?} is not K=V"))
            })
            .collect::<Result<_, _>>()?;
        let timeout = match get(keys::TASK_TIMEOUT) {
            None => DEFAULT_TASK_TIMEOUT,
            Some(s) => s
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0 && *s < 1e9)
                .map(Duration::from_secs_f64)
                .ok_or_else(|| format!("task_timeout {s:?} is not a number of seconds"))?,
        };
        let plan = if plan_json.is_empty() {
            JobPlan::default()
        } else {
            JobPlan::from_json(plan_json)?
        };
        Ok(Some(External {
            run,
            files,
            cmdenv,
            timeout,
            plan,
        }))
    }

    /// The framing the child speaks.
    pub fn protocol(&self) -> codec::Protocol {
        match self.run {
            Runs::Streaming { .. } => codec::Protocol::Lines,
            Runs::Program { .. } => codec::Protocol::Frames,
        }
    }
}

/// An attempt's side of an external job, ready to start its children: the
/// working directory with the shipped files linked in, and the killer of
/// its children. The [`KillOnDrop`] that comes with it stays in the
/// attempt's future, so a killed attempt takes its children with it.
#[derive(Clone)]
pub struct Attempt {
    pub x: Arc<External>,
    pub workdir: PathBuf,
    pub killer: Killer,
    env: Vec<(String, String)>,
}

impl Attempt {
    /// Fetches the shipped files (once per worker) and makes attempt `t`'s
    /// working directory under the job's directory `job_dir`.
    ///
    /// Takes everything owned: the attempt's future must be `Send` for any
    /// lifetime (tokio's spawn), which borrows held across an await defeat.
    pub async fn prepare(
        runner: Arc<TaskRunner>,
        x: Arc<External>,
        params_json: String,
        t: TaskRef,
        job_dir: PathBuf,
    ) -> Result<(Attempt, KillOnDrop), Failure> {
        let mut local = Vec::new();
        for f in x.files.clone() {
            let at = files::localize(runner.dfs(), &runner.me().data_dir, f.clone()).await?;
            local.push((f, at));
        }
        let kind = if t.is_map { "m" } else { "r" };
        let workdir = job_dir.join(format!("task-{kind}-{}-{}", t.index, t.attempt));
        std::fs::create_dir_all(&workdir)
            .map_err(|e| Failure::msg(format!("{}: {e}", workdir.display())))?;
        files::link_into(&workdir, &local)?;
        let mut env = vec![
            ("MR_JOB_ID".to_string(), t.job_id.to_string()),
            ("MR_TASK_INDEX".to_string(), t.index.to_string()),
            ("MR_TASK_ATTEMPT".to_string(), t.attempt.to_string()),
            ("MR_JOB_PARAMS".to_string(), params_json),
        ];
        env.extend(x.cmdenv.iter().cloned());
        let killer = Killer::default();
        let guard = KillOnDrop(killer.clone());
        Ok((
            Attempt {
                x,
                workdir,
                killer,
                env,
            },
            guard,
        ))
    }

    /// [`Attempt::prepare`] for an external job's `code`; nothing for a
    /// built-in one. A plain function returning a `'static` future, so no
    /// borrow of `code` is held across the fetches (which tokio's spawn,
    /// wanting the attempt `Send` for any lifetime, cannot prove).
    pub fn for_code(
        runner: &Arc<TaskRunner>,
        code: &Code,
        params: &JobParams,
        t: TaskRef,
        job_dir: &std::path::Path,
    ) -> impl std::future::Future<Output = Result<(Option<Attempt>, Option<KillOnDrop>), Failure>>
           + Send
           + 'static {
        let x = match code {
            Code::External(x) => Some(x.clone()),
            Code::Builtin(_) => None,
        };
        let (runner, dir) = (runner.clone(), job_dir.to_path_buf());
        let json = mrjob::spec::params_to_json(params);
        let input = params.extra.get(keys::INPUT_FILE).cloned();
        async move {
            match x {
                None => Ok((None, None)),
                Some(x) => {
                    let (mut a, g) = Attempt::prepare(runner, x, json, t, dir).await?;
                    if let Some(f) = input {
                        // Hadoop Streaming's names for the map's input file.
                        a.env.push(("mapreduce_map_input_file".into(), f.clone()));
                        a.env.push(("map_input_file".into(), f));
                    }
                    Ok((Some(a), Some(g)))
                }
            }
        }
    }

    /// The child that runs `mode` of this job, or `None` where Streaming
    /// gave no command (identity reduce, no combiner).
    pub fn child(&self, mode: TaskMode) -> Option<Child> {
        let (mut command, shown, what) = match &self.x.run {
            Runs::Streaming {
                mapper,
                reducer,
                combiner,
            } => {
                let (cmd, what) = match mode {
                    TaskMode::Map => (Some(mapper), "mapper"),
                    TaskMode::Reduce => (reducer.as_ref(), "reducer"),
                    TaskMode::Combine => (combiner.as_ref(), "combiner"),
                    TaskMode::Describe => (None, ""),
                };
                let cmd = cmd?;
                let mut c = Command::new("sh");
                c.arg("-c").arg(cmd);
                (c, cmd.clone(), what.to_string())
            }
            Runs::Program { .. } if mode == TaskMode::Combine && !self.x.plan.has_combiner => {
                return None;
            }
            Runs::Program { path } => {
                let (_, name) = files::parse_shipped(path).ok()?;
                let c = Command::new(self.workdir.join(name));
                (c, name.to_string(), format!("program's {}", mode.as_str()))
            }
        };
        command
            .current_dir(&self.workdir)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("MR_TASK", mode.as_str());
        Some(Child {
            command,
            what,
            shown,
            protocol: self.x.protocol(),
            timeout: self.x.timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, &str)]) -> JobParams {
        let mut p = JobParams::default();
        for (k, v) in kv {
            p.extra.insert(k.to_string(), v.to_string());
        }
        p
    }

    #[test]
    fn decodes_streaming_and_programs_and_refuses_bad_specs() {
        assert!(External::decode(&params(&[]), "").unwrap().is_none());
        let sha = "a".repeat(64);
        let f = format!("/.mr/files/{sha}/m.py");
        let x = External::decode(
            &params(&[
                (keys::MAPPER, "python3 m.py"),
                (keys::FILES, &f),
                (keys::CMDENV, "A=1\nB=x=y"),
                (keys::TASK_TIMEOUT, "2.5"),
            ]),
            "",
        )
        .unwrap()
        .unwrap();
        assert!(matches!(x.run, Runs::Streaming { reducer: None, .. }));
        assert_eq!(x.files, vec![f.clone()]);
        assert_eq!(x.cmdenv[1], ("B".into(), "x=y".into()));
        assert_eq!(x.timeout, Duration::from_millis(2500));
        let p = External::decode(&params(&[(keys::PROGRAM, &f)]), "{}")
            .unwrap()
            .unwrap();
        assert_eq!(p.files, vec![f.clone()]);
        for bad in [
            vec![(keys::MAPPER, "cat"), (keys::PROGRAM, f.as_str())],
            vec![(keys::MAPPER, "cat"), (keys::CMDENV, "NOEQUALS")],
            vec![(keys::MAPPER, "cat"), (keys::TASK_TIMEOUT, "-1")],
            vec![(keys::MAPPER, "cat"), (keys::FILES, "/etc/passwd")],
        ] {
            assert!(External::decode(&params(&bad), "").is_err(), "{bad:?}");
        }
    }
}

//! Jobs users bring: Hadoop Streaming (`mr job run streaming --mapper CMD
//! ...`) and job programs built against the `mrjob` crate (`mr job run
//! program --program PATH ...`). The client ships their files into the
//! block store, named by content hash, and declares the job's plan, so the
//! master schedules it without its code and the workers fetch what they
//! run.

use anyhow::{bail, Context};
use common::shipped::{sha256_hex, valid_name, SHIPPED_DIR};
use mrjob::spec::keys;
use mrjob::{JobParams, JobPlan};
use rpc::dfs::{Dfs, PutOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `mr job run streaming|program` adds to a built-in job's flags.
#[derive(Debug, Clone, Default)]
pub struct UserJob {
    pub mapper: Option<String>,
    pub reducer: Option<String>,
    pub combiner: Option<String>,
    pub program: Option<PathBuf>,
    pub files: Vec<PathBuf>,
    pub cmdenv: Vec<String>,
    pub task_timeout: Option<f64>,
}

/// Checks the flags of job `name` and sets what they say in `params`; the
/// files to ship come back, the program's first.
pub fn prepare(name: &str, u: &UserJob, params: &mut JobParams) -> anyhow::Result<Vec<PathBuf>> {
    let streaming_flags = u.mapper.is_some() || u.reducer.is_some() || u.combiner.is_some();
    match name {
        "streaming" => {
            let Some(mapper) = &u.mapper else {
                bail!(
                    "a streaming job needs --mapper CMD (e.g. --mapper 'python3 m.py' --file m.py)"
                );
            };
            if u.program.is_some() {
                bail!("--program is for `mr job run program`, not streaming");
            }
            for (k, v) in [
                (keys::MAPPER, Some(mapper)),
                (keys::REDUCER, u.reducer.as_ref()),
                (keys::COMBINER, u.combiner.as_ref()),
            ] {
                if let Some(v) = v {
                    if v.trim().is_empty() {
                        bail!("an empty command for {k}");
                    }
                    params.extra.insert(k.into(), v.clone());
                }
            }
        }
        "program" => {
            if u.program.is_none() {
                bail!(
                    "a program job needs --program PATH (a binary built against the mrjob crate)"
                );
            }
            if streaming_flags {
                bail!("--mapper, --reducer and --combiner are for `mr job run streaming`");
            }
        }
        _ => {
            if streaming_flags || u.program.is_some() || !u.files.is_empty() || !u.cmdenv.is_empty()
            {
                bail!(
                    "--mapper, --reducer, --combiner, --program, --file and --cmdenv are for \
                     `mr job run streaming` and `mr job run program`, not the built-in {name}"
                );
            }
            return Ok(vec![]);
        }
    }
    for kv in &u.cmdenv {
        match kv.split_once('=') {
            Some((k, _)) if !k.is_empty() && !kv.contains('\n') => {}
            _ => bail!("--cmdenv {kv:?} is not NAME=VALUE"),
        }
    }
    if !u.cmdenv.is_empty() {
        params
            .extra
            .insert(keys::CMDENV.into(), u.cmdenv.join("\n"));
    }
    if let Some(t) = u.task_timeout {
        if !(t > 0.0 && t < 1e9) {
            bail!("--task-timeout {t}: a number of seconds above 0");
        }
        params
            .extra
            .insert(keys::TASK_TIMEOUT.into(), t.to_string());
    }
    let mut ship: Vec<PathBuf> = u.program.iter().cloned().collect();
    ship.extend(u.files.iter().cloned());
    let mut names = std::collections::HashSet::new();
    for f in &ship {
        let name = file_name(f)?;
        if !names.insert(name.to_string()) {
            bail!("two shipped files are named {name:?}: each lands in the task's working directory by its name");
        }
        let meta = std::fs::metadata(f).with_context(|| format!("{}", f.display()))?;
        if !meta.is_file() {
            bail!("{} is not a file", f.display());
        }
    }
    Ok(ship)
}

fn file_name(f: &Path) -> anyhow::Result<&str> {
    let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !valid_name(name) {
        bail!(
            "{}: a shipped file's name must be letters, digits, '.', '_', '-' or '+', not starting with '.'",
            f.display()
        );
    }
    Ok(name)
}

/// Puts `local` into the block store at its content-addressed path (once:
/// a path already there is the same bytes, which the workers check) and
/// returns that path.
pub async fn ship(dfs: &Dfs, local: &Path) -> anyhow::Result<String> {
    let name = file_name(local)?;
    let l = local.to_path_buf();
    let hash = tokio::task::spawn_blocking(move || sha256_hex(std::fs::File::open(&l)?))
        .await?
        .with_context(|| format!("reading {}", local.display()))?;
    let path = format!("{SHIPPED_DIR}/{hash}/{name}");
    if dfs.stat(&path).await.is_ok() {
        return Ok(path);
    }
    let f = tokio::fs::File::open(local)
        .await
        .with_context(|| format!("{}", local.display()))?;
    let put = dfs.put(&path, f, &PutOptions::default(), |_| {}).await;
    if let Err(e) = put {
        // Another client shipped the same bytes meanwhile.
        if dfs.stat(&path).await.is_err() {
            return Err(anyhow::Error::from(e).context(format!("shipping {}", local.display())));
        }
    }
    Ok(path)
}

/// Ships the files and records their paths in `params`; with `program`,
/// the first file's path also as the program.
pub async fn ship_all(
    dfs: &Dfs,
    program: bool,
    files: &[PathBuf],
    params: &mut JobParams,
) -> anyhow::Result<()> {
    let mut paths = Vec::new();
    for f in files {
        paths.push(ship(dfs, f).await?);
    }
    if program {
        let Some(first) = paths.first() else {
            bail!("a program job ships its program");
        };
        params.extra.insert(keys::PROGRAM.into(), first.clone());
    }
    if !paths.is_empty() {
        params.extra.insert(keys::FILES.into(), paths.join("\n"));
    }
    Ok(())
}

/// A Streaming job's plan: text lines in, lines out as the commands wrote
/// them, hash partitioning; no reducers, no reduce.
pub fn streaming_plan(reducers: u32, combiner: bool) -> JobPlan {
    JobPlan {
        output_format: mrjob::OutputFormat::Lines,
        map_only: reducers == 0,
        has_combiner: combiner,
        ..JobPlan::default()
    }
}

/// Asks job program `path` for its plan (`MR_TASK=describe`), as the
/// workers will run it: the plan and the job's name.
pub async fn describe(path: &Path, params: &JobParams) -> anyhow::Result<(JobPlan, String)> {
    let run = tokio::process::Command::new(path)
        .env("MR_TASK", "describe")
        .env("MR_JOB_PARAMS", mrjob::spec::params_to_json(params))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .with_context(|| format!("{} did not describe its job within 30 s", path.display()))?
        .with_context(|| format!("cannot run {}", path.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        // A program refusing its parameters says why on stderr; anything
        // else was not built against mrjob.
        bail!(
            "{}: asked for its plan (MR_TASK=describe), it {}: {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let plan = JobPlan::from_json(stdout.trim())
        .map_err(|e| anyhow::anyhow!("{}: not an mr job program's plan: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(stdout.trim())?;
    let name = v["name"].as_str().unwrap_or("program").to_string();
    Ok((plan, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streaming(mapper: Option<&str>) -> UserJob {
        UserJob {
            mapper: mapper.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn flags_are_checked_against_the_job() {
        let mut p = JobParams::default();
        assert!(prepare("streaming", &streaming(None), &mut p).is_err());
        assert!(prepare("wordcount", &streaming(Some("cat")), &mut p).is_err());
        assert!(prepare("program", &streaming(Some("cat")), &mut p).is_err());
        let mut u = streaming(Some("cat"));
        u.cmdenv = vec!["NOEQ".into()];
        assert!(prepare("streaming", &u, &mut p).is_err());
        u.cmdenv = vec!["A=1".into(), "B=2".into()];
        u.files = vec!["/nonexistent/m.py".into()];
        assert!(prepare("streaming", &u, &mut p).is_err());
        u.files = vec![];
        u.task_timeout = Some(5.0);
        assert!(prepare("streaming", &u, &mut p).unwrap().is_empty());
        assert_eq!(p.extra[keys::MAPPER], "cat");
        assert_eq!(p.extra[keys::CMDENV], "A=1\nB=2");
        assert_eq!(p.extra[keys::TASK_TIMEOUT], "5");
        assert!(file_name(Path::new("/x/.hidden")).is_err());
        assert!(file_name(Path::new("/x/a b.py")).is_err());
        assert_eq!(file_name(Path::new("/x/m.py")).unwrap(), "m.py");
    }
}

//! The client as a turmoil host, through the real DFS client: it writes the
//! input files (noting which puts were acknowledged), submits the job, polls
//! it to its end, waits for the run to heal the cluster and settle, then
//! reads back every file and the job's output for the checks.

use crate::cluster::Layout;
use crate::history::{self, note, JobEnd};
use crate::wordcount;
use bytes::Bytes;
use common::config::ClusterConfig;
use rpc::dfs::{Dfs, DfsError, PutOptions};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone)]
pub struct Spec {
    pub layout: Layout,
    pub cfg: ClusterConfig,
    pub history: history::Shared,
    pub seed: u64,
    pub files: usize,
    pub reducers: u32,
    /// Set by the run once every fault is healed.
    pub healed: Arc<Mutex<bool>>,
}

/// How long the client lets the healed cluster settle before reading:
/// expiry, re-registration and a few replication scans.
const SETTLE: Duration = Duration::from_secs(3);
const POLL: Duration = Duration::from_millis(100);

pub fn output_dir() -> &'static str {
    "/out/wc"
}

pub async fn run(spec: Spec) -> turmoil::Result {
    let dfs = Dfs::connect_with(&spec.cfg, crate::net::maker())?;
    let h = &spec.history;
    let mut rng = fastrand::Rng::with_seed(spec.seed ^ 0xC11E);
    // Let the workers register.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut inputs = Vec::new();
    for f in 0..spec.files {
        let path = format!("/in/f{f}");
        let n = rng.usize(1..4);
        let blocks = wordcount::gen_file(&mut rng, n);
        let all: Vec<u8> = blocks.iter().flat_map(|b| b.to_vec()).collect();
        h.lock()
            .unwrap()
            .intended
            .insert(path.clone(), Bytes::from(all));
        for attempt in 0..20 {
            match put(&dfs, &path, &blocks).await {
                Ok(()) => {
                    let mut hh = h.lock().unwrap();
                    hh.acked.push(path.clone());
                    hh.note(format!("client put {path}: acknowledged"));
                    inputs.push(path.clone());
                    break;
                }
                Err(e) => {
                    note(h, format!("client put {path} try {attempt}: {e}"));
                    if matches!(&e, DfsError::Rpc(s) if s.code() == tonic::Code::AlreadyExists) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
    let end = if inputs.is_empty() {
        JobEnd::Failed {
            id: 0,
            error: "no input file could be written".into(),
        }
    } else {
        run_job(&dfs, &spec, &inputs).await
    };
    note(h, format!("client: job ended {end:?}"));
    h.lock().unwrap().job_end = Some(end);
    while !*spec.healed.lock().unwrap() {
        tokio::time::sleep(POLL).await;
    }
    tokio::time::sleep(SETTLE).await;
    let paths: Vec<String> = h.lock().unwrap().intended.keys().cloned().collect();
    let mut read_back = std::collections::BTreeMap::new();
    for p in paths {
        read_back.insert(p.clone(), read(&dfs, &p).await);
    }
    let listing = match dfs
        .master()
        .list_files(proto::PathRequest {
            path: output_dir().into(),
        })
        .await
    {
        Ok(r) => r.into_inner().entries.into_iter().map(|e| e.path).collect(),
        Err(_) => vec![],
    };
    for p in &listing {
        read_back.insert(p.clone(), read(&dfs, p).await);
    }
    let mut hh = h.lock().unwrap();
    hh.read_back = read_back;
    hh.output_listing = listing;
    hh.client_done = true;
    hh.note("client done".into());
    Ok(())
}

/// Writes a file block by block (each block ends a line).
async fn put(dfs: &Dfs, path: &str, blocks: &[Bytes]) -> Result<(), DfsError> {
    let mut w = dfs.create(path, &PutOptions::default()).await?;
    for b in blocks {
        if let Err(e) = dfs.write_block_of(&mut w, b.clone()).await {
            dfs.abandon(w).await;
            return Err(e);
        }
    }
    dfs.complete(w).await.map(|_| ())
}

async fn read(dfs: &Dfs, path: &str) -> Result<Bytes, String> {
    let mut out: Vec<u8> = Vec::new();
    match dfs.get(path, &mut out, |_| {}).await {
        Ok(_) => Ok(out.into()),
        Err(e) => Err(e.to_string()),
    }
}

async fn run_job(dfs: &Dfs, spec: &Spec, inputs: &[String]) -> JobEnd {
    let h = &spec.history;
    let req = proto::SubmitJobRequest {
        job: wordcount::JOB.into(),
        inputs: inputs.to_vec(),
        output: output_dir().into(),
        reducers: spec.reducers,
        ..Default::default()
    };
    let mut id = None;
    for _ in 0..100 {
        match dfs.master().submit_job(req.clone()).await {
            Ok(r) => {
                id = Some(r.into_inner().job_id);
                break;
            }
            Err(e) => {
                note(h, format!("client submit: {e}"));
                // The job may have been accepted with the answer lost.
                if let Some(j) = find_job(dfs).await {
                    id = Some(j);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    let Some(id) = id else {
        return JobEnd::Failed {
            id: 0,
            error: "the job could not be submitted".into(),
        };
    };
    h.lock()
        .unwrap()
        .submissions
        .push((id, output_dir().to_string()));
    note(h, format!("client submitted job {id}"));
    loop {
        tokio::time::sleep(POLL).await;
        match dfs.master().get_job(proto::JobRequest { job_id: id }).await {
            Ok(r) => {
                let v: serde_json::Value =
                    serde_json::from_str(&r.into_inner().json).unwrap_or_default();
                let error = v["error"].as_str().unwrap_or("").to_string();
                match v["state"].as_str().unwrap_or("") {
                    "succeeded" => return JobEnd::Succeeded { id },
                    "failed" | "killed" => return JobEnd::Failed { id, error },
                    _ => {}
                }
            }
            Err(s) if s.code() == tonic::Code::NotFound => {
                return JobEnd::Vanished {
                    id,
                    status: s.message().to_string(),
                }
            }
            Err(_) => {}
        }
    }
}

async fn find_job(dfs: &Dfs) -> Option<u64> {
    let jobs = dfs.master().list_jobs(proto::Empty {}).await.ok()?;
    jobs.into_inner().json.iter().find_map(|j| {
        let v: serde_json::Value = serde_json::from_str(j).ok()?;
        (v["output"].as_str() == Some(output_dir())).then(|| v["job_id"].as_u64())?
    })
}

//! REST handlers: parse, take the lock, call one plain function on
//! `MasterState`, answer JSON. Read-only except job kill and the
//! scheduler switch; a job's details are its owner's and the admins'
//! (`jobs::owner`). Shapes are those of the CLI's `--json` where both
//! show the same thing (see `rpc::json` and `http/views.rs`).

use super::error::ApiError;
use super::{lock, views};
use crate::core::Shared;
use crate::error::MasterError;
use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use rpc::auth::{Identity, Role};
use serde::Deserialize;
use serde_json::Value;

type ApiResult = Result<Response, ApiError>;

fn json(v: Value) -> ApiResult {
    Ok(([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response())
}

fn id(raw: &str, what: &str) -> Result<u64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::BadRequest(format!("{what} id {raw:?} is not a number")))
}

#[tracing::instrument(level = "debug", skip_all)]
pub async fn workers(State(s): State<Shared>) -> ApiResult {
    json(views::workers(&lock(&s, "http_workers")))
}

/// `mr admin fsck --json`'s report (without its `healthy` summary field).
#[tracing::instrument(level = "debug", skip_all)]
pub async fn fsck(State(s): State<Shared>) -> ApiResult {
    let r = lock(&s, "http_fsck").blocks().fsck();
    json(serde_json::to_value(&r).unwrap_or_default())
}

#[tracing::instrument(level = "debug", skip_all)]
pub async fn jobs(State(s): State<Shared>, Extension(who): Extension<Identity>) -> ApiResult {
    let jobs = lock(&s, "http_jobs").jobs().list_jobs();
    json(
        jobs.into_iter()
            .map(|j| crate::jobs::owner::view_for(&who, j))
            .collect(),
    )
}

/// One job's details: its owner's and the admins' only (403 for others).
#[tracing::instrument(level = "debug", skip_all, fields(job = %raw))]
pub async fn job(
    State(s): State<Shared>,
    Extension(who): Extension<Identity>,
    Path(raw): Path<String>,
) -> ApiResult {
    let id = id(&raw, "job")?;
    json(job_detail(&s, &who, id)?)
}

/// `GET /api/jobs/{id}` (see `http/views.rs`), if `who` may see the job:
/// an earlier run's job's attempts are read from its history file once the
/// lock is released.
fn job_detail(state: &Shared, who: &Identity, id: u64) -> Result<Value, MasterError> {
    let (v, file) = {
        let s = lock(state, "http_job");
        crate::jobs::owner::may_see(who, &s.jobs().job_json(id)?, id)?;
        views::job_detail(&s, id, std::time::Instant::now())?
    };
    match file {
        Some(h) => Ok(views::with_history(v, &h.read()?)),
        None => Ok(v),
    }
}

#[tracing::instrument(skip_all, fields(job = %raw))]
pub async fn kill_job(
    State(s): State<Shared>,
    Extension(who): Extension<Identity>,
    Path(raw): Path<String>,
) -> ApiResult {
    let id = id(&raw, "job")?;
    tracing::info!(job = id, user = %who.name, "kill asked over HTTP");
    forbid(who.require(Role::User, "kill jobs"))?;
    let mut st = lock(&s, "http_kill_job");
    crate::jobs::owner::may_change(&who, &st.jobs().job_json(id)?, id)?;
    json(st.kill_job(id)?)
}

#[derive(Deserialize)]
pub struct PathQuery {
    /// A namespace path; the root when absent.
    path: Option<String>,
}

#[tracing::instrument(level = "debug", skip_all, fields(path = ?q.path))]
pub async fn files(
    State(s): State<Shared>,
    Extension(who): Extension<Identity>,
    Query(q): Query<PathQuery>,
) -> ApiResult {
    let path = q.path.as_deref().unwrap_or("/");
    let st = lock(&s, "http_files");
    let v = views::files(&st, path)?;
    st.blocks().may_read(path, &who)?;
    json(v)
}

#[tracing::instrument(level = "debug", skip_all, fields(path = ?q.path))]
pub async fn file(
    State(s): State<Shared>,
    Extension(who): Extension<Identity>,
    Query(q): Query<PathQuery>,
) -> ApiResult {
    let path = q
        .path
        .ok_or_else(|| ApiError::BadRequest("which file? add ?path=/some/file".into()))?;
    let st = lock(&s, "http_file");
    let v = views::file(&st, &path)?;
    st.blocks().may_read(&path, &who)?;
    json(v)
}

#[tracing::instrument(level = "debug", skip_all, fields(block = %raw))]
pub async fn block(State(s): State<Shared>, Path(raw): Path<String>) -> ApiResult {
    let id = id(&raw, "block")?;
    json(views::block(&lock(&s, "http_block"), id)?)
}

#[tracing::instrument(level = "debug", skip_all)]
pub async fn cache(State(s): State<Shared>) -> ApiResult {
    json(views::cache(&lock(&s, "http_cache")))
}

#[tracing::instrument(level = "debug", skip_all)]
pub async fn scheduler(State(s): State<Shared>) -> ApiResult {
    json(views::scheduler(&lock(&s, "http_scheduler")))
}

/// The body of a scheduler switch: `{"name": "delay", "params":
/// {"node_wait": 2}}`; parameter values may be strings or numbers, as in
/// `[scheduler.params]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerBody {
    /// A policy name, as `mr admin scheduler set` takes it.
    name: String,
    /// Its parameters; absent ones take the policy's defaults.
    #[serde(default)]
    params: serde_json::Map<String, Value>,
}

impl SchedulerBody {
    fn spec(self) -> Result<sched::SchedulerSpec, ApiError> {
        let mut params = std::collections::BTreeMap::new();
        for (k, v) in self.params {
            let v = match v {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => {
                    return Err(ApiError::BadRequest(format!(
                        "scheduler parameter {k} must be a string or a number, not {other}"
                    )))
                }
            };
            params.insert(k, v);
        }
        Ok(sched::SchedulerSpec {
            name: self.name,
            params,
        })
    }
}

#[tracing::instrument(skip_all)]
pub async fn set_scheduler(
    State(s): State<Shared>,
    Extension(who): Extension<Identity>,
    body: Bytes,
) -> ApiResult {
    forbid(who.require(Role::Admin, "change the scheduler"))?;
    let b: SchedulerBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadRequest(format!(
            "the body must be {{\"name\": POLICY, \"params\": {{KEY: VALUE}}}}: {e}"
        ))
    })?;
    let spec = b.spec()?;
    tracing::info!(scheduler = %spec.name, "scheduler switch asked over HTTP");
    crate::core::offlock::set_scheduler(&s, spec)?;
    json(views::scheduler(&lock(&s, "http_scheduler")))
}

pub async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::NotFound(format!(
        "no such endpoint: {}; see docs/web-ui.md",
        uri.path()
    ))
}

/// A role check's refusal as the REST API's 403.
fn forbid(r: std::result::Result<(), tonic::Status>) -> std::result::Result<(), ApiError> {
    r.map_err(|e| MasterError::PermissionDenied(e.message().to_string()).into())
}

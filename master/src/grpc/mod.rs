//! The master's edge: thin gRPC handlers that convert the request to the
//! domain types (`protocol::wire` for a worker's messages, `convert.rs`
//! for the rest), take the lock, call one plain function on
//! [`MasterState`], and convert the answer back. No logic lives here, and
//! no other module of the master but `http/` names a protobuf type.

pub mod convert;
pub mod tokens;

use crate::core::lock::Held;
use crate::core::Shared;
use crate::error::MasterError;
use common::blocktoken::Access;
use proto::master_server::{Master, MasterServer};
use proto::*;
use rpc::auth::{identity, Role, TokenCheck, Tokens};
use std::sync::Arc;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status};

impl From<MasterError> for Status {
    fn from(e: MasterError) -> Status {
        match e {
            MasterError::InvalidArgument(m) => Status::invalid_argument(m),
            MasterError::NotFound(m) => Status::not_found(m),
            MasterError::AlreadyExists(m) => Status::already_exists(m),
            MasterError::FailedPrecondition(m) => Status::failed_precondition(m),
            MasterError::Unavailable(m) => Status::unavailable(m),
            MasterError::PermissionDenied(m) => Status::permission_denied(m),
            MasterError::Io(e) => Status::internal(format!("master storage error: {e}")),
            MasterError::Storage(e) => Status::internal(format!("master storage error: {e}")),
        }
    }
}

/// The master's gRPC service over `state`, refusing calls without a known
/// token; each handler then checks the caller's role.
pub fn service(
    state: Shared,
    tokens: Tokens,
) -> InterceptedService<MasterServer<MasterService>, TokenCheck> {
    let keys = Arc::new(common::blocktoken::Minter::new(common::now_ms()));
    MasterServer::with_interceptor(
        MasterService { state, keys },
        TokenCheck::with_tokens(tokens),
    )
}

pub struct MasterService {
    pub state: Shared,
    /// Signs block access and shuffle tokens (see `tokens.rs`).
    pub keys: Arc<common::blocktoken::Minter>,
}

impl MasterService {
    fn lock(&self, site: &'static str) -> Held<'_> {
        crate::core::lock::lock(&self.state, site)
    }

    /// A worker's answer with its tokens signed, after the lock is released.
    fn reply(&self, mut r: HeartbeatResponse) -> Response<HeartbeatResponse> {
        tokens::sign_reply(&self.keys, &mut r, common::now_ms());
        Response::new(r)
    }
}

type Rpc<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl Master for MasterService {
    #[tracing::instrument(skip_all, fields(worker = %req.get_ref().name))]
    async fn register(&self, req: Request<RegisterRequest>) -> Rpc<RegisterResponse> {
        identity(&req).require_worker("register a worker")?;
        rpc::tls::check_peer_is(&req, &req.get_ref().name)?;
        let r = self
            .lock("register")
            .on_register(req.into_inner().into(), crate::now())?;
        let mut r: RegisterResponse = r.into();
        r.keys = Some(tokens::keys(&self.keys, common::now_ms()));
        Ok(Response::new(r))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(worker = %req.get_ref().name))]
    async fn heartbeat(&self, req: Request<HeartbeatRequest>) -> Rpc<HeartbeatResponse> {
        identity(&req).require_worker("heartbeat as a worker")?;
        rpc::tls::check_peer_is(&req, &req.get_ref().name)?;
        let r = self
            .lock("heartbeat")
            .on_heartbeat(req.into_inner().into(), crate::now());
        Ok(self.reply(r.into()))
    }

    #[tracing::instrument(skip_all, fields(worker = %req.get_ref().worker, block = req.get_ref().block_id))]
    async fn report_bad_block(&self, req: Request<ReportBadBlockRequest>) -> Rpc<Empty> {
        // Workers report the replicas their scans and reads found bad
        // (they hold the keys, as they hold the blocks); a client reports
        // the replicas it read, shown by its read token for the block
        // (without it, anyone could mark anyone's replicas corrupt).
        let who = identity(&req);
        if !who.worker {
            let r = req.get_ref();
            let now = common::now_ms();
            let check =
                self.keys
                    .check_block(&r.access_token, r.block_id, Access::Read, &who.name, now);
            check.map_err(|e| {
                tracing::warn!(user = %who.name, block = r.block_id, "bad-block report refused: {e}");
                Status::permission_denied(format!(
                    "permission denied: a report of a corrupt replica needs the read token the master gave with the block: {e}"
                ))
            })?;
        }
        let r = req.into_inner();
        self.lock("report_bad_block")
            .report_bad_block(&r.worker, r.block_id, &r.reason);
        Ok(Response::new(Empty {}))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn create_file(&self, req: Request<CreateFileRequest>) -> Rpc<CreateFileResponse> {
        let who = identity(&req);
        who.require(Role::User, "write files")?;
        let staging = common::path::DfsPath::parse_file(&req.get_ref().path)
            .is_ok_and(|p| crate::blocks::namespace::is_staging(p.as_str()));
        if staging && !who.worker {
            // A job's staging is written by its tasks, on workers: a user's
            // file there could make the job fail (issue 39).
            tracing::warn!(user = %who.name, path = %req.get_ref().path, "permission denied: staging is the workers'");
            return Err(Status::permission_denied(format!(
                "permission denied: user {:?} may not write {}: /_staging/ is written by the jobs' tasks only",
                who.name,
                req.get_ref().path
            )));
        }
        let mut create: crate::blocks::files::CreateFile = req.into_inner().into();
        let mut s = self.lock("create_file");
        s.blocks().may_create(&create.path, &who)?;
        if create.overwrite {
            s.blocks().may_delete(&create.path, &who)?;
            // A stale write of the path is recovered first: then replaced.
            s.blocks().may_recover(&create.path, &who)?;
        }
        create.owner = who.name;
        Ok(Response::new(s.create_file(create, crate::now())?.into()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(path = %req.get_ref().path))]
    async fn add_block(&self, req: Request<AddBlockRequest>) -> Rpc<AddBlockResponse> {
        let who = identity(&req);
        who.require(Role::User, "write files")?;
        let mut r: AddBlockResponse = self
            .lock("add_block")
            .add_block(req.into_inner().into(), crate::now())?
            .into();
        tokens::sign_new_block(&self.keys, &who.name, &mut r, common::now_ms());
        Ok(Response::new(r))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn complete_file(&self, req: Request<CompleteFileRequest>) -> Rpc<Empty> {
        identity(&req).require(Role::User, "write files")?;
        self.lock("complete_file")
            .complete_file(req.into_inner().into())?;
        Ok(Response::new(Empty {}))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn abandon_file(&self, req: Request<AbandonFileRequest>) -> Rpc<Empty> {
        identity(&req).require(Role::User, "write files")?;
        let r = req.into_inner();
        self.lock("abandon_file").abandon_file(&r.path, r.lease)?;
        Ok(Response::new(Empty {}))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(path = %req.get_ref().path))]
    async fn renew_lease(&self, req: Request<AbandonFileRequest>) -> Rpc<Empty> {
        identity(&req).require(Role::User, "write files")?;
        let r = req.into_inner();
        self.lock("renew_lease")
            .renew_lease(&r.path, r.lease, crate::now())?;
        Ok(Response::new(Empty {}))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(path = %req.get_ref().path))]
    async fn get_file(&self, req: Request<PathRequest>) -> Rpc<FileStatus> {
        let mut f: FileStatus = {
            let s = self.lock("get_file");
            let f = s.blocks().file_status(&req.get_ref().path, s.cluster())?;
            // The read tokens are the file's bytes: its `r` bit decides.
            s.blocks().may_read(&f.path, &identity(&req))?;
            f
        }
        .into();
        tokens::sign_file(&self.keys, &identity(&req).name, &mut f, common::now_ms());
        Ok(Response::new(f))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(path = %req.get_ref().path))]
    async fn list_files(&self, req: Request<PathRequest>) -> Rpc<ListFilesResponse> {
        let s = self.lock("list_files");
        let entries = s.blocks().list(&req.get_ref().path)?;
        s.blocks().may_read(&req.get_ref().path, &identity(&req))?;
        drop(s);
        let entries = convert_all(entries);
        Ok(Response::new(ListFilesResponse { entries }))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn delete_file(&self, req: Request<PathRequest>) -> Rpc<DeleteFileResponse> {
        let who = identity(&req);
        who.require(Role::User, "delete files")?;
        let mut s = self.lock("delete_file");
        s.blocks().may_delete(&req.get_ref().path, &who)?;
        let files_deleted = s.delete(&req.get_ref().path)?;
        Ok(Response::new(DeleteFileResponse { files_deleted }))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn mkdir(&self, req: Request<MkdirRequest>) -> Rpc<Empty> {
        let who = identity(&req);
        who.require(Role::User, "make directories")?;
        let r = req.into_inner();
        let mode = match r.mode {
            0 => crate::blocks::namespace::DIR_MODE,
            m => m,
        };
        let mut s = self.lock("mkdir");
        s.blocks().may_create(&r.path, &who)?;
        s.mkdir(&r.path, &who.name, mode)?;
        Ok(Response::new(Empty {}))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn set_attr(&self, req: Request<SetAttrRequest>) -> Rpc<Empty> {
        let who = identity(&req);
        let r = req.into_inner();
        if !r.owner.is_empty() {
            // HDFS: only the superuser gives a path away.
            who.require(Role::Admin, "change owners")?;
        } else {
            who.require(Role::User, "change modes")?;
        }
        let mut s = self.lock("set_attr");
        if r.has_mode {
            s.blocks().may_set_mode(&r.path, &who)?;
        }
        let owner = (!r.owner.is_empty()).then_some(r.owner);
        s.set_attr(&r.path, owner, r.has_mode.then_some(r.mode))?;
        Ok(Response::new(Empty {}))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path, cache = req.get_ref().cache))]
    async fn cache_file(&self, req: Request<CacheFileRequest>) -> Rpc<CacheFileResponse> {
        identity(&req).require(Role::Admin, "pin or unpin files in the cache")?;
        let r = req.into_inner();
        Ok(Response::new(
            self.lock("cache_file").cache_file(&r.path, r.cache)?.into(),
        ))
    }

    #[tracing::instrument(skip_all, fields(bytes = req.get_ref().bytes, worker = %req.get_ref().worker))]
    async fn set_cache_capacity(
        &self,
        req: Request<CacheCapacityRequest>,
    ) -> Rpc<CacheCapacityResponse> {
        identity(&req).require(Role::Admin, "resize caches")?;
        let r = req.into_inner();
        let workers = self
            .lock("set_cache_capacity")
            .set_cache_capacity(r.bytes, &r.worker)?;
        Ok(Response::new(CacheCapacityResponse { workers }))
    }

    #[tracing::instrument(skip_all, fields(job = %req.get_ref().job))]
    async fn submit_job(&self, req: Request<SubmitJobRequest>) -> Rpc<SubmitJobResponse> {
        let who = identity(&req);
        who.require(Role::User, "submit jobs")?;
        let mut job: crate::jobs::submit::SubmitJob = req.into_inner().into();
        job.owner = who.name.clone();
        let job_id = crate::core::offlock::submit_job(&self.state, &who, job)?;
        Ok(Response::new(SubmitJobResponse { job_id }))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id))]
    async fn get_job(&self, req: Request<JobRequest>) -> Rpc<JobJson> {
        let id = req.get_ref().job_id;
        let v = self.lock("get_job").jobs().job_json(id)?;
        crate::jobs::owner::may_see(&identity(&req), &v, id)?;
        Ok(Response::new(JobJson {
            json: v.to_string(),
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list_jobs(&self, req: Request<Empty>) -> Rpc<JobList> {
        let who = identity(&req);
        let json = self
            .lock("list_jobs")
            .jobs()
            .list_jobs()
            .into_iter()
            .map(|v| crate::jobs::owner::view_for(&who, v).to_string())
            .collect();
        Ok(Response::new(JobList { json }))
    }

    #[tracing::instrument(skip_all, fields(job = req.get_ref().job_id))]
    async fn kill_job(&self, req: Request<JobRequest>) -> Rpc<JobJson> {
        let who = identity(&req);
        who.require(Role::User, "kill jobs")?;
        let id = req.get_ref().job_id;
        let mut s = self.lock("kill_job");
        crate::jobs::owner::may_change(&who, &s.jobs().job_json(id)?, id)?;
        let v = s.kill_job(id)?;
        Ok(Response::new(JobJson {
            json: v.to_string(),
        }))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id))]
    async fn job_history(&self, req: Request<JobRequest>) -> Rpc<JobList> {
        let id = req.get_ref().job_id;
        let json = crate::core::offlock::job_history(&self.state, &identity(&req), id)?;
        Ok(Response::new(JobList { json }))
    }

    #[tracing::instrument(skip_all, fields(name = %req.get_ref().name))]
    async fn set_scheduler(&self, req: Request<SchedulerRequest>) -> Rpc<SchedulerResponse> {
        identity(&req).require(Role::Admin, "change the scheduler")?;
        let r = req.into_inner();
        let spec = sched::SchedulerSpec {
            name: r.name,
            params: r.params.into_iter().collect(),
        };
        let spec = crate::core::offlock::set_scheduler(&self.state, spec)?;
        Ok(Response::new(SchedulerResponse {
            name: spec.name,
            params: spec.params.into_iter().collect(),
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn get_scheduler(&self, _req: Request<Empty>) -> Rpc<SchedulerResponse> {
        let s = self.lock("get_scheduler");
        let spec = s.jobs().scheduler_spec();
        Ok(Response::new(SchedulerResponse {
            name: spec.name.clone(),
            params: spec.params.clone().into_iter().collect(),
        }))
    }

    #[tracing::instrument(skip_all, fields(worker = %req.get_ref().worker))]
    async fn task_update(&self, req: Request<TaskUpdateRequest>) -> Rpc<HeartbeatResponse> {
        identity(&req).require_worker("report tasks")?;
        rpc::tls::check_peer_is(&req, &req.get_ref().worker)?;
        let report = protocol::TaskReport::try_from(req.into_inner())
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let r = self
            .lock("task_update")
            .on_task_report(report, crate::now());
        Ok(self.reply(r.into()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(worker = %req.get_ref().name))]
    async fn await_commands(&self, req: Request<WorkerPoll>) -> Rpc<CommandsReady> {
        identity(&req).require_worker("poll for a worker's commands")?;
        rpc::tls::check_peer_is(&req, &req.get_ref().name)?;
        let r = req.into_inner();
        let wait = std::time::Duration::from_millis(r.wait_ms);
        let ready = crate::core::wait::await_commands(&self.state, &r.name, r.epoch, wait).await;
        let poll = match ready {
            Some(true) => protocol::Poll::Ready,
            Some(false) => protocol::Poll::Idle,
            None => protocol::Poll::Reregister,
        };
        Ok(Response::new(poll.into()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(worker = %req.get_ref().name))]
    async fn take_commands(&self, req: Request<WorkerPoll>) -> Rpc<HeartbeatResponse> {
        identity(&req).require_worker("take a worker's commands")?;
        rpc::tls::check_peer_is(&req, &req.get_ref().name)?;
        let r = req.into_inner();
        let reply = self.lock("take_commands").take_commands(&r.name, r.epoch);
        Ok(self.reply(reply.into()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(job = req.get_ref().job_id))]
    async fn wait_job(&self, req: Request<WaitJobRequest>) -> Rpc<JobJson> {
        let id = req.get_ref().job_id;
        let job = self.lock("wait_job").jobs().job_json(id)?;
        crate::jobs::owner::may_see(&identity(&req), &job, id)?;
        let r = req.into_inner();
        let wait = std::time::Duration::from_millis(r.wait_ms);
        let v = crate::core::wait::wait_job(&self.state, r.job_id, wait).await?;
        Ok(Response::new(JobJson {
            json: v.to_string(),
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn cluster_status(&self, _req: Request<Empty>) -> Rpc<ClusterStatusResponse> {
        Ok(Response::new(
            self.lock("cluster_status").cluster_status().into(),
        ))
    }

    #[tracing::instrument(skip_all, fields(action = %req.get_ref().action))]
    async fn safe_mode(&self, req: Request<SafeModeRequest>) -> Rpc<SafeModeResponse> {
        let who = identity(&req);
        let action: crate::core::SafeModeAction = req.into_inner().try_into()?;
        if !matches!(action, crate::core::SafeModeAction::Get) {
            who.require(Role::Admin, "enter or leave safe mode")?;
        }
        Ok(Response::new(
            self.lock("safe_mode")
                .safe_mode(action, crate::now())
                .into(),
        ))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn fsck(&self, _req: Request<Empty>) -> Rpc<FsckResponse> {
        Ok(Response::new(self.lock("fsck").blocks().fsck().into()))
    }

    #[tracing::instrument(skip_all, fields(path = %req.get_ref().path))]
    async fn recover_lease(&self, req: Request<PathRequest>) -> Rpc<RecoverLeaseResponse> {
        let who = identity(&req);
        who.require(Role::User, "recover leases")?;
        let mut s = self.lock("recover_lease");
        s.blocks().may_recover(&req.get_ref().path, &who)?;
        Ok(Response::new(
            s.recover_lease(&req.get_ref().path, crate::now())?.into(),
        ))
    }

    #[tracing::instrument(skip_all, fields(worker = %req.get_ref().worker))]
    async fn decommission(&self, req: Request<DecommissionRequest>) -> Rpc<DecommissionResponse> {
        identity(&req).require(Role::Admin, "decommission workers")?;
        let w = req.into_inner().worker;
        let d = self
            .lock("decommission")
            .decommission(&w, true, crate::now())?;
        Ok(Response::new(d.into()))
    }

    #[tracing::instrument(skip_all, fields(worker = %req.get_ref().worker))]
    async fn recommission(&self, req: Request<DecommissionRequest>) -> Rpc<DecommissionResponse> {
        identity(&req).require(Role::Admin, "recommission workers")?;
        let w = req.into_inner().worker;
        let d = self
            .lock("recommission")
            .decommission(&w, false, crate::now())?;
        Ok(Response::new(d.into()))
    }
}

fn convert_all<A, B: From<A>>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(B::from).collect()
}

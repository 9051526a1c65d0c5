//! Users and roles against a real master (in-process, on ports the OS
//! chose), over gRPC and REST: what each role may do and what it is
//! refused, job owners and their pools, and the workers' identity, which no
//! user token can take.

mod support;

use serde_json::Value;
use support::request;
use tonic::Code;

const ADMIN: &str = "adm-token";
const WORKER: &str = "wrk-token";
const ANN: &str = "ann-token";
const BOB: &str = "bob-token";
const ROB: &str = "rob-token";

struct Master {
    grpc: std::net::SocketAddr,
    http: std::net::SocketAddr,
    dir: std::path::PathBuf,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Drop for Master {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn start(name: &str) -> Master {
    start_with(name, false).await.0
}

/// The master, and with `tls` the cluster file (certificates written
/// beside it) that its clients load.
async fn start_with(name: &str, tls: bool) -> (Master, common::config::ClusterConfig) {
    let dir = std::env::temp_dir().join(format!("mr-roles-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let grpc_l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http_l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (grpc, http) = (grpc_l.local_addr().unwrap(), http_l.local_addr().unwrap());
    let toml = format!(
        "token = \"{ADMIN}\"\nworker_token = \"{WORKER}\"\n\n\
         [master]\naddr = \"{grpc}\"\nhttp_addr = \"{http}\"\ndata_dir = \"{}\"\n\n\
         [dfs]\nblock_size = \"256KiB\"\nreplication = 1\n\n\
         [[workers]]\nname = \"w1\"\naddr = \"127.0.0.1:1\"\nmap_slots = 1\nreduce_slots = 1\n\
         cache = \"1MiB\"\ndata_dir = \"{}\"\n\n\
         [[workers]]\nname = \"w2\"\naddr = \"127.0.0.1:2\"\nmap_slots = 1\nreduce_slots = 1\n\
         cache = \"1MiB\"\ndata_dir = \"{}\"\n\n\
         [[users]]\nname = \"ann\"\ntoken = \"{ANN}\"\nrole = \"user\"\n\
         [[users]]\nname = \"bob\"\ntoken = \"{BOB}\"\nrole = \"user\"\n\
         [[users]]\nname = \"rob\"\ntoken = \"{ROB}\"\nrole = \"reader\"\n",
        dir.join("master").display(),
        dir.join("w1").display(),
        dir.join("w2").display(),
    );
    let mut cfg = common::config::ClusterConfig::parse(&toml).unwrap();
    if tls {
        cli::certs::write_cluster_certs(&cfg, &dir.join("tls"), &dir.join("ca.key"), &[]).unwrap();
        let file = dir.join("cluster.toml");
        std::fs::write(
            &file,
            format!("{toml}\n[tls]\nca = \"tls/ca.pem\"\ndir = \"tls\"\n"),
        )
        .unwrap();
        cfg = common::config::ClusterConfig::load(&file).unwrap();
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(master::run_with_http(
        cfg.clone(),
        grpc_l,
        Some(http_l),
        async {
            let _ = stopped.await;
        },
    ));
    let m = Master {
        grpc,
        http,
        dir,
        _stop: stop,
    };
    (m, cfg)
}

/// A connection per role: the admin, two users and a reader.
struct Conns {
    adm: rpc::dfs::MasterConn,
    ann: rpc::dfs::MasterConn,
    bob: rpc::dfs::MasterConn,
    rob: rpc::dfs::MasterConn,
}

fn conn(m: &Master, token: &str) -> rpc::dfs::MasterConn {
    rpc::dfs::master_conn(&m.grpc.to_string(), token).unwrap()
}

fn code<T: std::fmt::Debug>(r: Result<tonic::Response<T>, tonic::Status>) -> Code {
    match r {
        Ok(_) => Code::Ok,
        Err(s) => s.code(),
    }
}

/// RandomTextWriter's plan, as the client declares it.
fn generator_plan() -> String {
    mrjob::JobPlan {
        input_format: mrjob::InputFormat::Generated,
        output_format: mrjob::OutputFormat::KeyLines,
        map_only: true,
        ..Default::default()
    }
    .to_json()
}

fn generator(output: &str, queue: &str) -> proto::SubmitJobRequest {
    let params = mrjob::JobParams {
        maps: 1,
        size: 1000,
        ..Default::default()
    };
    proto::SubmitJobRequest {
        job: "randomtextwriter".into(),
        output: output.into(),
        reducers: 0,
        params_json: mrjob::spec::params_to_json(&params),
        plan_json: generator_plan(),
        queue: queue.into(),
        ..Default::default()
    }
}

fn register(name: &str) -> proto::RegisterRequest {
    proto::RegisterRequest {
        protocol_version: common::PROTOCOL_VERSION,
        name: name.into(),
        addr: "127.0.0.1:1".into(),
        rack: "r1".into(),
        map_slots: 1,
        reduce_slots: 1,
        cache_capacity_bytes: 1 << 20,
        ..Default::default()
    }
}

fn job(list: &proto::JobList, id: u64) -> Value {
    list.json
        .iter()
        .map(|j| serde_json::from_str::<Value>(j).unwrap())
        .find(|j| j["job_id"] == id)
        .unwrap_or_else(|| panic!("job {id} listed"))
}

/// Only the workers' token may act as a worker: neither a user's nor, once
/// `worker_token` is set, the admin's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_token_cannot_register_a_worker() {
    let m = start("register").await;
    for t in [ANN, ROB, ADMIN] {
        let e = conn(&m, t).register(register("w1")).await.unwrap_err();
        assert_eq!(e.code(), Code::PermissionDenied, "{t}: {e:?}");
        assert!(e.message().contains("worker"), "{}", e.message());
        let hb = conn(&m, t)
            .take_commands(proto::WorkerPoll {
                name: "w1".into(),
                ..Default::default()
            })
            .await;
        assert_eq!(code(hb), Code::PermissionDenied, "{t} takes w1's commands");
    }
    let ok = conn(&m, WORKER).register(register("w1")).await;
    assert_eq!(code(ok), Code::Ok);
}

/// Under TLS a worker's calls must come with its own certificate: w2's
/// key, even with the workers' token, cannot register as w1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_certificate_names_the_worker_it_registers_as() {
    let (m, cfg) = start_with("tls", true).await;
    let as_process = |me: &str| {
        let mut c = cfg.clone();
        c.tls.as_mut().unwrap().me = me.into();
        let tls = rpc::tls::client_config(&c).unwrap().unwrap();
        let ch = rpc::dfs::endpoint(&m.grpc.to_string(), Some(&tls))
            .unwrap()
            .connect_lazy();
        rpc::dfs::master_conn_on(ch, WORKER).unwrap()
    };
    for (me, name) in [("w2", "w1"), ("client", "w1"), ("master", "w2")] {
        let e = as_process(me).register(register(name)).await.unwrap_err();
        assert_eq!(e.code(), Code::PermissionDenied, "{me} as {name}: {e:?}");
        assert!(e.message().contains("certificate"), "{}", e.message());
    }
    let e = as_process("w2")
        .take_commands(proto::WorkerPoll {
            name: "w1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    for name in ["w1", "w2"] {
        let ok = as_process(name).register(register(name)).await;
        assert_eq!(code(ok), Code::Ok, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_role_over_grpc() {
    let m = start("grpc").await;
    let mut r = Conns {
        adm: conn(&m, ADMIN),
        ann: conn(&m, ANN),
        bob: conn(&m, BOB),
        rob: conn(&m, ROB),
    };
    reader_changes_nothing(&mut r).await;
    let (a1, a2) = users_own_what_they_make(&mut r).await;
    users_change_only_their_own(&mut r, a1).await;
    leases_are_the_writers(&mut r).await;
    owners_and_the_admin_act(&mut r, (a1, a2)).await;
}

async fn reader_changes_nothing(r: &mut Conns) {
    let Conns { rob, .. } = r;
    // A reader reads, and changes nothing.
    assert_eq!(code(rob.list_jobs(proto::Empty {}).await), Code::Ok);
    assert_eq!(code(rob.cluster_status(proto::Empty {}).await), Code::Ok);
    assert_eq!(code(rob.get_scheduler(proto::Empty {}).await), Code::Ok);
    let e = rob.submit_job(generator("/r/out", "")).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(e.message().contains("\"rob\""), "{}", e.message());
    let create = proto::CreateFileRequest {
        path: "/r/f".into(),
        ..Default::default()
    };
    assert_eq!(
        code(rob.create_file(create.clone()).await),
        Code::PermissionDenied
    );
    let del = proto::PathRequest { path: "/x".into() };
    assert_eq!(code(rob.delete_file(del).await), Code::PermissionDenied);
}

/// A user writes files and submits jobs, owned by them; returns ann's two
/// jobs.
async fn users_own_what_they_make(r: &mut Conns) -> (u64, u64) {
    let Conns { ann, bob, rob, .. } = r;
    let create = proto::CreateFileRequest {
        path: "/r/f".into(),
        ..Default::default()
    };
    // A user writes files, owned by them; another user may neither delete
    // nor overwrite them.
    let lease = ann
        .create_file(create.clone())
        .await
        .unwrap()
        .into_inner()
        .lease;
    let done = proto::CompleteFileRequest {
        path: "/r/f".into(),
        lease,
        blocks: vec![],
    };
    assert_eq!(code(ann.complete_file(done).await), Code::Ok);
    let f = rob
        .get_file(proto::PathRequest {
            path: "/r/f".into(),
        })
        .await;
    assert_eq!(f.unwrap().into_inner().owner, "ann");
    let e = bob
        .delete_file(proto::PathRequest { path: "/r".into() })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(
        e.message().contains("/r/f belongs to \"ann\""),
        "{}",
        e.message()
    );
    let overwrite = proto::CreateFileRequest {
        overwrite: true,
        ..create.clone()
    };
    assert_eq!(
        code(bob.create_file(overwrite).await),
        Code::PermissionDenied
    );
    // A user submits jobs, owned by them, in their pool.
    let a1 = ann
        .submit_job(generator("/a/1", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let a2 = ann
        .submit_job(generator("/a/2", "night"))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let list = rob.list_jobs(proto::Empty {}).await.unwrap().into_inner();
    let j1 = job(&list, a1);
    assert_eq!(
        (j1["owner"].as_str(), j1["queue"].as_str()),
        (Some("ann"), Some("ann"))
    );
    let j2 = job(&list, a2);
    assert_eq!(
        (j2["owner"].as_str(), j2["queue"].as_str()),
        (Some("ann"), Some("night"))
    );
    (a1, a2)
}

/// A user changes neither another's job, the scheduler, caches nor safe
/// mode.
async fn users_change_only_their_own(r: &mut Conns, a1: u64) {
    let Conns { ann, bob, rob, .. } = r;
    // ...but not another's job, the scheduler, caches or safe mode.
    let e = bob
        .kill_job(proto::JobRequest { job_id: a1 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(
        e.message().contains("belongs to \"ann\""),
        "{}",
        e.message()
    );
    assert_eq!(
        code(rob.kill_job(proto::JobRequest { job_id: a1 }).await),
        Code::PermissionDenied
    );
    let fair = proto::SchedulerRequest {
        name: "fair".into(),
        ..Default::default()
    };
    let e = ann.set_scheduler(fair.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(
        e.message().contains("change the scheduler"),
        "{}",
        e.message()
    );
    let resize = proto::CacheCapacityRequest {
        bytes: 1 << 20,
        ..Default::default()
    };
    assert_eq!(
        code(ann.set_cache_capacity(resize).await),
        Code::PermissionDenied
    );
    let pin = proto::CacheFileRequest {
        path: "/r/f".into(),
        cache: true,
    };
    assert_eq!(code(ann.cache_file(pin).await), Code::PermissionDenied);
    let enter = proto::SafeModeRequest {
        action: "enter".into(),
    };
    assert_eq!(code(ann.safe_mode(enter).await), Code::PermissionDenied);
    let get = proto::SafeModeRequest {
        action: "get".into(),
    };
    assert_eq!(code(rob.safe_mode(get).await), Code::Ok);
    assert_eq!(code(rob.fsck(proto::Empty {}).await), Code::Ok);
}

async fn leases_are_the_writers(r: &mut Conns) {
    let Conns { adm, ann, bob, rob } = r;
    // A write's lease is recovered by its writer or the admin only: nobody
    // else publishes or, by an overwrite, replaces another's partial file.
    let open = proto::CreateFileRequest {
        path: "/r/open".into(),
        ..Default::default()
    };
    ann.create_file(open.clone()).await.unwrap();
    let recover = proto::PathRequest {
        path: "/r/open".into(),
    };
    let e = bob.recover_lease(recover.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied);
    assert!(
        e.message().contains("being written by \"ann\""),
        "{}",
        e.message()
    );
    assert_eq!(
        code(rob.recover_lease(recover.clone()).await),
        Code::PermissionDenied
    );
    let take_over = proto::CreateFileRequest {
        overwrite: true,
        ..open.clone()
    };
    assert_eq!(
        code(bob.create_file(take_over).await),
        Code::PermissionDenied
    );
    let r = ann
        .recover_lease(recover.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!((r.outcome.as_str(), r.holder.as_str()), ("removed", "ann"));
    ann.create_file(open).await.unwrap();
    let r = adm.recover_lease(recover).await.unwrap().into_inner();
    assert_eq!(r.outcome, "removed");
}

async fn owners_and_the_admin_act(r: &mut Conns, (a1, a2): (u64, u64)) {
    let Conns { adm, ann, rob, .. } = r;
    let fair = proto::SchedulerRequest {
        name: "fair".into(),
        ..Default::default()
    };
    // The owner deletes their own files; the owner kills their own job; the
    // admin kills anyone's and sets the scheduler.
    let del = proto::PathRequest {
        path: "/r/f".into(),
    };
    assert_eq!(code(ann.delete_file(del).await), Code::Ok);
    assert_eq!(
        code(ann.kill_job(proto::JobRequest { job_id: a1 }).await),
        Code::Ok
    );
    assert_eq!(
        code(adm.kill_job(proto::JobRequest { job_id: a2 }).await),
        Code::Ok
    );
    assert_eq!(code(adm.set_scheduler(fair).await), Code::Ok);
    // The admin's jobs are the admin's, in the admin's pool.
    let a3 = adm
        .submit_job(generator("/adm/1", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let list = rob.list_jobs(proto::Empty {}).await.unwrap().into_inner();
    assert_eq!(job(&list, a3)["owner"], "admin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_role_over_rest() {
    let m = start("rest").await;
    let mut ann = conn(&m, ANN);
    let a1 = ann
        .submit_job(generator("/a/1", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let a2 = ann
        .submit_job(generator("/a/2", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let kill = |id: u64| format!("/api/jobs/{id}/kill");

    // Every role reads the list, and sees the owner.
    for t in [ADMIN, ANN, BOB, ROB] {
        let r = request(m.http, "GET", "/api/jobs", Some(t), None).await;
        assert_eq!(r.status, 200, "{t}: {}", r.body);
        let jobs = r.json();
        let j = jobs
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job_id"] == a1)
            .unwrap();
        assert_eq!(j["owner"], "ann");
    }
    // Refused: another's job, by a user or a reader; the scheduler, by a user.
    for t in [BOB, ROB] {
        let r = request(m.http, "POST", &kill(a1), Some(t), Some("{}")).await;
        assert_eq!(r.status, 403, "{t}: {}", r.body);
        assert!(r.json()["error"]
            .as_str()
            .unwrap()
            .contains("permission denied"));
    }
    let body = r#"{"name": "fair"}"#;
    for t in [ANN, ROB] {
        let r = request(m.http, "PUT", "/api/scheduler", Some(t), Some(body)).await;
        assert_eq!(r.status, 403, "{t}: {}", r.body);
    }
    let r = request(m.http, "GET", "/api/scheduler", Some(ANN), None).await;
    assert_eq!(r.json()["name"], "fifo", "a refused switch changed nothing");
    // Allowed: the owner's kill, the admin's kill and switch.
    let r = request(m.http, "POST", &kill(a1), Some(ANN), Some("{}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = request(m.http, "POST", &kill(a2), Some(ADMIN), Some("{}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = request(m.http, "PUT", "/api/scheduler", Some(ADMIN), Some(body)).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

/// The keys of a job object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn summary_keys() -> Vec<String> {
    let mut k: Vec<String> = master::jobs::owner::SUMMARY_FIELDS
        .iter()
        .map(|s| s.to_string())
        .collect();
    k.sort();
    k
}

/// What each role's list shows of a job: the owner and the admin all of
/// it, anyone else its summary, with no path, counter or error in it.
fn assert_view(j: &Value, full: bool, who: &str) {
    assert_eq!(j["owner"], "ann", "{who}");
    if full {
        for k in ["output", "input", "counters", "bytes", "locality", "error"] {
            assert!(
                j.get(k).is_some(),
                "{who} sees ann's job in full, with {k}: {j}"
            );
        }
        assert_eq!(j["output"], "/a/1");
    } else {
        assert_eq!(keys(j), summary_keys(), "{who} sees only the summary");
        for k in ["output", "input", "counters", "error", "tasks"] {
            assert!(j.get(k).is_none(), "{who} sees {k} of ann's job: {j}");
        }
        assert!(j["progress"]["maps_done"].is_u64(), "{who}: progress {j}");
        assert_eq!(
            (j["maps"].as_u64(), j["state"].as_str()),
            (Some(1), Some("queued"))
        );
    }
}

/// A job's details are its owner's and the admins': lists summarise
/// others' jobs, a request for one of them (status, wait, history) is
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn others_see_a_jobs_summary_and_never_its_details_over_grpc() {
    let m = start("see-grpc").await;
    let (mut adm, mut ann, mut bob, mut rob) =
        (conn(&m, ADMIN), conn(&m, ANN), conn(&m, BOB), conn(&m, ROB));
    let a1 = ann
        .submit_job(generator("/a/1", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    let b1 = bob
        .submit_job(generator("/b/1", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    for (name, c, full) in [
        ("admin", &mut adm, true),
        ("ann", &mut ann, true),
        ("bob", &mut bob, false),
        ("rob", &mut rob, false),
    ] {
        let list = c.list_jobs(proto::Empty {}).await.unwrap().into_inner();
        assert_view(&job(&list, a1), full, name);
        let get = c.get_job(proto::JobRequest { job_id: a1 }).await;
        let wait = c
            .wait_job(proto::WaitJobRequest {
                job_id: a1,
                wait_ms: 1,
            })
            .await;
        if full {
            let v: Value = serde_json::from_str(&get.unwrap().into_inner().json).unwrap();
            assert_view(&v, true, name);
            let v: Value = serde_json::from_str(&wait.unwrap().into_inner().json).unwrap();
            assert_eq!(v["output"], "/a/1", "{name} waits for ann's job");
        } else {
            let e = get.unwrap_err();
            assert_eq!(e.code(), Code::PermissionDenied, "{name}: {e:?}");
            assert!(
                e.message()
                    .contains(&format!("job {a1} belongs to \"ann\"; user \"{name}\"")),
                "{}",
                e.message()
            );
            assert_eq!(code(wait), Code::PermissionDenied, "{name} waits");
        }
    }
    // Bob's own job is his in full.
    let list = bob.list_jobs(proto::Empty {}).await.unwrap().into_inner();
    assert_eq!(job(&list, b1)["output"], "/b/1");
    // A job's history, once it has one: the owner's and the admin's only.
    assert_eq!(
        code(ann.kill_job(proto::JobRequest { job_id: a1 }).await),
        Code::Ok
    );
    for (name, c, ok) in [
        ("admin", &mut adm, true),
        ("ann", &mut ann, true),
        ("bob", &mut bob, false),
        ("rob", &mut rob, false),
    ] {
        let h = c.job_history(proto::JobRequest { job_id: a1 }).await;
        if ok {
            let lines = h.unwrap().into_inner().json;
            assert!(
                lines.last().unwrap().contains("\"/a/1\""),
                "{name}: {lines:?}"
            );
        } else {
            assert_eq!(
                code(h),
                Code::PermissionDenied,
                "{name} reads ann's history"
            );
        }
    }
    // An unknown job is still "not found", whoever asks.
    let e = bob
        .get_job(proto::JobRequest { job_id: 999 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn others_see_a_jobs_summary_and_never_its_details_over_rest() {
    let m = start("see-rest").await;
    let a1 = conn(&m, ANN)
        .submit_job(generator("/a/1", ""))
        .await
        .unwrap()
        .into_inner()
        .job_id;
    for (name, t, full) in [
        ("admin", ADMIN, true),
        ("ann", ANN, true),
        ("bob", BOB, false),
        ("rob", ROB, false),
    ] {
        let r = request(m.http, "GET", "/api/jobs", Some(t), None).await;
        assert_eq!(r.status, 200, "{name}: {}", r.body);
        let jobs = r.json();
        let j = jobs
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["job_id"] == a1)
            .unwrap();
        assert_view(j, full, name);
        let r = request(m.http, "GET", &format!("/api/jobs/{a1}"), Some(t), None).await;
        if full {
            assert_eq!(r.status, 200, "{name}: {}", r.body);
            let v = r.json();
            assert_view(&v, true, name);
            assert!(v["tasks"].is_array(), "{name}: {v}");
        } else {
            assert_eq!(r.status, 403, "{name}: {}", r.body);
            let e = r.json()["error"].as_str().unwrap().to_string();
            assert!(
                e.contains("permission denied") && e.contains("belongs to \"ann\""),
                "{e}"
            );
        }
    }
    // An unknown job is unknown to everyone; the rest of the API is open
    // to every role.
    let r = request(m.http, "GET", "/api/jobs/999", Some(ROB), None).await;
    assert_eq!(r.status, 404, "{}", r.body);
    for path in [
        "/api/workers",
        "/api/files?path=/",
        "/api/cache",
        "/api/scheduler",
        "/api/fsck",
        "/metrics",
    ] {
        let r = request(m.http, "GET", path, Some(ROB), None).await;
        assert_eq!(r.status, 200, "the reader's GET {path}: {}", r.body);
    }
}

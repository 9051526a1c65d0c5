//! Trust at the workers on a real loopback cluster (issue 39): a user's or
//! a reader's token calling a worker's gRPC port directly can do only what
//! the master's block access tokens allow it, and never makes a worker
//! send its own credential to an address of the caller's choosing.

mod support;

use bytes::Bytes;
use std::time::Duration;
use support::{random_bytes, write_file, Cluster, Opts};
use tonic::Code;

const ANN: &str = "ann-trust-token";
const BOB: &str = "bob-trust-token";
const RITA: &str = "rita-trust-token";

fn opts() -> Opts {
    Opts {
        workers: 3,
        racks: 1,
        block_size: "64KiB",
        replication: 2,
        extra_toml: "worker_token = \"wrk-trust-token\"\n\
             [[users]]\nname = \"ann\"\ntoken = \"ann-trust-token\"\nrole = \"user\"\n\
             [[users]]\nname = \"bob\"\ntoken = \"bob-trust-token\"\nrole = \"user\"\n\
             [[users]]\nname = \"rita\"\ntoken = \"rita-trust-token\"\nrole = \"reader\"\n",
        ..Opts::default()
    }
}

fn master_addr(c: &Cluster) -> String {
    let cfg = common::config::ClusterConfig::load(&c.config).unwrap();
    cfg.master.addr
}

/// One block write of `data` as block `info` straight to a worker, with
/// `downstream` and `token` as the caller chose them.
async fn write(
    addr: &str,
    as_token: &str,
    info: proto::BlockInfo,
    data: &[u8],
    downstream: Vec<proto::WorkerAddr>,
    token: Bytes,
) -> Result<proto::WriteBlockResponse, tonic::Status> {
    let mut w = rpc::dfs::worker_conn(addr, as_token).unwrap();
    let data = Bytes::copy_from_slice(data);
    let (crcs, _) = rpc::dfs::chunk_crcs(&data);
    match rpc::dfs::write_pipeline(&mut w, info, &data, &crcs, downstream, &token).await {
        Ok(r) => Ok(r),
        Err(rpc::dfs::DfsError::Rpc(s)) => Err(s),
        Err(e) => panic!("{e}"),
    }
}

async fn read(
    addr: &str,
    as_token: &str,
    info: &proto::BlockInfo,
    token: &Bytes,
) -> Result<Bytes, Code> {
    let mut w = rpc::dfs::worker_conn(addr, as_token).unwrap();
    match rpc::dfs::read_block(&mut w, info, false, addr, token).await {
        Ok((b, _)) => Ok(b),
        Err(rpc::dfs::DfsError::Rpc(s)) => Err(s.code()),
        Err(e) => panic!("{e}"),
    }
}

fn denied<T: std::fmt::Debug>(what: &str, r: Result<T, tonic::Status>) {
    match r {
        Err(s) => assert_eq!(s.code(), Code::PermissionDenied, "{what}: {s}"),
        Ok(v) => panic!("{what}: not refused: {v:?}"),
    }
}

#[test]
fn the_workers_port_honours_block_tokens_and_roles() {
    let c = Cluster::start("trust", opts());
    let data = random_bytes(200 << 10, 39);
    let src = write_file(&c.dir, "ann.bin", &data);
    let out = c.mr_as(ANN, &["fs", "put", src.to_str().unwrap(), "/ann/data"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A reader reads it, through the master's read tokens.
    let out = c.mr_as(RITA, &["fs", "cat", "/ann/data"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, data);

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let master = master_addr(&c);
        let as_rita = stat(&master, RITA).await;
        let p = Probe::new(master, &as_rita.blocks[0]).await;
        a_reader_only_reads(&p, &data).await;
        let as_ann = stat(&p.master, ANN).await;
        tokens_are_their_holders(&p, &as_ann.blocks[0].access_token).await;
    });
    // Ann's block reads back intact.
    assert_eq!(c.mr(&["fs", "cat", "/ann/data"]).stdout, data);
}

/// `/ann/data` as `token` sees it, read tokens and all.
async fn stat(master: &str, token: &str) -> proto::FileStatus {
    rpc::dfs::master_conn(master, token)
        .unwrap()
        .get_file(proto::PathRequest {
            path: "/ann/data".into(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// Ann's first block and the forged writes the probes try on it.
struct Probe {
    master: String,
    /// The worker holding the block, and its name.
    holder: String,
    holder_name: String,
    info: proto::BlockInfo,
    /// The reader's read token for the block.
    read_token: Bytes,
    /// Other bytes, and the block's info with their CRC.
    other: Vec<u8>,
    forged: proto::BlockInfo,
    /// A block id no file has.
    fresh: proto::BlockInfo,
    /// A listener of the caller's own, named as the next target.
    trap: tokio::net::TcpListener,
    trap_at: Vec<proto::WorkerAddr>,
}

impl Probe {
    async fn new(master: String, b: &proto::BlockStatus) -> Probe {
        let info = b.block.unwrap();
        let other = vec![0xEEu8; info.len as usize];
        let forged = proto::BlockInfo {
            crc32c: crc32c::crc32c(&other),
            ..info
        };
        let trap = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let trap_at = vec![proto::WorkerAddr {
            name: "w9".into(),
            addr: trap.local_addr().unwrap().to_string(),
            rack: String::new(),
        }];
        Probe {
            master,
            holder: b.replicas[0].addr.clone(),
            holder_name: b.replicas[0].name.clone(),
            info,
            read_token: b.access_token.clone(),
            other,
            forged,
            fresh: proto::BlockInfo {
                id: info.id + 1_000_000,
                ..forged
            },
            trap,
            trap_at,
        }
    }
}

/// The reader: no write of any kind, with or without its read token; reads
/// with the token only; no shuffle; no corrupt-replica report.
async fn a_reader_only_reads(p: &Probe, data: &[u8]) {
    let (holder, info) = (&p.holder, p.info);
    denied(
        "a reader's write over a block",
        write(holder, RITA, p.forged, &p.other, vec![], Bytes::new()).await,
    );
    denied(
        "a reader's write under its read token",
        write(
            holder,
            RITA,
            p.forged,
            &p.other,
            vec![],
            p.read_token.clone(),
        )
        .await,
    );
    denied(
        "a reader's write pointed at its own listener",
        write(
            holder,
            RITA,
            p.fresh,
            &p.other,
            p.trap_at.clone(),
            Bytes::new(),
        )
        .await,
    );
    // Reads need the token; the shuffle is for workers only.
    assert_eq!(
        read(holder, RITA, &info, &Bytes::new()).await,
        Err(Code::PermissionDenied)
    );
    assert_eq!(
        read(holder, RITA, &info, &p.read_token).await.unwrap(),
        Bytes::copy_from_slice(&data[..info.len as usize])
    );
    let shuffle = rpc::dfs::worker_conn(holder, RITA)
        .unwrap()
        .fetch_partition(proto::FetchPartitionRequest::default())
        .await;
    denied("a reader's shuffle fetch", shuffle.map(|_| ()));

    // Nor may it mark a replica corrupt without a read token for it.
    let report = rpc::dfs::master_conn(&p.master, RITA)
        .unwrap()
        .report_bad_block(proto::ReportBadBlockRequest {
            worker: p.holder_name.clone(),
            block_id: info.id,
            reason: "say I".into(),
            access_token: Bytes::new(),
        })
        .await;
    denied("a report of a corrupt replica without a token", report);
}

/// Another user: ann's tokens are ann's, and bob's own write token names
/// bob's block and bob's targets only; even ann's read token writes
/// nothing; bob's write as the master planned it goes through.
async fn tokens_are_their_holders(p: &Probe, ann_token: &Bytes) {
    let (holder, info) = (&p.holder, p.info);
    assert_eq!(
        read(holder, BOB, &info, ann_token).await,
        Err(Code::PermissionDenied)
    );
    let mine = bobs_block(&p.master).await;
    denied(
        "bob's token over ann's block",
        write(
            holder,
            BOB,
            p.forged,
            &p.other,
            vec![],
            mine.access_token.clone(),
        )
        .await,
    );
    let bobs = proto::BlockInfo {
        id: mine.block_id,
        generation: mine.generation,
        ..p.forged
    };
    let head = mine.targets[0].addr.clone();
    denied(
        "bob's own block pointed at his listener",
        write(
            &head,
            BOB,
            bobs,
            &p.other,
            p.trap_at.clone(),
            mine.access_token.clone(),
        )
        .await,
    );
    // Nothing dialed the listener: no worker sent it a credential.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), p.trap.accept())
            .await
            .is_err(),
        "a worker dialed the caller's listener"
    );
    // Even ann, with her own read token, cannot write her block again.
    denied(
        "ann's read token for a write",
        write(holder, ANN, p.forged, &p.other, vec![], ann_token.clone()).await,
    );
    // Bob's write, as the master planned it, goes through.
    let rest = mine.targets[1..].to_vec();
    let ok = write(&head, BOB, bobs, &p.other, rest, mine.access_token.clone())
        .await
        .unwrap();
    assert_eq!(ok.stored.len(), 2, "{ok:?}");
}

/// A block of bob's own file, as the master hands it to him to write.
async fn bobs_block(master: &str) -> proto::AddBlockResponse {
    let mut m = rpc::dfs::master_conn(master, BOB).unwrap();
    let lease = m
        .create_file(proto::CreateFileRequest {
            path: "/bob/x".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .lease;
    m.add_block(proto::AddBlockRequest {
        path: "/bob/x".into(),
        lease,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
}

/// A job's output and staging are its own (issue 39): another user can
/// neither pre-create the job's attempt files nor write into its output
/// while it runs, and the job ends well either way.
#[test]
fn a_running_jobs_output_and_staging_are_its_own() {
    let c = Cluster::start("trust-out", opts());
    let src = write_file(&c.dir, "in.txt", b"x y\ny z\nz z\n");
    let out = c.mr_as(ANN, &["fs", "put", src.to_str().unwrap(), "/ann/in"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let release = c.dir.join("release");
    let hold = format!("hold_maps={}", release.display());
    let out = c.mr_as(
        ANN,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/in",
            "--output",
            "/ann/out",
            "--reducers",
            "1",
            "--param",
            &hold,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8(out.stdout).unwrap().trim().to_string();
    c.wait_for("the job's map to run", Duration::from_secs(30), |c| {
        let v = c.json(&["job", "status", &id, "--json"]);
        v["progress"]["maps_running"].as_u64() == Some(1)
    });
    let junk = write_file(&c.dir, "junk", b"junk\n");
    let junk = junk.to_str().unwrap();
    for (who, path, why) in [
        (
            BOB,
            format!("/_staging/job-{id}/part-00000.attempt-0"),
            "written by the jobs' tasks only",
        ),
        (
            BOB,
            format!("/_staging/job-{id}/part-00000.attempt-1"),
            "written by the jobs' tasks only",
        ),
        // The output directory, made at submit, is ann's (rwxr-xr-x).
        (
            BOB,
            "/ann/out/part-00000".to_string(),
            "may not write /ann/out",
        ),
        (ANN, "/ann/out".to_string(), "is the output of job"),
    ] {
        let out = c.mr_as(who, &["fs", "put", junk, &path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(why), "{path}: {err}");
    }
    // A second job may not write into the first's output either: not
    // another user's (its directory is ann's), nor ann's own.
    let out = c.mr_as(
        BOB,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/in",
            "--output",
            "/ann/out/more",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("may not write /ann/out"),
        "{err}"
    );
    let out = c.mr_as(
        ANN,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/in",
            "--output",
            "/ann/out/more",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("overlaps the output of job"),
        "{err}"
    );
    std::fs::write(&release, b"").unwrap();
    let v = c.json(&["job", "wait", &id, "--json"]);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(c.output("/ann/out"), b"x\t1\ny\t2\nz\t3\n");
}

/// Paths have owners and modes (issue 39): a directory's `w` decides who
/// adds to it, a file's `r` who reads it (and gets its read tokens), only
/// the owner or an admin changes a mode and only an admin an owner; a job
/// reads only inputs its submitter may read, and its output directory,
/// made at submit, is its submitter's.
#[test]
fn paths_have_owners_and_modes() {
    let c = Cluster::start("trust-perm", opts());
    let src = write_file(&c.dir, "in.txt", b"a b\nb\n");
    let src = src.to_str().unwrap();
    a_directorys_w_decides_who_adds(&c, src);
    a_files_r_decides_who_reads(&c);
    modes_are_the_owners_and_owners_the_admins(&c, src);
    a_jobs_output_is_its_submitters(&c, src);
}

/// `mr` as `token`, which must succeed; its stdout.
fn ok(c: &Cluster, token: &str, args: &[&str]) -> String {
    let out = c.mr_as(token, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `mr` as `token`, which must fail saying `why`.
fn refused(c: &Cluster, token: &str, args: &[&str], why: &str) {
    let out = c.mr_as(token, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(why),
        "{args:?} not refused with {why:?}: {err}"
    );
}

fn a_directorys_w_decides_who_adds(c: &Cluster, src: &str) {
    ok(c, ANN, &["fs", "mkdir", "/ann"]);
    // A new file's missing parents are its writer's too.
    ok(c, ANN, &["fs", "put", src, "/ann/deep/in"]);
    refused(c, BOB, &["fs", "put", src, "/ann/x"], "may not write /ann");
    refused(
        c,
        BOB,
        &["fs", "put", src, "/ann/deep/x"],
        "may not write /ann/deep",
    );
    refused(c, BOB, &["fs", "mkdir", "/ann/sub"], "may not write /ann");
    refused(
        c,
        BOB,
        &["fs", "rm", "/ann/deep/in"],
        "may not write /ann/deep",
    );
    refused(c, RITA, &["fs", "mkdir", "/rita"], "needs role user");
    let ls = c.json(&["fs", "ls", "/", "--json"]);
    let ann = ls
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "/ann")
        .expect("/ann listed");
    assert_eq!(
        (&ann["owner"], &ann["permission"]),
        (&"ann".into(), &"755".into()),
        "{ls}"
    );
    let st = c.stat("/ann/deep/in");
    assert_eq!(
        (&st["owner"], &st["permission"]),
        (&"ann".into(), &"644".into()),
        "{st}"
    );
    let table = ok(c, ANN, &["fs", "ls", "/ann"]);
    assert!(table.contains("drwxr-xr-x  ann"), "{table}");
}

fn a_files_r_decides_who_reads(c: &Cluster) {
    // A private file: neither its bytes nor its listing to others.
    ok(c, ANN, &["fs", "chmod", "600", "/ann/deep/in"]);
    refused(
        c,
        BOB,
        &["fs", "cat", "/ann/deep/in"],
        "may not read /ann/deep/in",
    );
    refused(
        c,
        RITA,
        &["fs", "cat", "/ann/deep/in"],
        "may not read /ann/deep/in",
    );
    assert_eq!(ok(c, ANN, &["fs", "cat", "/ann/deep/in"]), "a b\nb\n");
    assert_eq!(c.mr_ok(&["fs", "cat", "/ann/deep/in"]), "a b\nb\n");
    // Nor to a job of theirs.
    refused(
        c,
        BOB,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/deep/in",
            "--output",
            "/bob/wc",
        ],
        "may not read /ann/deep/in",
    );
    ok(c, ANN, &["fs", "chmod", "700", "/ann"]);
    refused(c, BOB, &["fs", "ls", "/ann"], "may not read /ann");
}

fn modes_are_the_owners_and_owners_the_admins(c: &Cluster, src: &str) {
    // Modes are the owner's to change, owners the admin's.
    refused(
        c,
        BOB,
        &["fs", "chmod", "777", "/ann"],
        "only its owner or an admin",
    );
    refused(
        c,
        ANN,
        &["fs", "chown", "bob", "/ann/deep/in"],
        "needs role admin",
    );
    refused(
        c,
        ANN,
        &["fs", "chmod", "1777", "/ann"],
        "three octal digits",
    );
    c.mr_ok(&["fs", "chown", "bob", "/ann/deep/in"]);
    ok(c, BOB, &["fs", "chmod", "644", "/ann/deep/in"]);
    assert_eq!(ok(c, RITA, &["fs", "cat", "/ann/deep/in"]), "a b\nb\n");
    ok(c, ANN, &["fs", "chmod", "777", "/ann"]);
    ok(c, BOB, &["fs", "put", src, "/ann/from-bob"]);
}

fn a_jobs_output_is_its_submitters(c: &Cluster, src: &str) {
    // A job's output directory is made at submit, its submitter's.
    let id = ok(
        c,
        BOB,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/deep/in",
            "--output",
            "/bob/wc",
            "--reducers",
            "1",
        ],
    );
    let v = c.json(&["job", "wait", id.trim(), "--json"]);
    assert_eq!(v["state"], "succeeded", "{v}");
    let ls = c.json(&["fs", "ls", "/bob", "--json"]);
    let wc = &ls.as_array().unwrap()[0];
    assert_eq!(
        (&wc["path"], &wc["owner"], &wc["permission"]),
        (&"/bob/wc".into(), &"bob".into(), &"755".into()),
        "{ls}"
    );
    refused(
        c,
        ANN,
        &["fs", "put", src, "/bob/wc/extra"],
        "may not write /bob/wc",
    );
    // A job that does not succeed leaves no directory behind: the output
    // can be given again.
    let hold = format!("hold_maps={}", c.dir.join("never").display());
    let id = ok(
        c,
        BOB,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/from-bob",
            "--output",
            "/bob/killed",
            "--param",
            &hold,
        ],
    );
    let id = id.trim();
    let listed = |c: &Cluster| {
        c.json(&["fs", "ls", "/bob", "--json"])
            .to_string()
            .contains("/bob/killed")
    };
    assert!(listed(c), "the output directory is made at submit");
    ok(c, BOB, &["job", "kill", id]);
    c.wait_for(
        "the killed job's output to go",
        Duration::from_secs(30),
        |c| !listed(c),
    );
    ok(
        c,
        BOB,
        &[
            "job",
            "submit",
            "wordcount",
            "--input",
            "/ann/from-bob",
            "--output",
            "/bob/killed",
        ],
    );
}

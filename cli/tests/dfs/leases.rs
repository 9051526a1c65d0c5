//! Issue 39: a killed put's lease, taken over or recovered.

use super::*;

/// The lease tests' block size: the smallest the cluster allows.
const LEASE_BLOCK: usize = 64 << 10;

/// The namespace's blocks, and every worker's stored blocks (those of
/// files being written too).
fn stored_blocks(c: &Cluster) -> (u64, Vec<u64>) {
    let s = c.status();
    let per_worker = s["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["blocks"].as_u64().unwrap())
        .collect();
    (s["blocks"].as_u64().unwrap(), per_worker)
}

/// `mr fs put - PATH` as a child reading a pipe the test feeds with
/// `data` (four whole blocks) and keeps open, so that the put waits for
/// more once it has sent them; SIGKILLed once every worker (each holds a
/// replica of every block) reports three blocks besides the namespace's.
/// The put has two blocks in flight, the third starting once the first is
/// done and the fourth once the second is: any three a worker stored hold
/// the first two, so a recovery keeps two to four blocks. The pipe is
/// returned, open until the caller drops it.
fn killed_put_midway(c: &Cluster, path: &str, data: &[u8]) -> ChildStdin {
    // Blocks of replaced files are deleted after the fact: counted until
    // then, they would pass for the put's.
    c.wait_for(
        "every worker to store the namespace's blocks and no others",
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n == ns)
        },
    );
    let mut put = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args(["fs", "put", "-", path])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = put.stdin.take().unwrap();
    pipe.write_all(data).unwrap();
    pipe.flush().unwrap();
    c.wait_for(
        &format!("three blocks of {path} stored on every worker"),
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n >= ns + 3)
        },
    );
    put.kill().unwrap();
    put.wait().unwrap();
    pipe
}

/// What a recovery closed `path` at must be whole blocks of what the put
/// was fed, in order, the first two at least (see `killed_put_midway`).
fn assert_acknowledged_prefix(c: &Cluster, path: &str, data: &[u8]) -> usize {
    let got = c.dir.join(format!("got-{}", path.replace('/', "_")));
    c.mr_ok(&["fs", "get", path, got.to_str().unwrap()]);
    let got = std::fs::read(&got).unwrap();
    let n = got.len();
    assert!(
        n.is_multiple_of(LEASE_BLOCK) && (2..=4).contains(&(n / LEASE_BLOCK)),
        "{path} closed at {n} bytes, not 2 to 4 whole blocks"
    );
    assert!(got == data[..n], "{path}: not the put's first {n} bytes");
    n
}

/// Issue 39: a put killed mid-write held its path until the master
/// restarted. Past `lease_soft` of silence the next create of the path
/// recovers the lease (HDFS's soft limit): `put -f` then replaces the
/// file, and a plain put finds the dead writer's acknowledged blocks as
/// the file and says so.
#[test]
fn a_killed_puts_lease_is_taken_over_after_the_soft_limit() {
    let c = Cluster::start(
        "lease-soft",
        Opts {
            workers: 2,
            racks: 1,
            block_size: "64KiB",
            replication: 2,
            master_toml: "lease_soft = \"2s\"",
            ..Opts::default()
        },
    );
    let data = random_bytes(4 * LEASE_BLOCK, 51);
    let other = random_bytes(100_000, 52);
    let local = write_file(&c.dir, "other.bin", &other);
    let local = local.to_str().unwrap();

    let _pipe = killed_put_midway(&c, "/lease/a", &data);
    // Refused while the dead writer is within its soft limit (saying
    // when it may be taken over), then taken over.
    c.wait_for(
        "put -f of /lease/a to succeed",
        Duration::from_secs(30),
        |c| {
            let out = c.mr(&["fs", "put", "-f", local, "/lease/a"]);
            if out.status.success() {
                return true;
            }
            let e = String::from_utf8_lossy(&out.stderr);
            assert!(
                e.contains("being written by another client") && e.contains("may be recovered in"),
                "{e}"
            );
            false
        },
    );
    assert!(c.mr(&["fs", "cat", "/lease/a"]).stdout == other);

    let _pipe = killed_put_midway(&c, "/lease/b", &data);
    let mut last = String::new();
    c.wait_for(
        "a put of /lease/b to find its dead writer's file",
        Duration::from_secs(30),
        |c| {
            let out = c.mr(&["fs", "put", local, "/lease/b"]);
            assert!(!out.status.success(), "a put over the dead writer's file");
            last = String::from_utf8_lossy(&out.stderr).into_owned();
            !last.contains("being written by another client")
        },
    );
    assert!(
        last.contains("already exists")
            && last.contains("the previous writer's lease was recovered")
            && last.contains("closed at"),
        "{last}"
    );
    assert_acknowledged_prefix(&c, "/lease/b", &data);

    // A live writer slower than the soft limit keeps its path: its client
    // renews the lease every half soft limit (HDFS's LeaseRenewer).
    c.wait_for(
        "every worker to store the namespace's blocks and no others",
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n == ns)
        },
    );
    let mut put = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args(["fs", "put", "-", "/lease/slow"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = put.stdin.take().unwrap();
    // Two blocks: the put sends a block once the next one is read (two in
    // flight), so the first is stored while the put waits for more.
    let head = 2 * LEASE_BLOCK + 1000;
    pipe.write_all(&data[..head]).unwrap();
    pipe.flush().unwrap();
    c.wait_for(
        "the slow put's first block on every worker",
        Duration::from_secs(30),
        |c| {
            let (ns, stored) = stored_blocks(c);
            stored.iter().all(|&n| n > ns)
        },
    );
    let taken = |c: &Cluster| {
        let out = c.mr(&["fs", "put", "-f", local, "/lease/slow"]);
        let e = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !out.status.success() && e.contains("being written by another client"),
            "the slow put's path was taken: {e}"
        );
    };
    taken(&c);
    // The soft limit is a span of time, so time must pass: 2.5 of them,
    // with no block written meanwhile.
    std::thread::sleep(Duration::from_secs(5));
    taken(&c);
    pipe.write_all(&data[head..]).unwrap();
    drop(pipe);
    let out = put.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(c.mr(&["fs", "cat", "/lease/slow"]).stdout == data);
}

/// `mr admin recover-lease` closes a killed put's file at once, long
/// before the soft limit: what the workers acknowledged reads back byte
/// for byte, what they did not is gone; a put killed before its first
/// block leaves nothing.
#[test]
fn recover_lease_closes_a_killed_put_at_its_acknowledged_blocks() {
    let c = Cluster::start(
        "lease-recover",
        Opts {
            workers: 2,
            racks: 1,
            block_size: "64KiB",
            replication: 2,
            ..Opts::default()
        },
    );
    let data = random_bytes(4 * LEASE_BLOCK, 53);
    let _pipe = killed_put_midway(&c, "/lease/c", &data);
    let r = c.json(&["admin", "recover-lease", "/lease/c", "--json"]);
    assert_eq!(r["outcome"], "closed", "{r}");
    let n = assert_acknowledged_prefix(&c, "/lease/c", &data);
    assert_eq!(r["bytes"].as_u64(), Some(n as u64), "{r}");
    assert_eq!(r["blocks"].as_u64(), Some((n / LEASE_BLOCK) as u64), "{r}");
    assert_eq!(c.stat("/lease/c")["size"].as_u64(), Some(n as u64));
    let again = c.mr_ok(&["admin", "recover-lease", "/lease/c"]);
    assert_eq!(again.trim(), "/lease/c: no open write");

    // A put that has created its file and waits for its first block.
    let mut put = Command::new(env!("CARGO_BIN_EXE_mr"))
        .arg("--config")
        .arg(&c.config)
        .args(["fs", "put", "-", "/lease/d"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = put.stdin.take().unwrap();
    pipe.write_all(b"not a whole block").unwrap();
    pipe.flush().unwrap();
    let mut said = String::new();
    c.wait_for(
        "the put's create of /lease/d",
        Duration::from_secs(30),
        |c| {
            said = c.mr_ok(&["admin", "recover-lease", "/lease/d"]);
            !said.contains("no open write")
        },
    );
    assert!(
        said.contains("lease recovered") && said.contains("removed, nothing was acknowledged"),
        "{said}"
    );
    put.kill().unwrap();
    put.wait().unwrap();
    drop(pipe);
    assert!(!c.mr(&["fs", "stat", "/lease/d"]).status.success());
}

//! One child process of a task: started in its own process group, fed on
//! stdin by a writer thread while the task's thread reads its stdout, its
//! stderr kept (the last lines, for the error) and scanned for Hadoop's
//! `reporter:counter:` and `reporter:status:` lines, and watched: a child
//! that neither takes input nor gives output for the task timeout is killed
//! with its whole group (Hadoop's `mapreduce.task.timeout`). Whatever is
//! left of the group when the child exits, or when the attempt is dropped
//! (the job killed), is killed too: a task leaves no process behind.

use super::codec::{self, Protocol};
use crate::task::outcome::Failure;
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lines of a child's stderr kept for its error.
const STDERR_TAIL: usize = 20;
/// Characters kept of each of those lines.
const STDERR_LINE: usize = 400;
/// Pipe buffers on the worker's side.
const PIPE_BUF: usize = 64 << 10;

/// The niceness of task children: the worker's heartbeats, shuffle and
/// block service are not theirs to starve.
const CHILD_NICE: libc::c_int = 5;

/// Starts `command`, retrying while its program is busy: a program shipped
/// a moment ago may still be open for writing in a child another thread
/// forked meanwhile (its copy of the descriptor lives until that child's
/// exec), which makes exec fail with ETXTBSY; Go's os/exec retries so too.
fn spawn(command: &mut Command) -> io::Result<std::process::Child> {
    let mut wait = Duration::from_millis(5);
    for _ in 0..8 {
        match command.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(wait);
                wait *= 2;
            }
            r => return r,
        }
    }
    command.spawn()
}

/// Kills the process group of an attempt's running child: on demand, and
/// when the attempt's future is dropped ([`KillOnDrop`]).
#[derive(Clone, Default)]
pub struct Killer(Arc<Mutex<KillState>>);

#[derive(Default)]
struct KillState {
    pgid: Option<i32>,
    /// The attempt is over: no child may start any more.
    killed: bool,
}

impl Killer {
    fn state(&self) -> std::sync::MutexGuard<'_, KillState> {
        common::sync::lock(&self.0)
    }

    /// Records a started child; false (and the child killed) when the
    /// attempt was dropped while it started.
    fn started(&self, pgid: i32) -> bool {
        let mut s = self.state();
        s.pgid = Some(pgid);
        if s.killed {
            signal_group(pgid);
        }
        !s.killed
    }

    /// Kills the current child's group, if any.
    fn kill_group(&self) {
        if let Some(p) = self.state().pgid {
            signal_group(p);
        }
    }

    /// The child is done: what is left of its group dies with it.
    fn reap(&self) {
        if let Some(p) = self.state().pgid.take() {
            signal_group(p);
        }
    }

    /// The attempt is over: the running child's group is killed and no
    /// other starts.
    pub fn kill(&self) {
        let mut s = self.state();
        s.killed = true;
        if let Some(p) = s.pgid.take() {
            signal_group(p);
        }
    }
}

fn signal_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals that process group; the
    // group is the child's own (process_group(0) at spawn).
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Held by an attempt's future: however the attempt ends, its children go.
pub struct KillOnDrop(pub Killer);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.kill();
    }
}

/// A child to run: its command, what to call it in errors, how it speaks.
pub struct Child {
    pub command: Command,
    /// "mapper", "reducer", "program's map", ...
    pub what: String,
    /// The command as the user gave it, for errors.
    pub shown: String,
    pub protocol: Protocol,
    pub timeout: Duration,
}

/// What a child that succeeded left.
pub struct Ran<R> {
    /// What the feed returned.
    pub fed: R,
    /// Its `reporter:counter:` lines, summed.
    pub counters: BTreeMap<String, u64>,
    pub records_out: u64,
}

/// What the scoped threads hand back: the exit status, the feed's result
/// and its write error, the output read, and stderr's tail and counters.
type Joined<R> = (
    io::Result<std::process::ExitStatus>,
    R,
    Option<io::Error>,
    io::Result<u64>,
    (VecDeque<String>, BTreeMap<String, u64>),
);

/// Counts every read and write on a child's pipes: the watchdog's sign of
/// progress.
struct Ticking<'a, T>(T, &'a AtomicU64);

impl<T: Write> Write for Ticking<'_, T> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.0.write(b)?;
        self.1.fetch_add(1, Ordering::Relaxed);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<T: Read> Read for Ticking<'_, T> {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(b)?;
        self.1.fetch_add(1, Ordering::Relaxed);
        Ok(n)
    }
}

/// Runs `c`: `feed` writes the input records (on its own thread, so a child
/// that writes before it has read everything never deadlocks against us),
/// `out` takes every output record. Blocking; call from a blocking thread.
pub fn run<R: Send>(
    mut c: Child,
    killer: &Killer,
    feed: impl FnOnce(&mut dyn FnMut(&[u8], &[u8])) -> R + Send,
    out: &mut codec::OnRecord<'_>,
) -> Result<Ran<R>, Failure> {
    let mut child = start(&mut c, killer)?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let progress = AtomicU64::new(0);
    // The attempt's own counter (`task/progress.rs`), which the master times
    // out: the child's I/O is its progress.
    let attempt = crate::task::progress::current();
    let done = AtomicBool::new(false);
    let timed_out = AtomicBool::new(false);
    let protocol = c.protocol;
    let (status, fed, write_err, read, (tail, counters)): Joined<R> = std::thread::scope(|s| {
        let progress = &progress;
        let writer = s.spawn(move || {
            let mut w = BufWriter::with_capacity(PIPE_BUF, Ticking(stdin, progress));
            let mut err = None;
            let fed = feed(&mut |k: &[u8], v: &[u8]| {
                if err.is_none() {
                    if let Err(e) = codec::write(protocol, &mut w, k, v) {
                        err = Some(e);
                    }
                }
            });
            if err.is_none() {
                err = w.flush().err();
            }
            // Dropped: the child's stdin closes, its end of input.
            (fed, err)
        });
        let errs = s.spawn(move || read_stderr(stderr, progress));
        let dog = s.spawn(|| {
            let step = (c.timeout / 10).clamp(Duration::from_millis(10), Duration::from_secs(1));
            let (mut last, mut since) = (progress.load(Ordering::Relaxed), Instant::now());
            while !done.load(Ordering::Acquire) {
                std::thread::park_timeout(step);
                let p = progress.load(Ordering::Relaxed);
                if p != last {
                    (last, since) = (p, Instant::now());
                    if let Some(a) = &attempt {
                        a.fetch_add(1, Ordering::Relaxed);
                    }
                } else if since.elapsed() >= c.timeout {
                    timed_out.store(true, Ordering::Release);
                    killer.kill_group();
                    break;
                }
            }
        });
        let reader = BufReader::with_capacity(PIPE_BUF, Ticking(stdout, progress));
        let read = codec::read_all(protocol, reader, out);
        if read.is_err() {
            // We stopped reading: the child must not wait on us for ever.
            killer.kill_group();
        }
        let status = child.wait();
        killer.reap();
        done.store(true, Ordering::Release);
        dog.thread().unpark();
        let (fed, write_err) = writer.join().expect("the writer thread panicked");
        let stderr = errs.join().expect("the stderr thread panicked");
        let _ = dog.join();
        (status, fed, write_err, read, stderr)
    });
    verdict(&c, status, timed_out.load(Ordering::Acquire), tail)?;
    let records_out =
        read.map_err(|e| Failure::msg(format!("reading the {}'s output: {e}", c.what)))?;
    if let Some(e) = write_err.filter(|e| e.kind() != io::ErrorKind::BrokenPipe) {
        return Err(Failure::msg(format!("feeding the {}: {e}", c.what)));
    }
    Ok(Ran {
        fed,
        counters,
        records_out,
    })
}

/// Starts `c` with its standard streams piped, niced below the worker, in
/// its own process group, which `killer` then owns.
fn start(c: &mut Child, killer: &Killer) -> Result<std::process::Child, Failure> {
    c.command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook runs in the child between fork and exec and only
    // makes one system call.
    unsafe {
        c.command.pre_exec(|| {
            // Below the worker's own threads: a machine full of task
            // children still answers heartbeats and serves the shuffle.
            libc::setpriority(libc::PRIO_PROCESS, 0, CHILD_NICE);
            Ok(())
        });
    }
    let mut child = spawn(&mut c.command)
        .map_err(|e| Failure::msg(format!("cannot start the {} `{}`: {e}", c.what, c.shown)))?;
    if !killer.started(child.id() as i32) {
        let _ = child.wait();
        return Err(Failure::msg(format!(
            "the {} was killed with its attempt",
            c.what
        )));
    }
    Ok(child)
}

/// How the child ended, as the task's failure when it did not end well:
/// timed out, not started, or a nonzero status, each with the last lines
/// of its stderr.
fn verdict(
    c: &Child,
    status: io::Result<std::process::ExitStatus>,
    timed_out: bool,
    tail: VecDeque<String>,
) -> Result<(), Failure> {
    let tail = tail.into_iter().collect::<Vec<_>>().join("\n");
    let said = if tail.is_empty() {
        " (its stderr was empty)".to_string()
    } else {
        format!("; the last lines of its stderr:\n{tail}")
    };
    if timed_out {
        return Err(Failure::msg(format!(
            "the {} `{}` read no input and wrote no output for {:.0} s (task_timeout) and was killed with its process group{said}",
            c.what,
            c.shown,
            c.timeout.as_secs_f64()
        )));
    }
    let status = status.map_err(|e| Failure::msg(format!("waiting for the {}: {e}", c.what)))?;
    if !status.success() {
        let how = match (status.code(), status.signal()) {
            (Some(127), _) => "exited with status 127 (command not found)".to_string(),
            (Some(126), _) => "exited with status 126 (not executable)".to_string(),
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            (None, None) => format!("ended with {status}"),
        };
        return Err(Failure::msg(format!(
            "the {} `{}` {how}{said}",
            c.what, c.shown
        )));
    }
    Ok(())
}

/// Reads a child's stderr to its end: counters summed, status lines taken
/// as progress, the last other lines kept.
fn read_stderr(r: impl Read, progress: &AtomicU64) -> (VecDeque<String>, BTreeMap<String, u64>) {
    let mut r = BufReader::new(r);
    let (mut tail, mut counters) = (VecDeque::new(), BTreeMap::new());
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut r).take(PIPE_BUF as u64).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let s = String::from_utf8_lossy(&line);
        let s = s.trim_end();
        if let Some((name, n)) = mrjob::wire::parse_counter(s) {
            let c: &mut u64 = counters.entry(name).or_default();
            *c = c.wrapping_add(n);
            progress.fetch_add(1, Ordering::Relaxed);
        } else if s.starts_with("reporter:status:") {
            progress.fetch_add(1, Ordering::Relaxed);
        } else {
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(s.chars().take(STDERR_LINE).collect());
        }
    }
    (tail, counters)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> Child {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        Child {
            command,
            what: "mapper".into(),
            shown: script.into(),
            protocol: Protocol::Lines,
            timeout,
        }
    }

    type Put<'a> = dyn FnMut(&[u8], &[u8]) + 'a;

    fn lines(n: usize) -> impl FnOnce(&mut Put<'_>) -> usize + Send {
        move |put| {
            for i in 0..n {
                put(format!("line {i}").as_bytes(), b"");
            }
            n
        }
    }

    #[test]
    fn a_child_that_writes_while_it_reads_does_not_deadlock() {
        // Far more than the pipes hold, both ways at once.
        let mut got = 0u64;
        let r = run(
            sh("sed 's/ /\\t/'", Duration::from_secs(60)),
            &Killer::default(),
            lines(200_000),
            &mut |k, v| {
                assert_eq!(k, b"line");
                assert!(!v.is_empty());
                got += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((r.fed, r.records_out, got), (200_000, 200_000, 200_000));
    }

    #[test]
    fn exit_status_stderr_and_counters() {
        let e = run(
            sh("echo MARKER >&2; exit 3", Duration::from_secs(60)),
            &Killer::default(),
            lines(10),
            &mut |_, _| Ok(()),
        )
        .err()
        .unwrap();
        assert!(e.msg.contains("exited with status 3"), "{}", e.msg);
        assert!(e.msg.contains("MARKER"), "{}", e.msg);
        let e = run(
            sh("no-such-command-here", Duration::from_secs(60)),
            &Killer::default(),
            lines(1),
            &mut |_, _| Ok(()),
        )
        .err()
        .unwrap();
        assert!(e.msg.contains("command not found"), "{}", e.msg);
        let r = run(
            sh(
                "cat >/dev/null; echo reporter:counter:g,n,2 >&2; echo reporter:counter:g,n,3 >&2",
                Duration::from_secs(60),
            ),
            &Killer::default(),
            lines(5),
            &mut |_, _| Ok(()),
        )
        .unwrap();
        assert_eq!(r.counters["g.n"], 5);
    }

    #[test]
    fn a_silent_child_is_killed_at_its_timeout_with_its_group() {
        let dir = std::env::temp_dir().join(format!("mr-child-timeout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("pid");
        // A grandchild in the background, then a silent wait.
        let script = format!("sleep 1000 & echo $! > {}; wait", pidfile.display());
        let e = run(
            sh(&script, Duration::from_millis(300)),
            &Killer::default(),
            |_put: &mut dyn FnMut(&[u8], &[u8])| (),
            &mut |_, _| Ok(()),
        )
        .err()
        .unwrap();
        assert!(e.msg.contains("task_timeout"), "{}", e.msg);
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered asynchronously: the grandchild is gone once
        // the kernel has run the signal, awaited here (bounded).
        let t = std::time::Instant::now();
        while alive(pid) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(pid), "the grandchild {pid} outlived its task");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn children_run_below_the_worker() {
        let mut nice = Vec::new();
        run(
            sh("cut -d' ' -f19 /proc/self/stat", Duration::from_secs(60)),
            &Killer::default(),
            lines(0),
            &mut |k, _| {
                nice.push(String::from_utf8_lossy(k).parse::<i32>().unwrap());
                Ok(())
            },
        )
        .unwrap();
        assert!(nice.len() == 1 && nice[0] >= CHILD_NICE, "{nice:?}");
    }

    #[test]
    fn a_killed_attempt_starts_no_child() {
        let k = Killer::default();
        k.kill();
        let e = run(
            sh("true", Duration::from_secs(5)),
            &k,
            lines(0),
            &mut |_, _| Ok(()),
        )
        .err()
        .unwrap();
        assert!(e.msg.contains("killed"), "{}", e.msg);
    }

    /// Alive and not a zombie waiting for its parent.
    pub(crate) fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => false,
            Ok(s) => !s
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z')),
        }
    }
}

#!/usr/bin/env python3
"""The crash-loop of scripts/faults.sh (scenario `crash-loop`).

On a running cluster (scripts/lan.sh's layout: D/pids/NAME.pid,
D/logs/NAME.log, hosts in network namespaces mrlan-NAME), each iteration
runs a client doing puts, a WordCount job and deletes while the master and a
random worker are killed with SIGKILL at random moments, each started again
after a random downtime while the client goes on; then, with every process
up, everything the client was told succeeded is checked:

- every acknowledged file (`mr fs put` returned 0) reads back byte for byte;
- every job `mr job run` reported succeeded has its output: `_SUCCESS` and
  one part per reducer, equal to `mr local wordcount` of its input;
- nothing acknowledged is deleted, and an acknowledged delete (`mr fs rm`
  returned 0) stays deleted.

What the client was not told (a put, job or delete that failed because of a
kill) may have happened or not: a file it leaves must then be whole, and a
job output that has `_SUCCESS` must be right; anything else is reported as a
note, not a failure.

In about half the iterations a second client's `mr fs put -` is fed slowly
through a pipe and killed with SIGKILL at a random moment of its own, leaving
its lease held; once the cluster is back, `mr admin recover-lease` must
close the file at an acknowledged prefix (whole blocks of what was fed, or
all of it) or leave nothing, and what it closed is checked from then on as
an acknowledged file.

In some iterations (--decommission, the share of them) a second worker is
decommissioned (`mr admin decommission`, asked again through the master's
kills until it says `decommissioned`, within a bound) and killed with
SIGKILL at once, then started again and recommissioned: two workers down at
replication 2, which loses no acknowledged block only because the
decommission copied the second one's blocks away first.

The kill schedule (which worker, when each kill lands, each downtime) comes from its own
random stream seeded by --seed: a seed reproduces the schedule of kills. The
killed writers come from a third stream, so that they leave that schedule as
it was. The
operations come from a second stream of the same seed; which of them the
client sees succeed depends on where the kills land, so the later choices
(inputs, deletions) may differ between two runs of one seed.

Every call has a timeout and the loop a deadline (--deadline): it ends,
reporting, in bounded time. Exit status 0 when no invariant was broken.
"""

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

WORDS = [
    "%s%s" % (a, b)
    for a in ("al", "be", "co", "da", "el", "fa", "gi", "ho", "in", "ju", "ka", "lo")
    for b in ("n", "ra", "st", "mo", "x", "ve", "ti", "pe", "qu", "dor")
]


def log(msg):
    print(msg, flush=True)


class Cluster:
    """The processes of the LAN and the `mr` client, every call bounded."""

    def __init__(self, a):
        self.a = a
        self.mr_bin = os.path.join(a.bin, "mr")
        self.children = {}

    def mr(self, *args, timeout=60):
        cmd = [self.mr_bin, "-q", "--config", self.a.conf, *args]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return 124, e.stdout or b"", (e.stderr or b"") + b" (timed out)"
        return p.returncode, p.stdout, p.stderr

    def pid(self, name):
        try:
            with open(os.path.join(self.a.dir, "pids", name + ".pid")) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    @staticmethod
    def alive(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    def kill9(self, name):
        pid = self.pid(name)
        if pid is None or not self.alive(pid):
            return False
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        child = self.children.pop(name, None)
        end = time.time() + 10
        while time.time() < end:
            if child is not None:
                try:
                    child.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    pass
            if not self.alive(pid):
                return True
            time.sleep(0.02)
        raise RuntimeError("%s (pid %d) still alive 10 s after SIGKILL" % (name, pid))

    def start(self, name):
        """Starts NAME in its host as lan.sh does (setsid, log appended)."""
        if name == "master":
            cmd = [os.path.join(self.a.bin, "mr-master"), "--config", self.a.conf]
        else:
            cmd = [os.path.join(self.a.bin, "mr-worker"), "--config", self.a.conf, "--name", name]
        out = open(os.path.join(self.a.dir, "logs", name + ".log"), "ab")
        p = subprocess.Popen(["ip", "netns", "exec", "mrlan-" + name, "setsid", "nohup", *cmd],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.children[name] = p
        with open(os.path.join(self.a.dir, "pids", name + ".pid"), "w") as f:
            f.write("%d\n" % p.pid)

    def healthy(self, secs):
        """Waits until the master answers and every worker is alive."""
        end = time.time() + secs
        err = b""
        while time.time() < end:
            rc, _, err = self.mr("cluster", "health", "--workers", str(len(self.a.workers)),
                                 "--timeout", "5s", timeout=15)
            if rc == 0:
                return True, ""
            time.sleep(0.2)
        return False, err.decode(errors="replace").strip()[-300:]


class Model:
    """What the client was told, and so what must hold."""

    def __init__(self):
        self.files = {}      # path -> (sha256, local path, is_text, iteration) acknowledged, live
        self.deleted = {}    # path -> iteration of the acknowledged delete
        self.jobs = {}       # output dir -> (input local path, reducers, iteration) succeeded, live
        self.maybe = {}      # path -> local path: a put not acknowledged (may exist)
        self.maybe_jobs = {}  # output dir -> (input local path, reducers): a job not acknowledged


def sha(b):
    return hashlib.sha256(b).hexdigest()


def make_bytes(rng, text, size):
    if not text:
        return rng.randbytes(size)
    out, n = [], 0
    while n < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))) + "\n"
        out.append(line)
        n += len(line)
    return "".join(out).encode()[:size].rsplit(b"\n", 1)[0] + b"\n"


class Loop:
    def __init__(self, a):
        self.a = a
        self.c = Cluster(a)
        self.m = Model()
        self.kill_rng = random.Random(a.seed)
        self.ops_rng = random.Random(a.seed * 1_000_003 + 17)
        self.writer_rng = random.Random(a.seed * 7_919 + 3)
        # a stream of its own: the kill schedules of earlier seeds stay as they were
        self.decom_rng = random.Random(a.seed * 7_919 + 29)
        self.violations = []  # (iteration, kind, detail)
        self.notes = []
        self.oracles = {}
        self.t_end = time.time() + a.deadline
        os.makedirs(os.path.join(a.work, "files"), exist_ok=True)
        os.makedirs(os.path.join(a.work, "oracles"), exist_ok=True)

    # -- the operations ---------------------------------------------------

    def new_file(self, it, k):
        r = self.ops_rng
        text = r.random() < 0.5
        size = r.choice([r.randint(1, 4096), r.randint(64 << 10, 1536 << 10), r.randint(1 << 20, 3 << 20)])
        data = make_bytes(r, text, size)
        local = os.path.join(self.a.work, "files", "i%d-%d" % (it, k))
        with open(local, "wb") as f:
            f.write(data)
        return ("put", local, "/cl/i%d-%d" % (it, k), text)

    def plan(self, it):
        r = self.ops_rng
        ops = [self.new_file(it, k) for k in range(r.randint(3, 5))]
        texts = sorted(p for p, v in self.m.files.items() if v[2])
        job_input = None
        if texts and r.random() < 0.7:
            job_input = r.choice(texts)
            ops.append(("job", job_input, "/cl/out-j%d" % it, r.randint(1, 3)))
        victims = sorted(p for p in list(self.m.files) + list(self.m.jobs) if p != job_input)
        # more deletes as the live set grows: it stays near 20-30 entries, so
        # that the check after each iteration reads everything back quickly
        n_rm = r.randint(0, 2) + (len(victims) > 20) + 2 * (len(victims) > 30)
        for p in r.sample(victims, min(len(victims), n_rm)):
            ops.append(("rm", p))
        r.shuffle(ops)
        return ops

    def run_op(self, it, op, t0, results):
        t = time.time() - t0
        if op[0] == "put":
            rc, _, err = self.c.mr("fs", "put", op[1], op[2])
        elif op[0] == "job":
            rc, _, err = self.c.mr("job", "run", "wordcount", "--input", op[1], "--output", op[2],
                                   "--reducers", str(op[3]), timeout=120)
        else:
            rc, _, err = self.c.mr("fs", "rm", op[1])
        results.append((op, rc, t, time.time() - t0, err.decode(errors="replace").strip()[-160:]))

    def apply(self, it, op, rc):
        m = self.m
        if op[0] == "put":
            _, local, path, text = op
            with open(local, "rb") as f:
                h = sha(f.read())
            if rc == 0:
                m.files[path] = (h, local, text, it)
            else:
                m.maybe[path] = local
        elif op[0] == "job":
            _, inp, out, red = op
            local = m.files[inp][1]
            self.oracle(local)  # now: the input's local copy goes when it is deleted
            if rc == 0:
                m.jobs[out] = (local, red, it)
            else:
                m.maybe_jobs[out] = (local, red)
        else:
            path = op[1]
            if rc == 0:
                self.forget(m.files.pop(path, None))
                m.jobs.pop(path, None)
                m.deleted[path] = it
            # else: it may have happened: known after the restart (verify)
            elif path in m.files or path in m.jobs:
                self.pending_rm.add(path)

    @staticmethod
    def forget(entry):
        """Removes the local copy of a file no longer checked (disk space:
        50 iterations put about 500 MiB)."""
        if entry is not None:
            try:
                os.remove(entry[1] if isinstance(entry, tuple) else entry)
            except OSError:
                pass

    # -- a writer killed mid-put ------------------------------------------

    def plan_writer(self, it):
        """(path, local, data, pace, kill time) of a writer to kill, or None."""
        r = self.writer_rng
        if r.random() < 0.5:
            return None
        data = r.randbytes(r.randint(1 << 20, 3 << 20))
        local = os.path.join(self.a.work, "files", "w%d" % it)
        with open(local, "wb") as f:
            f.write(data)
        # 64 KiB at a time over 0.5-1.5 s: the kill lands mid-put often
        pace = r.uniform(0.5, 1.5) / (len(data) / (64 << 10))
        return ("/cl/w%d" % it, local, data, pace, r.uniform(0, self.a.window))

    def run_writer(self, plan, out):
        """`mr fs put - PATH` fed `data` at `pace`; out gets the Popen, then
        the exit status (negative: killed)."""
        path, _, data, pace, _ = plan
        p = subprocess.Popen([self.c.mr_bin, "-q", "--config", self.a.conf, "fs", "put", "-", path],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out["proc"] = p
        try:
            for i in range(0, len(data), 64 << 10):
                p.stdin.write(data[i:i + (64 << 10)])
                p.stdin.flush()
                time.sleep(pace)
            p.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # killed, or failed on its own
        try:
            out["rc"] = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out["rc"] = p.wait()

    def check_writer(self, it, plan, rc):
        """After the iteration: a finished put is an acknowledged one; a
        killed one's lease is recovered, and the file is then an
        acknowledged prefix of what was fed, or absent."""
        path, local, data, _, _ = plan
        if rc == 0:
            self.apply(it, ("put", local, path, False), 0)
            return "put finished"
        rc2, out, err = self.c.mr("admin", "recover-lease", path, "--json", timeout=30)
        if rc2 != 0:
            self.violate(it, "recover-lease failed", "%s: %s" % (path, err.decode(errors="replace").strip()[-200:]))
            return "recover-lease failed"
        outcome = json.loads(out)["outcome"]
        rc3, got, err = self.c.mr("fs", "cat", path)
        if rc3 != 0:
            if outcome == "closed":
                self.violate(it, "recovered file unreadable", "%s: %s" % (path, err.decode(errors="replace").strip()[-200:]))
            self.forget(local)
            return "killed (rc %d), recovery: %s, no file" % (rc, outcome)
        rc4, st, _ = self.c.mr("fs", "stat", path, "--json")
        block = json.loads(st)["block_size"] if rc4 == 0 else 1
        if got != data[:len(got)] or (len(got) != len(data) and len(got) % block != 0):
            self.violate(it, "recovered file not an acknowledged prefix",
                         "%s: %d bytes of the %d fed (block size %d), %s" % (
                             path, len(got), len(data), block,
                             "a prefix" if got == data[:len(got)] else "not a prefix"))
            self.forget(local)
            return "bad recovery"
        # from now on it is a file like any acknowledged one
        with open(local, "wb") as f:
            f.write(got)
        self.apply(it, ("put", local, path, False), 0)
        return "killed (rc %d), recovery: %s at %d of %d bytes" % (rc, outcome, len(got), len(data))

    # -- the decommission event ----------------------------------------------

    def retry(self, end, *args):
        """`mr ARGS` until it succeeds (the master may be down) or END."""
        while time.time() < end:
            rc, out, _ = self.c.mr(*args, timeout=15)
            if rc == 0:
                return out
            time.sleep(0.2)
        return None

    def decommission(self, name, t_at, down, t0, done):
        """Decommissions NAME at T_AT, kills it as soon as the master says
        it is decommissioned, starts it again DOWN later and recommissions it.
        Appends what happened to DONE; bounded by --decommission-bound."""
        time.sleep(max(0.0, t0 + t_at - time.time()))
        end = min(time.time() + self.a.decommission_bound, self.t_end - 30)
        if self.retry(end, "admin", "decommission", name, "--wait", "--timeout", "5s") is None:
            done.append("decommission %s from %.2fs: not done in time, not killed" % (name, t_at))
        elif self.c.kill9(name):
            done.append("%s decommissioned and killed at %.2fs" % (name, time.time() - t0))
            time.sleep(down)
            self.c.start(name)
        if self.retry(end + 15, "admin", "recommission", name) is None:
            done.append("recommission %s: not done in time" % name)

    # -- checks -------------------------------------------------------------

    def violate(self, it, kind, detail):
        self.violations.append((it, kind, detail))
        log("   VIOLATION it %d: %s: %s" % (it, kind, detail))

    def listing(self, d):
        rc, out, err = self.c.mr("fs", "ls", d)
        if rc != 0:
            return None, err.decode(errors="replace").strip()[-200:]
        paths = set()
        for line in out.decode(errors="replace").splitlines()[1:]:
            f = line.split()
            if f:
                paths.add(f[-1].rstrip("/"))
        return paths, ""

    def oracle(self, local):
        if local not in self.oracles:
            out = os.path.join(self.a.work, "oracles", os.path.basename(local))
            p = subprocess.run([self.c.mr_bin, "-q", "local", "wordcount", local, "--reducers", "1",
                                "--output", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               timeout=120)
            if p.returncode != 0:
                raise RuntimeError("mr local wordcount %s: %s" % (local, p.stderr.decode()[-200:]))
            lines = []
            for n in sorted(os.listdir(out)):
                if n.startswith("part-"):
                    with open(os.path.join(out, n), "rb") as f:
                        lines += f.read().splitlines()
            self.oracles[local] = sorted(lines)
        return self.oracles[local]

    def job_output(self, out, red):
        """(ok, detail): OUT has _SUCCESS and exactly its parts; their lines."""
        parts, err = self.listing(out)
        if parts is None:
            return None, "mr fs ls %s: %s" % (out, err)
        want = {out + "/_SUCCESS"} | {out + "/part-%05d" % i for i in range(red)}
        if parts != want:
            return None, "entries %s, want %s" % (sorted(p[len(out) + 1:] for p in parts),
                                                    sorted(p[len(out) + 1:] for p in want))
        lines = []
        for i in range(red):
            rc, data, err = self.c.mr("fs", "cat", "%s/part-%05d" % (out, i))
            if rc != 0:
                return None, "part-%05d unreadable: %s" % (i, err.decode(errors="replace").strip()[-200:])
            lines += data.splitlines()
        return sorted(lines), ""

    def verify(self, it):
        m = self.m
        present, err = self.listing("/cl")
        if present is None:
            self.violate(it, "listing", "mr fs ls /cl failed: %s" % err)
            return
        # deletes the client was not told about: known now
        for path in sorted(self.pending_rm):
            if path not in present:
                self.forget(m.files.pop(path, None))
                m.jobs.pop(path, None)
                m.deleted[path] = it
                self.notes.append((it, "rm %s failed, but it happened" % path))
        self.pending_rm = set()
        for path, (h, local, _, born) in sorted(m.files.items()):
            if path not in present:
                self.violate(it, "acknowledged file gone", "%s (put in iteration %d) is not listed" % (path, born))
                del m.files[path]
                continue
            rc, data, err = self.c.mr("fs", "cat", path)
            if rc != 0:
                self.violate(it, "acknowledged file unreadable", "%s (put in iteration %d): %s"
                             % (path, born, err.decode(errors="replace").strip()[-200:]))
                del m.files[path]
            elif sha(data) != h:
                with open(local, "rb") as f:
                    want = f.read()
                at = next((i for i, (x, y) in enumerate(zip(data, want)) if x != y), min(len(data), len(want)))
                self.violate(it, "acknowledged file changed", "%s (put in iteration %d): %d bytes read, %d put,"
                             " first difference at byte %d" % (path, born, len(data), len(want), at))
                del m.files[path]
        for out, (inp, red, born) in sorted(m.jobs.items()):
            if out not in present:
                self.violate(it, "acknowledged job output gone", "%s (job of iteration %d) is not listed" % (out, born))
                del m.jobs[out]
                continue
            lines, why = self.job_output(out, red)
            if lines is None:
                self.violate(it, "acknowledged job output broken", "%s (iteration %d): %s" % (out, born, why))
                del m.jobs[out]
            elif lines != self.oracle(inp):
                self.violate(it, "acknowledged job output wrong", "%s (iteration %d): %d lines, the oracle %d"
                             % (out, born, len(lines), len(self.oracle(inp))))
                del m.jobs[out]
        for path, when in sorted(m.deleted.items()):
            if path in present:
                self.violate(it, "deleted file back", "%s (deleted in iteration %d) is listed again" % (path, when))
                del m.deleted[path]
        # what the client was not told about: whole if there at all
        for path, local in sorted(m.maybe.items()):
            if path in present:
                rc, data, err = self.c.mr("fs", "cat", path)
                with open(local, "rb") as f:
                    same = rc == 0 and data == f.read()
                if not same:
                    self.notes.append((it, "unacknowledged put %s is listed but %s" % (
                        path, "unreadable" if rc != 0 else "its bytes differ")))
            self.forget(local)
        self.m.maybe = {}
        for out, (inp, red) in sorted(m.maybe_jobs.items()):
            if out in present:
                parts, _ = self.listing(out)
                if parts is not None and out + "/_SUCCESS" in parts:
                    lines, why = self.job_output(out, red)
                    if lines is None or lines != self.oracle(inp):
                        self.violate(it, "committed output wrong", "%s (job not acknowledged, but committed): %s"
                                     % (out, why or "differs from the oracle"))
                    else:
                        m.jobs[out] = (inp, red, it)  # committed and right: it counts from now on
                else:
                    self.notes.append((it, "unacknowledged job left %s without _SUCCESS" % out))
        self.m.maybe_jobs = {}

    # -- the loop -----------------------------------------------------------

    def seed_files(self):
        """Iteration 0: a few text files, no kill, so that jobs have inputs."""
        for k in range(3):
            _, local, path, _ = self.new_file(0, k)
            with open(local, "wb") as f:
                f.write(make_bytes(self.ops_rng, True, self.ops_rng.randint(200 << 10, 900 << 10)))
            rc, _, err = self.c.mr("fs", "put", local, path)
            if rc != 0:
                raise RuntimeError("seed put %s: %s" % (path, err.decode()[-200:]))
            self.apply(0, ("put", local, path, True), 0)

    def iteration(self, it):
        kr = self.kill_rng
        victim = kr.choice(self.a.workers)
        t_worker, t_master = kr.uniform(0, self.a.window), kr.uniform(0, self.a.window)
        # each comes back after a downtime of its own, while the client goes on
        d_worker, d_master = kr.uniform(0.1, 1.0), kr.uniform(0.1, 1.0)
        ops = self.plan(it)
        writer = self.plan_writer(it)
        self.pending_rm = set()
        results = []
        t0 = time.time()

        def client():
            for op in ops:
                self.run_op(it, op, t0, results)

        th = threading.Thread(target=client, daemon=True)
        th.start()
        wout = {}
        wth = None
        if writer is not None:
            wth = threading.Thread(target=self.run_writer, args=(writer, wout), daemon=True)
            wth.start()
        decom, decom_done = None, []
        dr = self.decom_rng
        if dr.random() < self.a.decommission:
            name = dr.choice([w for w in self.a.workers if w != victim])
            args = (name, dr.uniform(0, self.a.window), dr.uniform(0.1, 1.0), t0, decom_done)
            decom = threading.Thread(target=self.decommission, args=args, daemon=True)
            decom.start()
        killed = []
        events = sorted([(t_worker, 0, "kill", victim), (t_worker + d_worker, 1, "start", victim),
                         (t_master, 0, "kill", "master"), (t_master + d_master, 1, "start", "master")]
                        + ([(writer[4], 0, "kill-writer", writer[0])] if writer else []))
        for t, _, what, name in events:
            time.sleep(max(0.0, t0 + t - time.time()))
            if what == "kill":
                if self.c.kill9(name):
                    killed.append("%s at %.2fs" % (name, time.time() - t0))
            elif what == "kill-writer":
                p = wout.get("proc")
                if p is not None and p.poll() is None:
                    p.kill()
                    killed.append("the writer of %s at %.2fs" % (name, time.time() - t0))
            else:
                self.c.start(name)
        th.join(timeout=max(1, self.t_end - time.time()))
        if th.is_alive():
            raise RuntimeError("the client of iteration %d did not finish before the deadline" % it)
        if wth is not None:
            wth.join(timeout=max(1, self.t_end - time.time()))
            if wth.is_alive():
                raise RuntimeError("the writer of iteration %d did not finish before the deadline" % it)
        if decom is not None:
            decom.join(timeout=max(1, self.t_end - time.time()))
            if decom.is_alive():
                raise RuntimeError("the decommission of iteration %d did not end before the deadline" % it)
            killed += decom_done
        for op, rc, _, _, _ in results:
            self.apply(it, op, rc)
        # one that died on its own (its port still held at its restart, say)
        for name in ["master"] + self.a.workers:
            pid = self.c.pid(name)
            if pid is None or not self.c.alive(pid):
                self.notes.append((it, "%s was not running after the iteration: started" % name))
                self.c.start(name)
        ok, err = self.c.healthy(min(90, max(5, self.t_end - time.time())))
        desc = " ".join(
            "%s:%s%s" % (op[0], {0: "ok"}.get(rc, "rc%d" % rc), "@%.1f-%.1fs" % (a, b))
            for op, rc, a, b, _ in results)
        log(" it %2d: kill %s at %.2fs (back %.2fs later), master at %.2fs (back %.2fs later); landed: %s; ops %s"
            % (it, victim, t_worker, d_worker, t_master, d_master, ", ".join(killed) or "none", desc))
        for op, rc, _, _, err in results:
            if rc not in (0, 1):
                self.notes.append((it, "%s %s exited %d: %s" % (op[0], op[2] if op[0] != "rm" else op[1], rc, err)))
        if not ok:
            self.violate(it, "cluster did not come back", err)
            return False
        if writer is not None:
            log("        writer %s: %s" % (writer[0], self.check_writer(it, writer, wout.get("rc"))))
        self.verify(it)
        log("        verified: %d acknowledged files, %d job outputs, %d deletes"
            % (len(self.m.files), len(self.m.jobs), len(self.m.deleted)))
        return True

    def run(self):
        log("crash-loop: seed %d, %d iterations, kills within %.1f s of each iteration's start"
            % (self.a.seed, self.a.iterations, self.a.window))
        log("crash-loop: reproduce the kill schedule with: scripts/faults.sh crash-loop --seed %d --iterations %d"
            % (self.a.seed, self.a.iterations))
        self.seed_files()
        done = 0
        for it in range(1, self.a.iterations + 1):
            if time.time() > self.t_end - 30:
                self.violate(it, "deadline", "the loop's deadline came after %d iterations" % done)
                break
            if not self.iteration(it):
                break
            done = it
        kinds = {}
        for it, kind, _ in self.violations:
            kinds.setdefault(kind, []).append(it)
        summary = {"seed": self.a.seed, "iterations": done, "violations": [
            {"iteration": i, "kind": k, "detail": d} for i, k, d in self.violations],
            "notes": [{"iteration": i, "note": n} for i, n in self.notes]}
        with open(os.path.join(self.a.work, "crash-loop.json"), "w") as f:
            json.dump(summary, f, indent=1)
        for it, n in self.notes[:20]:
            log("   note it %d: %s" % (it, n))
        if len(self.notes) > 20:
            log("   (%d more notes in %s)" % (len(self.notes) - 20, os.path.join(self.a.work, "crash-loop.json")))
        if self.violations:
            log("crash-loop: seed %d: %d violations in %d iterations: %s" % (
                self.a.seed, len(self.violations), done,
                "; ".join("%s x%d (first in iteration %d)" % (k, len(v), v[0]) for k, v in kinds.items())))
            return 1
        log("crash-loop: seed %d: %d iterations, every invariant held (%d acknowledged files, %d job outputs,"
            " %d deletes checked at the end)" % (self.a.seed, done, len(self.m.files), len(self.m.jobs),
                                                 len(self.m.deleted)))
        return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conf", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--dir", required=True, help="the LAN's directory (pids/, logs/)")
    p.add_argument("--work", required=True, help="where local copies and oracles go")
    p.add_argument("--workers", required=True, help="comma-separated worker names")
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--window", type=float, default=2.0, help="kills land within this many seconds")
    p.add_argument("--deadline", type=float, default=600, help="seconds for the whole loop")
    p.add_argument("--decommission", type=float, default=0.3,
                   help="the share of iterations that also decommission and kill a second worker")
    p.add_argument("--decommission-bound", type=float, default=30,
                   help="seconds a decommission may take before it is given up (that worker is not killed)")
    a = p.parse_args()
    a.workers = [w for w in a.workers.split(",") if w]
    try:
        sys.exit(Loop(a).run())
    except RuntimeError as e:
        log("crash-loop: error: %s" % e)
        sys.exit(2)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`make test`'s runner: builds the workspace's test binaries once, then runs them, one after
another as `cargo test` does (the default) or several at a time (`--jobs`).

Most of the suite's time is spent in a few end-to-end binaries (devnets of real processes) that
wait for slots far more than they compute; run in sequence they left the cores idle for minutes.
Each binary still runs its own tests in parallel threads, as under `cargo test`, so fixtures a
binary shares between its tests are built once (a runner with a process per test, such as
cargo-nextest, rebuilt them for every test and was slower here).

    scripts/run_tests.py [--jobs N] [--timeout SECONDS] -- CARGO_TEST_ARGS...

1. `cargo test CARGO_TEST_ARGS --no-run --message-format=json` builds everything and names
   each test binary and its package;
2. the binaries run from their package's directory (as `cargo test` runs them), `--jobs` at a
   time (the devnets one after another on a lane of their own, at normal priority; the others
   on the other lanes under `nice`),
   the longest of the last run first (`target/test-logs/test-times.json`; a clean tree
   starts with the known long ones), plus one job for the doc tests
   (`cargo test CARGO_TEST_ARGS --doc`);
3. each binary's output is printed whole when it ends, in the `cargo test` format, and kept in
   `target/test-logs/runner/`; a binary that runs past `--timeout` is killed (its process group)
   and fails;
4. a table of every binary's time and counts, then the failures; the exit status is non-zero
   when any binary failed, was killed or could not start. Nothing stops at the first failure.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOG_DIR = os.path.join(REPO, "target", "test-logs", "runner")
TIMES = os.path.join(REPO, "target", "test-logs", "test-times.json")

# Binaries known to take a minute or more (devnets of real processes, the spec vectors): started
# first on a tree without timings, so that the long ones overlap instead of ending the run.
KNOWN_LONG = [
    # devnets (one at a time)
    "beacon_node/simulator",
    "beacon_node/dev_gloas",
    "beacon_node/dev",
    "beacon_node/dev_two_nodes",
    "beacon_node/prometheus",
    "validator_client/crash",
    "beacon_node/thread_budget",
    # the rest
    "http_api/api",
    "ef_tests/spec_tests",
    "types/bad_input",
    "lodestar_roots/roots",
    "types/ssz_round_trip",
    "beacon_chain/builder",
    "types/milhouse_equivalence",
    "beacon_chain/production",
]

# Binaries whose tests run devnets of real processes against the clock (2-second slots, duties
# that must not be missed): they run one after another on a lane of their own (worker 0, so that
# a free lane always waits for the next) and at normal priority, every other binary (and the
# doc tests) on the other lanes under `nice`, so that the compute-bound ones running beside a
# devnet take its idle cores, not its deadlines.
DEVNETS = {
    "beacon_node/simulator",
    "beacon_node/dev",
    "beacon_node/dev_gloas",
    "beacon_node/dev_two_nodes",
    "beacon_node/prometheus",
    "beacon_node/status_page",
    "beacon_node/thread_budget",
    "validator_client/crash",
}
NICE = ["nice", "-n", "15"]

RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")


def log(msg):
    print(f"run_tests: {msg}", flush=True)


def build(cargo, args):
    """Builds the test binaries; returns [(name, package_dir, src_path, executable)]."""
    cmd = [cargo, "test", *args, "--no-run", "--message-format=json-render-diagnostics"]
    log(" ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=REPO)
    binaries = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-message":
            print(msg.get("message", {}).get("rendered", ""), end="", flush=True)
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        package_dir = os.path.dirname(msg["manifest_path"])
        package = os.path.basename(package_dir)
        kind = target["kind"][0]
        name = f"{package}/{target['name']}" if kind == "test" else f"{package}/{kind}:{target['name']}"
        binaries.append((name, package_dir, target["src_path"], msg["executable"]))
    if proc.wait() != 0:
        raise SystemExit(f"run_tests: the build failed ({' '.join(cmd)})")
    return binaries


def load_times():
    try:
        with open(TIMES) as f:
            return {k: float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def order(jobs, times):
    """Longest first: by the last run's times, else the known long ones in their order."""

    def key(job):
        name = job[0]
        if name in times:
            return (0, -times[name])
        if name in KNOWN_LONG:
            return (0, -1e6 + KNOWN_LONG.index(name))
        return (1, 0)

    return sorted(jobs, key=key)


class Runner:
    def __init__(self, jobs, timeout):
        self.jobs = jobs
        self.timeout = timeout
        self.lock = threading.Lock()
        self.results = []
        self.procs = set()
        self.stopping = False

    def run_one(self, job):
        name, cwd, src, argv = job
        log_path = os.path.join(LOG_DIR, name.replace("/", "__").replace(":", "_") + ".log")
        start = time.monotonic()
        status = None
        with open(log_path, "w") as out:
            try:
                proc = subprocess.Popen(
                    argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            except OSError as e:
                out.write(f"could not start {argv[0]}: {e}\n")
                status = f"could not start: {e}"
                proc = None
            if proc is not None:
                if argv[: len(NICE)] == NICE:
                    lower_autogroup(proc.pid)
                with self.lock:
                    self.procs.add(proc)
                try:
                    rc = proc.wait(timeout=self.timeout)
                    status = None if rc == 0 else f"exit status {rc}"
                except subprocess.TimeoutExpired:
                    kill_group(proc)
                    proc.wait()
                    status = f"killed after {self.timeout} s (--timeout)"
                    out.write(f"\nrun_tests: {status}\n")
                with self.lock:
                    self.procs.discard(proc)
        seconds = time.monotonic() - start
        with open(log_path, errors="replace") as f:
            output = f.read()
        passed = failed = ignored = 0
        for m in RESULT.finditer(output):
            passed += int(m.group(1))
            failed += int(m.group(2))
            ignored += int(m.group(3))
        with self.lock:
            # The `cargo test` format, so the output reads (and parses) the same.
            if src:
                header = f"     Running {os.path.relpath(src, REPO)} ({os.path.relpath(argv[-1], REPO)})"
            else:
                header = f"     Running {' '.join(argv)}"
            print(header)
            print(output, end="" if output.endswith("\n") else "\n", flush=True)
            if status is not None:
                print(f"run_tests: {name} FAILED: {status}; log: {os.path.relpath(log_path, REPO)}", flush=True)
            self.results.append((name, seconds, passed, failed, ignored, status))

    def next_job(self, queue, lane):
        """The next job for worker `lane`: worker 0 is the devnets' lane (it runs them one
        after another, then helps with the rest), the others take the rest only; None when
        nothing is left for the worker."""
        if not queue or self.stopping:
            return None
        for i, job in enumerate(queue):
            if lane == 0 and is_devnet(job):
                return queue.pop(i)
        for i, job in enumerate(queue):
            if not is_devnet(job):
                return queue.pop(i)
        return None

    def worker(self, queue, lane):
        while True:
            with self.lock:
                job = self.next_job(queue, lane)
            if job is None:
                return
            try:
                self.run_one(job)
            except Exception as e:  # noqa: BLE001 - the runner's own fault: reported, never lost
                with self.lock:
                    print(f"run_tests: {job[0]} FAILED: the runner failed on it: {e!r}", flush=True)
                    self.results.append((job[0], 0.0, 0, 0, 0, f"runner error: {e!r}"))

    def run(self, jobs_list):
        queue = list(jobs_list)
        threads = [
            threading.Thread(target=self.worker, args=(queue, lane), daemon=True) for lane in range(self.jobs)
        ]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(timeout=1)
        except KeyboardInterrupt:
            self.stop()
            raise

    def stop(self):
        with self.lock:
            self.stopping = True
            procs = list(self.procs)
        for proc in procs:
            kill_group(proc)


def lower_autogroup(pid):
    """With the kernel's autogroup scheduling (`/proc/sys/kernel/sched_autogroup_enabled`),
    each session's processes share one weight and `nice` only orders them among themselves:
    every job is a session of its own, so a niced job's group is niced too (it would take as
    much CPU as a devnet's otherwise). No autogroup, nothing to do."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(NICE[2])
    except OSError:
        pass


def is_devnet(job):
    return job[0] in DEVNETS


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1, help="binaries at a time (default 1)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds one binary may run (default 1200)")
    ap.add_argument("--cargo", default=os.environ.get("CARGO", "cargo"))
    ap.add_argument("cargo_args", nargs="*", help="after --: what `cargo test` takes, e.g. --workspace --all-features")
    args = ap.parse_args()
    if args.jobs < 1:
        raise SystemExit("run_tests: --jobs must be at least 1")

    started = time.monotonic()
    binaries = build(args.cargo, args.cargo_args)
    build_seconds = time.monotonic() - started
    log(f"built {len(binaries)} test binaries in {build_seconds:.0f} s; running {args.jobs} at a time")
    os.makedirs(LOG_DIR, exist_ok=True)

    jobs = [(name, cwd, src, [exe] if name in DEVNETS else [*NICE, exe]) for name, cwd, src, exe in binaries]
    jobs.append(("workspace/doc-tests", REPO, "", [*NICE, args.cargo, "test", *args.cargo_args, "--doc"]))
    missing = DEVNETS - {name for name, *_ in binaries}
    if missing and "--workspace" in args.cargo_args:
        raise SystemExit(f"run_tests: no test binary named {sorted(missing)} (DEVNETS is out of date)")
    times = load_times()
    runner = Runner(args.jobs, args.timeout)
    try:
        runner.run(order(jobs, times))
    except KeyboardInterrupt:
        log("interrupted: every running test binary was killed")
        return 130

    # The next run starts the longest first.
    times.update({name: round(seconds, 1) for name, seconds, *_ in runner.results})
    with open(TIMES, "w") as f:
        json.dump(times, f, indent=1, sort_keys=True)

    results = sorted(runner.results, key=lambda r: -r[1])
    total_passed = sum(r[2] for r in results)
    total_failed = sum(r[3] for r in results)
    total_ignored = sum(r[4] for r in results)
    busy = sum(r[1] for r in results)
    wall = time.monotonic() - started - build_seconds
    print()
    log(f"{len(results)} binaries: {total_passed} passed, {total_failed} failed, {total_ignored} ignored; "
        f"{wall:.0f} s of running ({busy:.0f} s of binaries, {args.jobs} at a time) after {build_seconds:.0f} s of building")
    log("the longest:")
    for name, seconds, passed, failed, ignored, status in results[:12]:
        print(f"  {seconds:7.1f} s  {name}  ({passed} passed, {failed} failed, {ignored} ignored)")
    bad = [r for r in results if r[5] is not None]
    if bad:
        log(f"FAILED: {len(bad)} binaries")
        for name, _, _, failed, _, status in bad:
            print(f"  {name}: {status}, {failed} tests failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

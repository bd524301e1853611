//! Walks `tests/<config>/<fork>/<runner>/<handler>/<suite>/<case>/` (of the main vectors and of
//! the Gloas ones), runs every case whose runner is registered, and collects a [`Report`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use types::ForkName;

use crate::allow_list::{ALLOW_LIST, AllowedGap, allowed};
use crate::case::{CaseContext, CaseResult, PendingFork, Runner};
use crate::files::{read_yaml, track_reads};
use crate::report::{CaseNote, Report};

/// The environment variable naming the vector directory (the one that holds `tests/`).
pub const ROOT_ENV: &str = "ARBOR_SPEC_TESTS";
/// The environment variable naming the Gloas vector directory (the one that holds `tests/`),
/// unpacked apart from the others by `make gloas-vectors`.
pub const GLOAS_ROOT_ENV: &str = "ARBOR_GLOAS_VECTORS";

/// Directory levels below `tests/`: config, fork, runner, handler, suite, case.
const DEPTH: usize = 6;
/// Index of the runner component in a case's path components.
const RUNNER_LEVEL: usize = 2;
/// Stack of each worker: decoding and hashing whole states recurses more than the 2 MiB default
/// comfortably allows in debug builds.
const WORKER_STACK_BYTES: usize = 16 * 1024 * 1024;

/// Why the harness could not run at all (as opposed to a case failing).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// `ARBOR_SPEC_TESTS` is unset or empty.
    #[error(
        "{ROOT_ENV} is not set: point it at an unpacked spec-test directory (the one holding \
         tests/), or run `make spec-tests`, which unpacks the vectors and sets it"
    )]
    RootNotSet,
    /// The root directory does not exist.
    #[error(
        "spec-test directory {0} does not exist (give {ROOT_ENV} as an absolute path: the test \
         binary runs from testing/ef_tests)"
    )]
    RootMissing(PathBuf),
    /// The root has no `tests/` directory.
    #[error(
        "{0} has no tests/ directory; expected tests/<config>/<fork>/<runner>/<handler>/<suite>/<case>/"
    )]
    TestsDirMissing(PathBuf),
    /// `tests/` holds no case directory at all.
    #[error("no case directories under {0}")]
    NoCases(String),
    /// The Gloas vector directory (`ARBOR_GLOAS_VECTORS`, or `target/gloas-vectors`) has no
    /// `tests/`.
    #[error(
        "the Gloas vectors are missing: {0} has no tests/ directory. Run `make gloas-vectors` \
         (it unpacks ../shared/spec-tests/gloas/minimal-gloas.tar.xz into target/gloas-vectors) \
         or set {GLOAS_ROOT_ENV} to the directory holding tests/"
    )]
    GloasVectorsMissing(PathBuf),
    /// Two vector roots hold the same `config/fork` directory.
    #[error("{fork} lies under both {first} and {second}: each fork's vectors belong to one root")]
    ForkInTwoRoots {
        /// `config/fork`.
        fork: String,
        /// The first `tests/` directory holding it.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// A directory could not be listed.
    #[error("cannot list {path}: {source}")]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// How to run: which cases, on how many threads, and which gaps are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Only cases whose id (`config/fork/runner/handler/suite/case`) contains one of these run.
    pub filters: Vec<String>,
    /// Cases whose id contains one of these are left out.
    pub skip: Vec<String>,
    /// Worker threads; the machine's parallelism when `None`.
    pub threads: Option<usize>,
    /// The vectors that may be skipped or have no runner; any other skip or uncovered runner
    /// directory fails the run. [`ALLOW_LIST`] by default.
    pub allowed: Vec<AllowedGap>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            filters: Vec::new(),
            skip: Vec::new(),
            threads: None,
            allowed: ALLOW_LIST.to_vec(),
        }
    }
}

impl Options {
    /// Reads the arguments `cargo test -- …` passes: bare words are filters, `--skip WORD` leaves
    /// cases out, `--test-threads N` sets the threads; other flags (`--nocapture`, …) are ignored.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Self {
        let mut options = Options::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if let Some(n) = arg.strip_prefix("--test-threads=") {
                options.threads = n.parse().ok().filter(|&n| n > 0);
            } else if arg == "--test-threads" {
                options.threads = args.next().and_then(|n| n.parse().ok()).filter(|&n| n > 0);
            } else if let Some(word) = arg.strip_prefix("--skip=") {
                options.skip.push(word.to_string());
            } else if arg == "--skip" {
                options.skip.extend(args.next());
            } else if !arg.starts_with('-') {
                options.filters.push(arg);
            }
        }
        options
    }

    fn selects(&self, id: &str) -> bool {
        (self.filters.is_empty() || self.filters.iter().any(|f| id.contains(f.as_str())))
            && !self.skip.iter().any(|s| id.contains(s.as_str()))
    }
}

/// The vector directory from `ARBOR_SPEC_TESTS`, checked to exist with a `tests/` inside.
pub fn root_from_env() -> Result<PathBuf, HarnessError> {
    let root = std::env::var_os(ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or(HarnessError::RootNotSet)?;
    tests_dir(&root)?;
    Ok(root)
}

/// The Gloas vector directory: `$ARBOR_GLOAS_VECTORS`, else the workspace's
/// `target/gloas-vectors` (where `make gloas-vectors` unpacks them), checked to hold `tests/`.
pub fn gloas_root_from_env() -> Result<PathBuf, HarnessError> {
    let root = std::env::var_os(GLOAS_ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/gloas-vectors")
        });
    if !root.join("tests").is_dir() {
        return Err(HarnessError::GloasVectorsMissing(root));
    }
    Ok(root)
}

/// `root/tests`, or why it is not usable.
fn tests_dir(root: &Path) -> Result<PathBuf, HarnessError> {
    if !root.is_dir() {
        return Err(HarnessError::RootMissing(root.to_path_buf()));
    }
    let tests = root.join("tests");
    if !tests.is_dir() {
        return Err(HarnessError::TestsDirMissing(root.to_path_buf()));
    }
    Ok(tests)
}

/// Runs every selected case under `root/tests` with the given runners.
pub fn run(
    root: &Path,
    runners: &[Box<dyn Runner>],
    options: &Options,
) -> Result<Report, HarnessError> {
    run_roots(&[root.to_path_buf()], runners, options)
}

/// Runs every selected case under each root's `tests/` (the main vectors and the Gloas ones) as
/// one run with one report; a `config/fork` directory may lie in one root only.
pub fn run_roots(
    roots: &[PathBuf],
    runners: &[Box<dyn Runner>],
    options: &Options,
) -> Result<Report, HarnessError> {
    let started = Instant::now();
    let mut tests_dirs = Vec::with_capacity(roots.len());
    let mut entries = Vec::new();
    // `config/fork` → the tests/ directory holding it.
    let mut forks: BTreeMap<String, PathBuf> = BTreeMap::new();
    for root in roots {
        let tests = tests_dir(root)?;
        for entry in walk(&tests)? {
            let fork_dir = entry.components[..RUNNER_LEVEL].join("/");
            match forks.get(&fork_dir) {
                Some(first) if *first != tests => {
                    return Err(HarnessError::ForkInTwoRoots {
                        fork: fork_dir,
                        first: first.clone(),
                        second: tests,
                    });
                }
                Some(_) => {}
                None => {
                    forks.insert(fork_dir, tests.clone());
                }
            }
            entries.push(entry);
        }
        tests_dirs.push(tests);
    }
    if entries.iter().all(|e| e.kind != EntryKind::Case) {
        let dirs: Vec<String> = tests_dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(HarnessError::NoCases(dirs.join(", ")));
    }

    let mut report = Report {
        tests_dirs,
        filters: options.filters.clone(),
        ..Report::default()
    };
    let mut jobs: Vec<Job<'_>> = Vec::new();

    for entry in entries {
        let id = entry
            .components
            .iter()
            .filter(|c| !c.is_empty())
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("/");
        if !options.selects(&id) {
            continue;
        }
        let group = entry.components[..=RUNNER_LEVEL].join("/");
        let runner = runners
            .iter()
            .find(|r| r.name() == entry.components[RUNNER_LEVEL]);
        let Some(runner) = runner else {
            if entry.kind == EntryKind::Case {
                if let Some(gap) = allowed(&options.allowed, &id) {
                    report.note_not_covered(gap);
                } else {
                    report.groups.entry(group).or_default().failed += 1;
                    report.unvisited.push(CaseNote {
                        case: id,
                        message: "no runner reads this directory, and the allow list \
                                  (testing/ef_tests/src/allow_list.rs) does not name it"
                            .to_string(),
                    });
                }
            }
            continue;
        };
        if entry.kind == EntryKind::Stray {
            report.groups.entry(group).or_default().failed += 1;
            report.unvisited.push(CaseNote {
                case: id,
                message: "not a directory where the layout expects one".to_string(),
            });
            continue;
        }
        let [config, fork, runner_name, handler, suite, case] = entry.components;
        let path = entry.path;
        // A fork Arbor knows but does not run (Gloas) is a pending fork: its runners are the
        // pending ones, and the allow list names those a later issue delivers.
        let parsed = fork
            .parse::<ForkName>()
            .and_then(|f| match f.is_implemented() {
                true => Ok(f),
                false => Err(types::UnknownForkName(fork.clone())),
            });
        let case = match parsed {
            Ok(fork) => JobCase::Released(CaseContext {
                config,
                fork,
                runner: runner_name,
                handler,
                suite,
                case,
                path,
            }),
            Err(e) => match PendingFork::from_dir(&fork) {
                Some(fork) => JobCase::Pending(CaseContext {
                    config,
                    fork,
                    runner: runner_name,
                    handler,
                    suite,
                    case,
                    path,
                }),
                None => {
                    report.groups.entry(group).or_default().failed += 1;
                    report.failed.push(CaseNote {
                        case: id,
                        message: format!("{e}: types::ForkName does not know this fork"),
                    });
                    continue;
                }
            },
        };
        jobs.push(Job {
            runner: runner.as_ref(),
            case,
        });
    }

    let threads = options
        .threads
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .clamp(1, jobs.len().max(1));
    let results = run_parallel(&jobs, threads);
    report.threads = threads;

    for (job, outcome) in jobs.iter().zip(results) {
        let case_id = job.case.id();
        let group = job.case.group();
        let note = |message: String| CaseNote {
            case: case_id.clone(),
            message,
        };
        // The accessed-files check: a pass that left a file unread fails, unless the allow list
        // names the file (`<case id>/<file>`).
        let mut result = outcome.result;
        let (allowed_unread, unread): (Vec<String>, Vec<String>) = outcome
            .unread
            .into_iter()
            .partition(|file| allowed(&options.allowed, &format!("{case_id}/{file}")).is_some());
        for file in allowed_unread {
            let id = format!("{case_id}/{file}");
            if let Some(gap) = allowed(&options.allowed, &id) {
                *report
                    .unread_allowed
                    .entry(gap.path.to_string())
                    .or_default() += 1;
            }
        }
        if result == CaseResult::Passed && !unread.is_empty() {
            result = CaseResult::Failed(format!(
                "passed without reading {} of its files: {}",
                unread.len(),
                unread.join(", ")
            ));
        }
        match result {
            CaseResult::Passed => report.groups.entry(group).or_default().passed += 1,
            CaseResult::Failed(message) => {
                report.groups.entry(group).or_default().failed += 1;
                report.failed.push(note(message));
            }
            CaseResult::Skipped(reason) => {
                let counts = report.groups.entry(group).or_default();
                if allowed(&options.allowed, &case_id).is_some() {
                    counts.skipped += 1;
                    report.skipped.push(note(reason));
                } else {
                    counts.failed += 1;
                    report.failed.push(note(format!(
                        "skipped, but the allow list (testing/ef_tests/src/allow_list.rs) does \
                         not name it: {reason}"
                    )));
                }
            }
            // A handler its runner does not run (yet): listed with the allow list's reason when
            // the list names it, a failure otherwise.
            CaseResult::NotRun(why) => match allowed(&options.allowed, &case_id) {
                Some(gap) => report.note_not_covered(gap),
                None => {
                    report.groups.entry(group).or_default().failed += 1;
                    report.unvisited.push(note(why));
                }
            },
        }
    }

    for notes in [
        &mut report.failed,
        &mut report.skipped,
        &mut report.unvisited,
    ] {
        notes.sort_by(|a, b| a.case.cmp(&b.case));
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// A case to run and the runner that runs it.
struct Job<'a> {
    runner: &'a dyn Runner,
    case: JobCase,
}

/// A case of a fork [`ForkName`] knows, or of a [`PendingFork`].
enum JobCase {
    Released(CaseContext),
    Pending(CaseContext<PendingFork>),
}

impl JobCase {
    fn id(&self) -> String {
        match self {
            JobCase::Released(case) => case.id(),
            JobCase::Pending(case) => case.id(),
        }
    }

    /// `config/fork/runner`.
    fn group(&self) -> String {
        match self {
            JobCase::Released(case) => format!("{}/{}/{}", case.config, case.fork, case.runner),
            JobCase::Pending(case) => format!("{}/{}/{}", case.config, case.fork, case.runner),
        }
    }
}

/// Runs the jobs on `threads` scoped workers pulling from a shared index; results come back in
/// job order. A panicking case becomes a failed case.
fn run_parallel(jobs: &[Job<'_>], threads: usize) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else {
                break;
            };
            let outcome = match &job.case {
                JobCase::Released(case) => run_one(case, || job.runner.run_case(case)),
                JobCase::Pending(case) => run_one(case, || job.runner.run_pending_fork_case(case)),
            };
            done.push((i, outcome));
        }
        done
    };

    let finished: Vec<(usize, Outcome)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .filter_map(|n| {
                std::thread::Builder::new()
                    .name(format!("ef_tests-{n}"))
                    .stack_size(WORKER_STACK_BYTES)
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        // Should no thread start, the jobs still run here.
        let mut finished = if workers.is_empty() {
            work()
        } else {
            Vec::new()
        };
        for worker in workers {
            // Cases catch their own panics, so a worker only fails on a bug here; its cases
            // then stay without a result and are reported below.
            if let Ok(done) = worker.join() {
                finished.extend(done);
            }
        }
        finished
    });

    let mut results: Vec<Option<Outcome>> = vec![None; jobs.len()];
    for (i, result) in finished {
        if let Some(slot) = results.get_mut(i) {
            *slot = Some(result);
        }
    }
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Outcome {
                result: CaseResult::Failed("its worker thread died".to_string()),
                unread: Vec::new(),
            })
        })
        .collect()
}

/// A case's result, with the files of a passed case that it never read (the accessed-files
/// check: each is a failure unless the allow list names it).
#[derive(Debug, Clone)]
struct Outcome {
    result: CaseResult,
    /// Paths relative to the case directory.
    unread: Vec<String>,
}

/// Runs one case, turning a panic into a failure; for a pass, lists the case's files it did
/// not read.
fn run_one<F: fmt::Display>(
    case: &CaseContext<F>,
    run_case: impl FnOnce() -> CaseResult,
) -> Outcome {
    let (result, read) = track_reads(|| {
        if let Err(e) = check_manifest(case) {
            return CaseResult::Failed(e);
        }
        catch_unwind(AssertUnwindSafe(run_case)).unwrap_or_else(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            CaseResult::Failed(format!("panicked: {message}"))
        })
    });
    if result != CaseResult::Passed {
        return Outcome {
            result,
            unread: Vec::new(),
        };
    }
    match unread_files(&case.path, &read) {
        Ok(unread) => Outcome { result, unread },
        Err(e) => Outcome {
            result: CaseResult::Failed(format!("cannot list the case's files: {e}")),
            unread: Vec::new(),
        },
    }
}

/// `manifest.yaml`, which every recent case has: the case's place in the tree, which must be
/// where it lies.
///
/// [format]: consensus-specs tests/formats/README.md#manifestyaml
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    preset: String,
    fork: String,
    runner: String,
    handler: String,
    suite: String,
    case: String,
}

/// Reads the case's `manifest.yaml`, if it has one, and checks it names the case's directory.
fn check_manifest<F: fmt::Display>(case: &CaseContext<F>) -> Result<(), String> {
    let path = case.file("manifest.yaml");
    if !path.is_file() {
        return Ok(());
    }
    let manifest: Manifest = read_yaml(&path)?;
    let fork = case.fork.to_string();
    let expected = [
        ("preset", &manifest.preset, &case.config),
        ("fork", &manifest.fork, &fork),
        ("runner", &manifest.runner, &case.runner),
        ("handler", &manifest.handler, &case.handler),
        ("suite", &manifest.suite, &case.suite),
        ("case", &manifest.case, &case.case),
    ];
    for (key, got, want) in expected {
        if got != want {
            return Err(format!(
                "manifest.yaml names {key} {got:?}, but the case lies under {want:?}"
            ));
        }
    }
    Ok(())
}

/// The files under `dir` (hidden entries aside, subdirectories included) not in `read`, as
/// paths relative to `dir`.
fn unread_files(dir: &Path, read: &BTreeSet<PathBuf>) -> std::io::Result<Vec<String>> {
    let mut unread = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if !read.contains(&path) {
                let relative = path.strip_prefix(dir).unwrap_or(&path);
                unread.push(relative.display().to_string());
            }
        }
    }
    unread.sort();
    Ok(unread)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    /// A directory at case depth.
    Case,
    /// A file (not a directory) at handler, suite or case depth.
    Stray,
}

/// A walked entry; `components` are the six path levels, padded with empty strings for a stray
/// file found above case depth.
#[derive(Debug)]
struct Entry {
    components: [String; DEPTH],
    path: PathBuf,
    kind: EntryKind,
}

/// Every case directory (and every stray file at handler level or below) under `tests`, sorted.
fn walk(tests: &Path) -> Result<Vec<Entry>, HarnessError> {
    let mut entries = Vec::new();
    let mut prefix = Vec::with_capacity(DEPTH);
    walk_level(tests, &mut prefix, &mut entries)?;
    Ok(entries)
}

fn walk_level(
    dir: &Path,
    prefix: &mut Vec<String>,
    entries: &mut Vec<Entry>,
) -> Result<(), HarnessError> {
    let read_dir = |path: &Path| -> Result<Vec<(String, PathBuf)>, HarnessError> {
        let err = |source| HarnessError::ReadDir {
            path: path.to_path_buf(),
            source,
        };
        let mut children = Vec::new();
        for entry in std::fs::read_dir(path).map_err(err)? {
            let entry = entry.map_err(err)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // Hidden entries (editor files, `.DS_Store`) are not part of the layout.
            if !name.starts_with('.') {
                children.push((name, entry.path()));
            }
        }
        children.sort();
        Ok(children)
    };

    for (name, path) in read_dir(dir)? {
        let depth = prefix.len() + 1;
        let is_dir = path.is_dir();
        if !is_dir {
            // Files beside configs, forks or runners (READMEs) are not cases; below a runner
            // they are where a case should be.
            if depth > RUNNER_LEVEL + 1 {
                entries.push(Entry {
                    components: components(prefix, &name),
                    path,
                    kind: EntryKind::Stray,
                });
            }
            continue;
        }
        if depth == DEPTH {
            entries.push(Entry {
                components: components(prefix, &name),
                path,
                kind: EntryKind::Case,
            });
        } else {
            prefix.push(name);
            walk_level(&path, prefix, entries)?;
            prefix.pop();
        }
    }
    Ok(())
}

/// `prefix + [name]`, padded to six components.
fn components(prefix: &[String], name: &str) -> [String; DEPTH] {
    let mut out: [String; DEPTH] = Default::default();
    for (slot, part) in out
        .iter_mut()
        .zip(prefix.iter().map(String::as_str).chain([name]))
    {
        *slot = part.to_string();
    }
    out
}

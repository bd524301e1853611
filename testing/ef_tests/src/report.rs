//! What a run found, and how it is printed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::allow_list::AllowedGap;

/// At most this many failed (and, separately, unvisited) cases are printed one by one.
const MAX_LISTED: usize = 50;

/// Pass/fail/skip counts of one `config/fork/runner`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cases whose every check held.
    pub passed: usize,
    /// Failed cases, unvisited ones included.
    pub failed: usize,
    /// Cases skipped with a reason.
    pub skipped: usize,
}

/// A case named in the report, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseNote {
    /// `config/fork/runner/handler/suite/case`.
    pub case: String,
    /// The failure message, the skip reason or why the case was not run.
    pub message: String,
}

/// The cases an allow-list entry left unrun, with the entry's reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotCovered {
    /// Why the gap is accepted, and what closes it (the entry's reason).
    pub reason: String,
    /// Cases left unrun under the entry.
    pub cases: usize,
}

/// The result of a whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The `tests/` directories that were walked.
    pub tests_dirs: Vec<PathBuf>,
    /// Counts per covered `config/fork/runner`, in directory order.
    pub groups: BTreeMap<String, Counts>,
    /// Cases no runner ran (no runner for their directory, or none for their handler or fork)
    /// that the allow list names, by the entry's path: never silent, each printed with its
    /// reason.
    pub not_covered: BTreeMap<String, NotCovered>,
    /// Skipped cases with their reasons.
    pub skipped: Vec<CaseNote>,
    /// Failed cases (unvisited ones are in [`Report::unvisited`], not here).
    pub failed: Vec<CaseNote>,
    /// Entries under a covered runner that no runner ran: unknown types or handlers, unknown
    /// forks' cases are in `failed`, stray files here.
    pub unvisited: Vec<CaseNote>,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    /// Worker threads used.
    pub threads: usize,
    /// Case filters of the run, if any (then only matching cases were considered).
    pub filters: Vec<String>,
    /// Files of passed cases left unread, by the allow-list entry that names them, with the
    /// count (any other unread file fails its case).
    pub unread_allowed: BTreeMap<String, usize>,
}

impl Report {
    /// Counts one case left unrun under the allow-list entry `gap`.
    pub fn note_not_covered(&mut self, gap: &AllowedGap) {
        let entry = self
            .not_covered
            .entry(gap.path.to_string())
            .or_insert_with(|| NotCovered {
                reason: gap.reason.to_string(),
                cases: 0,
            });
        entry.cases += 1;
    }

    /// Totals over every covered runner; `failed` includes the unvisited cases.
    pub fn totals(&self) -> Counts {
        self.groups
            .values()
            .fold(Counts::default(), |acc, c| Counts {
                passed: acc.passed + c.passed,
                failed: acc.failed + c.failed,
                skipped: acc.skipped + c.skipped,
            })
    }

    /// True when nothing failed and every case under a covered runner was run.
    pub fn is_success(&self) -> bool {
        self.failed.is_empty() && self.unvisited.is_empty() && self.totals().failed == 0
    }

    /// The report as printed: one line per `config/fork/runner`, the runners not covered yet,
    /// skips, failures, unvisited cases, then `spec tests: N passed, M failed, K skipped`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail; the results are ignored through `let _`.
        let dirs: Vec<String> = self
            .tests_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let _ = writeln!(out, "spec tests under {}", dirs.join(", "));
        if !self.filters.is_empty() {
            let _ = writeln!(out, "only cases matching: {}", self.filters.join(", "));
        }
        for (group, counts) in &self.groups {
            let _ = writeln!(
                out,
                "{group}: {} passed, {} failed, {} skipped",
                counts.passed, counts.failed, counts.skipped
            );
        }

        if self.not_covered.is_empty() {
            let _ = writeln!(out, "not covered yet: none");
        } else {
            let total: usize = self.not_covered.values().map(|n| n.cases).sum();
            let _ = writeln!(
                out,
                "not covered yet ({}, on the allow list testing/ef_tests/src/allow_list.rs):",
                cases(total)
            );
            for (path, gap) in &self.not_covered {
                let _ = writeln!(
                    out,
                    "  {path} ({}): {}",
                    cases(gap.cases),
                    indent(&gap.reason)
                );
            }
        }

        if !self.skipped.is_empty() {
            // Skips are listed per handler and reason, not per case.
            let mut by_reason: BTreeMap<(String, &str), usize> = BTreeMap::new();
            for note in &self.skipped {
                *by_reason
                    .entry((handler_of(&note.case), note.message.as_str()))
                    .or_default() += 1;
            }
            let _ = writeln!(out, "skipped ({}):", self.skipped.len());
            for ((handler, reason), n) in by_reason {
                let _ = writeln!(out, "  {handler} ({}): {}", cases(n), indent(reason));
            }
        }

        if !self.unread_allowed.is_empty() {
            let list: Vec<String> = self
                .unread_allowed
                .iter()
                .map(|(path, n)| format!("{path} ({n} files)"))
                .collect();
            let _ = writeln!(out, "unread, on the allow list: {}", list.join(", "));
        }

        list_notes(&mut out, "failed", &self.failed);
        list_unvisited(&mut out, &self.unvisited);

        let totals = self.totals();
        let _ = writeln!(
            out,
            "ran {} cases in {:.2} s on {} threads",
            totals.passed + totals.failed + totals.skipped,
            self.elapsed.as_secs_f64(),
            self.threads
        );
        let _ = writeln!(
            out,
            "spec tests: {} passed, {} failed, {} skipped",
            totals.passed, totals.failed, totals.skipped
        );
        out
    }
}

/// Lists up to [`MAX_LISTED`] notes under a heading, then how many more there are.
fn list_notes(out: &mut String, heading: &str, notes: &[CaseNote]) {
    if notes.is_empty() {
        return;
    }
    let _ = writeln!(out, "{heading} ({}):", notes.len());
    for note in notes.iter().take(MAX_LISTED) {
        let _ = writeln!(out, "  {}: {}", note.case, indent(&note.message));
    }
    if notes.len() > MAX_LISTED {
        let _ = writeln!(out, "  … and {} more", notes.len() - MAX_LISTED);
    }
}

/// Lists unvisited entries per handler and reason (the reason is usually the handler's: an
/// unknown type), then up to [`MAX_LISTED`] of their directories.
fn list_unvisited(out: &mut String, notes: &[CaseNote]) {
    if notes.is_empty() {
        return;
    }
    let mut by_reason: BTreeMap<(String, &str), Vec<&str>> = BTreeMap::new();
    for note in notes {
        let handler = handler_of(&note.case);
        let rest = note
            .case
            .get(handler.len()..)
            .unwrap_or_default()
            .trim_start_matches('/');
        let rest = if rest.is_empty() { "." } else { rest };
        by_reason
            .entry((handler, note.message.as_str()))
            .or_default()
            .push(rest);
    }
    let _ = writeln!(
        out,
        "unvisited ({}): under a covered runner, but no runner ran them",
        notes.len()
    );
    for ((handler, reason), dirs) in by_reason {
        let _ = writeln!(
            out,
            "  {handler} ({}): {}",
            cases(dirs.len()),
            indent(reason)
        );
        let shown: Vec<&str> = dirs.iter().copied().take(MAX_LISTED).collect();
        let more = dirs.len() - shown.len();
        let _ = write!(out, "    {}", shown.join(", "));
        if more > 0 {
            let _ = write!(out, " … and {more} more");
        }
        let _ = writeln!(out);
    }
}

/// `1 case`, `2 cases`.
fn cases(n: usize) -> String {
    if n == 1 {
        "1 case".to_string()
    } else {
        format!("{n} cases")
    }
}

/// `config/fork/runner/handler` of a case id.
fn handler_of(case: &str) -> String {
    case.split('/').take(4).collect::<Vec<_>>().join("/")
}

/// Indents continuation lines of a multi-line message under its case.
fn indent(message: &str) -> String {
    message.trim_end().replace('\n', "\n      ")
}

//! The fork-dispatch check: outside `consensus/types`, a `match` whose arms name a fork of
//! `ForkName` or a variant of one of `types`' fork enums (`BeaconState::Fulu`, …) must name
//! every fork: an arm `_ =>` or a bare binding (`other =>`) would silently send a fork added
//! later down one fork's path (Fulu's, "no blobs", skip). `cargo test` runs it over the
//! workspace (`tests/workspace.rs`); a match with a catch-all arm fails it with `file:line`.
//!
//! Where a later fork's behaviour is not implemented, the arm names the fork and returns a
//! typed error (`UnsupportedFork(ForkName)` and its like), never a panic or another fork's path.

use std::path::{Path, PathBuf};

use syn::visit::Visit;
use syn::{Arm, ExprMatch, Pat};

/// The forks, as `ForkName` names its variants.
pub const FORKS: &[&str] = &[
    "Phase0",
    "Altair",
    "Bellatrix",
    "Capella",
    "Deneb",
    "Electra",
    "Fulu",
    "Gloas",
];

/// The enums over forks: `ForkName` and the fork enums of `types::combined`.
pub const FORK_ENUMS: &[&str] = &[
    "ForkName",
    "BeaconState",
    "SignedBeaconBlock",
    "BeaconBlock",
    "BeaconBlockBody",
    "ExecutionPayload",
    "ExecutionPayloadHeader",
    "Attestation",
    "AttesterSlashing",
    "BlobSidecar",
    "DataColumnSidecar",
    "LightClientHeader",
    "LightClientBootstrap",
    "LightClientUpdate",
    "LightClientFinalityUpdate",
    "LightClientOptimisticUpdate",
];

/// A `match` on a fork enum with a catch-all arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The file, as given to [`check_source`].
    pub file: String,
    /// 1-based line of the catch-all arm.
    pub line: usize,
    /// The catch-all arm's pattern.
    pub pattern: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: `{} =>` in a match on a fork enum: name each fork (a fork not implemented \
             yet returns a typed error naming it)",
            self.file, self.line, self.pattern
        )
    }
}

/// Whether `path` is `…::ForkEnum::Fork`.
fn is_fork_path(path: &syn::Path) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [.., owner, variant] => {
            FORK_ENUMS.contains(&owner.as_str()) && FORKS.contains(&variant.as_str())
        }
        _ => false,
    }
}

/// Whether `pat` names a fork of a fork enum (anywhere in it, or-patterns and references
/// included), at the top level of the scrutinee (`tuple` = `None`) or at element `tuple` of a
/// tuple scrutinee.
fn names_fork(pat: &Pat, tuple: Option<usize>) -> bool {
    match (pat, tuple) {
        (Pat::Or(or), _) => or.cases.iter().any(|p| names_fork(p, tuple)),
        (Pat::Reference(r), _) => names_fork(&r.pat, tuple),
        (Pat::Paren(p), _) => names_fork(&p.pat, tuple),
        (Pat::Ident(i), _) if i.subpat.is_some() => {
            i.subpat.as_ref().is_some_and(|(_, p)| names_fork(p, tuple))
        }
        (Pat::Tuple(t), Some(i)) => t.elems.iter().nth(i).is_some_and(|p| names_fork(p, None)),
        (Pat::Path(p), None) => is_fork_path(&p.path),
        (Pat::TupleStruct(p), None) => is_fork_path(&p.path),
        (Pat::Struct(p), None) => is_fork_path(&p.path),
        _ => false,
    }
}

/// Whether `pat` matches anything at the top level (`tuple` = `None`) or at element `tuple`.
fn catches_all(pat: &Pat, tuple: Option<usize>) -> bool {
    match (pat, tuple) {
        (Pat::Wild(_), _) => true,
        (Pat::Ident(i), _) if i.subpat.is_none() => {
            // A bare lower-case binding; an upper-case identifier is a unit variant or constant.
            i.ident
                .to_string()
                .chars()
                .next()
                .is_some_and(|c| c.is_lowercase() || c == '_')
        }
        (Pat::Ident(i), _) => i
            .subpat
            .as_ref()
            .is_some_and(|(_, p)| catches_all(p, tuple)),
        (Pat::Or(or), _) => or.cases.iter().any(|p| catches_all(p, tuple)),
        (Pat::Reference(r), _) => catches_all(&r.pat, tuple),
        (Pat::Paren(p), _) => catches_all(&p.pat, tuple),
        (Pat::Tuple(t), Some(i)) => t.elems.iter().nth(i).is_some_and(|p| catches_all(p, None)),
        (Pat::Rest(_), Some(_)) => true,
        _ => false,
    }
}

struct Visitor<'a> {
    file: &'a str,
    found: Vec<Violation>,
}

impl Visitor<'_> {
    fn check(&mut self, arms: &[Arm]) {
        let widest = arms
            .iter()
            .filter_map(|arm| match &arm.pat {
                Pat::Tuple(t) => Some(t.elems.len()),
                _ => None,
            })
            .max();
        let positions = std::iter::once(None).chain((0..widest.unwrap_or(0)).map(Some));
        for position in positions {
            if !arms.iter().any(|arm| names_fork(&arm.pat, position)) {
                continue;
            }
            for arm in arms {
                // A guarded arm does not catch everything.
                if arm.guard.is_none() && catches_all(&arm.pat, position) {
                    let pat = &arm.pat;
                    let line = syn::spanned::Spanned::span(pat).start().line;
                    let pattern = quote_pat(pat);
                    let violation = Violation {
                        file: self.file.to_owned(),
                        line,
                        pattern,
                    };
                    if !self.found.contains(&violation) {
                        self.found.push(violation);
                    }
                }
            }
        }
    }
}

/// The pattern's source text, whitespace collapsed.
fn quote_pat(pat: &Pat) -> String {
    use proc_macro2::TokenStream;
    let mut tokens = TokenStream::new();
    syn::__private::ToTokens::to_tokens(pat, &mut tokens);
    tokens.to_string()
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_expr_match(&mut self, node: &'ast ExprMatch) {
        self.check(&node.arms);
        syn::visit::visit_expr_match(self, node);
    }
}

/// The violations in one file's source; `file` names it in the messages.
pub fn check_source(file: &str, source: &str) -> Result<Vec<Violation>, syn::Error> {
    let syntax = syn::parse_file(source)?;
    let mut visitor = Visitor {
        file,
        found: Vec::new(),
    };
    visitor.visit_file(&syntax);
    Ok(visitor.found)
}

/// The `.rs` files under `root` the check covers: all but `consensus/types` (whose fork enums
/// are the one place that lists the forks), build output and hidden directories.
pub fn workspace_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                let skipped = name.starts_with('.')
                    || name == "target"
                    || path == root.join("consensus").join("types");
                if !skipped {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

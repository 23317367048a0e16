//! The compiler, and the one way to get a [`RuleSet`]: [`load_dir`] has the front end
//! ([`crate::source`]) read every rule file of a directory, validate each against the JSON
//! Schema and read it into the rule types; then the passes below merge the files and build the
//! compiled form ([`crate::ruleset`]). Every problem is collected as a [`Diagnostic`] with its
//! file:line:column; a ruleset is only produced when there is no error. `turnout lint`,
//! `turnout test`, `route` and the service's reload all call this, so they can never disagree
//! about what a rule file means.
//!
//! One file per pass: `symbols` (ids), `lists` (word lists, patterns, the scanner), `tools`
//! and `extract` (arguments), `router`, `rules` (search, pre-rules, guards), `conditions`.
//! [`Compiler::compile`] runs them in order. The engine and the models read the compiled form
//! only; they import nothing from here (the layers test holds them to it).

mod conditions;
mod extract;
mod lists;
mod router;
mod rules;
mod symbols;
mod tools;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::diag::{Code, Diagnostic};
use crate::rules::RuleFile;
use crate::ruleset::{RuleSet, index};
use crate::source::{Limits, Parsed, ReadDir, SourceFile, load, read_dir};

/// What loading a directory gave: the ruleset if nothing was an error, and every finding.
#[derive(Debug)]
pub struct Loaded {
    /// The ruleset, when the files had no error.
    pub ruleset: Option<RuleSet>,
    /// Every error and warning, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// The input could not be used at all (no such directory, unreadable file).
    pub unusable: bool,
    /// Each rule file's path and text as read: what the findings point into (print their
    /// source lines from these, `report::Sources`, not from a second read).
    pub texts: Vec<(PathBuf, String)>,
}

/// Loads and compiles every rule file in `dir` (and its subfolders) within the default
/// [`Limits`].
pub fn load_dir(dir: &Path) -> Loaded {
    load_dir_with(dir, &Limits::default())
}

/// Loads and compiles every rule file in `dir` within `limits`.
pub fn load_dir_with(dir: &Path, limits: &Limits) -> Loaded {
    compile_read(read_dir(dir, limits), limits)
}

/// Compiles what [`read_dir`] read (the reload reads first, to see whether anything changed).
pub fn compile_read(read: ReadDir, limits: &Limits) -> Loaded {
    compile_read_inner(read, limits, false)
}

/// [`compile_read`], with each located finding quoting its source line
/// ([`Location::source`](crate::diag::Location::source)): what a reader that cannot open the
/// files needs (the service's `/v1/rules`, the playground's banner).
pub fn compile_read_quoting(read: ReadDir, limits: &Limits) -> Loaded {
    compile_read_inner(read, limits, true)
}

fn compile_read_inner(read: ReadDir, limits: &Limits, quote: bool) -> Loaded {
    let version = read.version();
    let read_failed = read.diagnostics.iter().any(Diagnostic::is_error);
    let mut loaded = compile_texts(
        &read.texts,
        version,
        limits,
        Some(read.dir.clone()),
        read_failed,
    );
    let mut diagnostics = read.diagnostics;
    diagnostics.append(&mut loaded.diagnostics);
    if diagnostics.iter().any(Diagnostic::is_error) {
        loaded.ruleset = None;
    }
    if quote {
        for d in &mut diagnostics {
            let Some(loc) = &mut d.location else { continue };
            loc.source = read
                .texts
                .iter()
                .find(|(path, _)| *path == loc.file)
                .and_then(|(_, text)| text.lines().nth(loc.line.checked_sub(1)?))
                .map(|line| line.trim_end_matches('\r').to_owned());
        }
    }
    loaded.diagnostics = diagnostics;
    loaded.unusable |= read.unusable;
    loaded.texts = read.texts;
    loaded
}

/// Compiles rule files given as (path, content) pairs; [`load_dir`] reads them from disk first.
pub fn load_texts(texts: &[(PathBuf, String)]) -> Loaded {
    let digest = load::digest_of(texts.iter().map(|(p, t)| (p.as_path(), t.as_bytes())));
    let mut loaded = compile_texts(
        texts,
        load::version_of(&digest),
        &Limits::default(),
        None,
        false,
    );
    loaded.texts = texts.to_vec();
    loaded
}

/// Findings that need every rule file: when one could not be loaded they may be false (the id
/// may be defined, or the list used, in the file that failed), so they are left out and one
/// note says so.
const NEED_EVERY_FILE: &[Code] = &[
    Code::UnknownTool,
    Code::UnknownSkill,
    Code::UnknownList,
    Code::UnknownIntegration,
    Code::MissingRouter,
    Code::UnusedList,
    Code::SkillEnum,
    Code::UngatedIntegrationTool,
];

fn compile_texts(
    texts: &[(PathBuf, String)],
    version: String,
    limits: &Limits,
    root: Option<PathBuf>,
    read_failed: bool,
) -> Loaded {
    let Parsed {
        files: parsed,
        mut diagnostics,
        failed,
    } = crate::source::parse_rule_files(texts, limits);
    let mut compiler = Compiler::new(&parsed, root, *limits);
    let ruleset = compiler.compile(version, texts.iter().map(|(p, _)| p.clone()).collect());
    let incomplete = read_failed || !failed.is_empty();
    if incomplete {
        let before = compiler.diagnostics.len();
        compiler
            .diagnostics
            .retain(|d| !NEED_EVERY_FILE.contains(&d.code));
        // Nothing read at all (no such directory): there is nothing to skip checks of.
        if compiler.diagnostics.len() < before && !texts.is_empty() {
            let names: Vec<String> = failed.iter().map(|p| p.display().to_string()).collect();
            let which = if names.is_empty() {
                "a rule file".to_owned()
            } else {
                names.join(", ")
            };
            // One line, once: it explains what is missing, it is not a mistake of its own.
            diagnostics.push(Diagnostic::note(
                Code::SkippedChecks,
                format!(
                    "checks across files (unknown ids, unused word lists, the router, the \
                     skills) run once {which} loads"
                ),
            ));
        }
    }
    diagnostics.append(&mut compiler.diagnostics);
    // The parsed files are many small values: freeing them took 10 ms of a grown pack's load,
    // which need not wait for it.
    drop(compiler);
    rayon::spawn(move || drop(parsed));
    let ruleset = if incomplete || diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        ruleset
    };
    Loaded {
        ruleset,
        diagnostics,
        unusable: false,
        texts: Vec::new(),
    }
}

pub(crate) struct Compiler<'a> {
    files: &'a [(SourceFile, RuleFile)],
    /// The rules directory, when the files came from one (script paths are relative to it).
    root: Option<PathBuf>,
    limits: Limits,
    pub diagnostics: Vec<Diagnostic>,
    pub tool_ids: HashMap<String, usize>,
    pub skill_ids: HashMap<String, usize>,
    pub list_ids: HashMap<String, usize>,
    pub list_used: Vec<bool>,
    /// Declared integrations; empty when the rules declare none (then `integration:` values
    /// are not checked).
    pub integration_ids: HashMap<String, usize>,
    /// Every `extract` pattern compiled, by its text (see [`compile_each`]).
    pub extract_patterns: HashMap<&'a str, Result<regex::Regex, crate::text::EntryError>>,
}

/// Compiles each distinct text once, on every core: compiling patterns is most of a large
/// pack's compile, and each is independent of the others.
fn compile_each<'t, T: Send>(
    texts: impl Iterator<Item = &'t str>,
    compile: impl Fn(&str) -> T + Sync,
) -> HashMap<&'t str, T> {
    let mut texts: Vec<&str> = texts.collect();
    texts.sort_unstable();
    texts.dedup();
    texts.into_par_iter().map(|t| (t, compile(t))).collect()
}

/// Finds the closest known id, for "did you mean …?" hints.
pub(crate) fn did_you_mean<'k>(
    wrong: &str,
    known: impl IntoIterator<Item = &'k String>,
) -> Option<String> {
    known
        .into_iter()
        .map(|k| (strsim::levenshtein(wrong, k), k))
        .filter(|(d, k)| *d <= 3.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| format!("did you mean '{k}'?"))
}

impl Compiler<'_> {
    /// The "did you mean" hint for an unknown word list; the list it names counts as used, so
    /// one misspelt `mentions` is one finding (`unknown-list`), not also `unused-list`.
    pub(super) fn list_meant(&mut self, wrong: &str) -> Option<String> {
        let hint = did_you_mean(wrong, self.list_ids.keys())?;
        let meant = hint.split('\'').nth(1).unwrap_or_default();
        if let Some(&i) = self.list_ids.get(meant) {
            self.list_used[i] = true;
        }
        Some(hint)
    }
}

impl<'a> Compiler<'a> {
    fn new(files: &'a [(SourceFile, RuleFile)], root: Option<PathBuf>, limits: Limits) -> Self {
        Self {
            files,
            root,
            limits,
            diagnostics: Vec::new(),
            tool_ids: HashMap::new(),
            skill_ids: HashMap::new(),
            list_ids: HashMap::new(),
            list_used: Vec::new(),
            integration_ids: HashMap::new(),
            extract_patterns: HashMap::new(),
        }
    }

    pub fn error(&mut self, code: Code, message: String, file: &SourceFile, pointer: &str) {
        self.diagnostics
            .push(Diagnostic::error(code, message).at(Some(file.locate(pointer))));
    }

    fn warn(&mut self, code: Code, message: String, file: &SourceFile, pointer: &str) {
        self.diagnostics
            .push(Diagnostic::warning(code, message).at(Some(file.locate(pointer))));
    }

    /// Runs the passes in order and builds the ruleset when nothing was an error.
    fn compile(&mut self, version: String, paths: Vec<PathBuf>) -> Option<RuleSet> {
        self.symbols();
        let normalizer = self.normalizer();
        // Every pattern, list and extraction patterns side by side (on a small pack either
        // kind alone leaves a core idle), while the lists' words are checked.
        let files = self.files;
        let ((list_patterns, extract_patterns), checked) = rayon::join(
            || {
                rayon::join(
                    || lists::patterns(files),
                    || tools::extraction_patterns(files),
                )
            },
            || lists::check_words(files, &normalizer),
        );
        self.extract_patterns = extract_patterns;
        let (lists, keys) = self.lists(&list_patterns, checked);
        // The scanner's automata (a quarter of the work) are built on another core while the
        // rest compiles; its finding, if any, is added after.
        let (scanner, (skills, tools, router, search, pre_rules, guards)) = rayon::join(
            || lists::scanner(&lists, &keys, &normalizer, files),
            || {
                let skills = self.skills();
                let tools = self.tools(&normalizer);
                self.integrations();
                let router = self.router(&skills, &normalizer);
                let search = self.search();
                let pre_rules = self.pre_rules(&tools);
                let guards = self.guards(tools.len());
                (skills, tools, router, search, pre_rules, guards)
            },
        );
        let scanner = self.scanner_finding(scanner, &lists);
        self.unused_lists(&lists);
        self.diagnostics.sort_by_key(|d| {
            d.location
                .as_ref()
                .map(|l| (l.file.clone(), l.line, l.column))
        });

        let router = router?;
        let (guards, guards_by_tool) = guards;
        if self.diagnostics.iter().any(Diagnostic::is_error) || tools.len() != self.tool_ids.len() {
            return None;
        }
        let pre_index = index::RuleIndex::new(pre_rules.iter().map(|r| r.when.gate()), lists.len());
        let search_index = index::RuleIndex::new(
            search
                .iter()
                .flat_map(|s| s.rules.iter().map(|r| r.when.gate())),
            lists.len(),
        );
        let guard_gates = guards
            .iter()
            .map(|g| g.drop_when.gate().map(Vec::into_boxed_slice))
            .collect();
        Some(RuleSet {
            version: Arc::from(version),
            files: paths,
            tools,
            tool_ids: self.tool_ids.clone(),
            skills,
            skill_ids: self.skill_ids.clone(),
            lists,
            scanner,
            pre_rules,
            router,
            search,
            pre_index,
            search_index,
            guard_gates,
            guards,
            guards_by_tool,
            normalizer,
            integrations: {
                let mut ids: Vec<(&String, &usize)> = self.integration_ids.iter().collect();
                ids.sort_by_key(|(_, i)| **i);
                ids.into_iter()
                    .map(|(id, _)| Arc::from(id.as_str()))
                    .collect()
            },
        })
    }

    pub fn tool_ref(&mut self, id: &str, file: &SourceFile, pointer: &str) -> Option<usize> {
        if let Some(&i) = self.tool_ids.get(id) {
            return Some(i);
        }
        let hint = did_you_mean(id, self.tool_ids.keys());
        let mut d = Diagnostic::error(Code::UnknownTool, format!("unknown tool '{id}'"))
            .at(Some(file.locate(pointer)));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        self.diagnostics.push(d);
        None
    }

    pub fn skill_ref(&mut self, id: &str, file: &SourceFile, pointer: &str) -> Option<usize> {
        if let Some(&i) = self.skill_ids.get(id) {
            return Some(i);
        }
        let hint = did_you_mean(id, self.skill_ids.keys());
        let mut d = Diagnostic::error(Code::UnknownSkill, format!("unknown skill '{id}'"))
            .at(Some(file.locate(pointer)));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        self.diagnostics.push(d);
        None
    }
}

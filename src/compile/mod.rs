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
//! Each pass is a function: what it reads are its arguments, what it builds its result, and
//! what it finds goes to the one [`Findings`] it is handed. [`compile`] runs them in order. The
//! engine and the models read the compiled form only; they import nothing from here (the
//! layers test holds them to it).

mod conditions;
mod extract;
mod findings;
mod lists;
mod router;
mod rules;
mod symbols;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::{Code, Diagnostic};
use crate::rules::RuleFile;
use crate::ruleset::{RuleSet, index};
use crate::source::{Limits, Parsed, ReadDir, SourceFile, load, read_dir};
use findings::Findings;
pub(crate) use findings::did_you_mean;
use symbols::ListsUsed;

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
    let mut findings = Findings::default();
    let ruleset = compile(
        &parsed,
        router::Scripts {
            root: root.as_deref(),
            limits,
        },
        version,
        texts.iter().map(|(p, _)| p.clone()).collect(),
        &mut findings,
    );
    let mut found = findings.into_sorted();
    let incomplete = read_failed || !failed.is_empty();
    if incomplete {
        let before = found.len();
        found.retain(|d| !NEED_EVERY_FILE.contains(&d.code));
        // Nothing read at all (no such directory): there is nothing to skip checks of.
        if found.len() < before && !texts.is_empty() {
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
    diagnostics.append(&mut found);
    // The parsed files are many small values: freeing them took 10 ms of a grown pack's load,
    // which need not wait for it.
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

/// Runs the passes in order, each on what the ones before it built, every finding into
/// `findings`; builds the ruleset when nothing was an error. `scripts` says where a `script:`
/// router model is read from, `paths` are the files' paths as the ruleset lists them.
fn compile(
    files: &[(SourceFile, RuleFile)],
    scripts: router::Scripts<'_>,
    version: String,
    paths: Vec<PathBuf>,
    findings: &mut Findings,
) -> Option<RuleSet> {
    let symbols = symbols::collect(files, findings);
    let mut used = ListsUsed::none(&symbols);
    let normalizer = lists::normalizer(files, findings);
    // Every pattern, list and extraction patterns side by side (on a small pack either kind
    // alone leaves a core idle), while the lists' words are checked.
    let ((list_patterns, extract_patterns), checked) = rayon::join(
        || {
            rayon::join(
                || lists::patterns(files),
                || tools::extraction_patterns(files),
            )
        },
        || lists::check_words(files, &normalizer),
    );
    let (lists, keys) = lists::compile(
        files,
        &symbols,
        &list_patterns,
        checked,
        &mut used,
        findings,
    );
    // The scanner's automata (a quarter of the work) are built on another core while the
    // passes after the lists run; its finding, if any, is added after theirs.
    let (scanner, (skills, mut tools, router, search, pre_rules, guards)) = rayon::join(
        || lists::scanner(&lists, &keys, &normalizer, files),
        || {
            let skills = tools::skills(files);
            let norm = &normalizer;
            let tools = tools::compile(
                files,
                &symbols,
                norm,
                &extract_patterns,
                &mut used,
                findings,
            );
            tools::check_integrations(files, &symbols, findings);
            let router =
                router::compile(files, &symbols, &skills, norm, scripts, &mut used, findings);
            let search = rules::search(files, &symbols, &mut used, findings);
            let pre_rules = rules::pre_rules(files, &symbols, &tools, &mut used, findings);
            let guards = rules::guards(files, &symbols, tools.len(), &mut used, findings);
            (skills, tools, router, search, pre_rules, guards)
        },
    );
    lists::scanner_finding(&scanner, &lists, findings);
    // A real word the lists know is no typo of an argument's `choose` words either.
    if let Some(known) = scanner.known_words() {
        for x in tools.iter_mut().flat_map(|t| t.extract.iter_mut()) {
            x.words.share_known_words(known.clone());
        }
    }
    lists::unused(&lists, &symbols, &used, findings);

    let router = router?;
    let (guards, guards_by_tool) = guards;
    if findings.has_error() || tools.len() != symbols.tools.len() {
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
    let integrations = symbols.integrations_in_order();
    Some(RuleSet {
        version: Arc::from(version),
        files: paths,
        tools,
        tool_ids: symbols.tools,
        skills,
        skill_ids: symbols.skills,
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
        integrations,
    })
}

//! The one way to get a [`RuleSet`]: [`load_dir`] reads every rule file of a directory, validates
//! each against the JSON Schema, deserialises it, merges the files and compiles the result.
//! Every problem is collected as a [`Diagnostic`] with its file:line:column; a ruleset is only
//! produced when there is no error. `turnout lint`, `turnout test`, `route` and the service's
//! reload all call this, so they can never disagree about what a rule file means.

mod conditions;
pub(crate) mod events;
pub mod load;
pub mod ruleset;
pub mod schema;
pub mod source;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::diag::{Diagnostic, Location};
use crate::rules::{Action, RuleFile};
use crate::text::{Normalizer, WordMatcher};
use conditions::{CondCx, Scope};
use ruleset::{
    ActionDef, ArgTemplate, CallTemplateDef, GuardDef, ListDef, PreRuleDef, SearchDef,
    SearchRuleDef, TemplatePart,
};
pub use ruleset::{EmbeddedDef, RouterDef, RuleSet, SkillDef, ToolDef};
use schema::SchemaCheck;
use source::SpanMap;

/// What loading a directory gave: the ruleset if nothing was an error, and every finding.
#[derive(Debug)]
pub struct Loaded {
    /// The ruleset, when the files had no error.
    pub ruleset: Option<RuleSet>,
    /// Every error and warning, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// The input could not be used at all (no such directory, unreadable file).
    pub unusable: bool,
    /// The files that passed the schema, as parsed, with their position maps: what `lint`'s
    /// whole-model checks need to point back into the files. Same order as the compiler's.
    pub(crate) parsed: Vec<(SourceFile, RuleFile)>,
}

/// One parsed rule file with what is needed to point back into it.
#[derive(Debug)]
pub(crate) struct SourceFile {
    pub path: PathBuf,
    pub spans: SpanMap,
}

impl SourceFile {
    pub fn locate(&self, pointer: &str) -> Location {
        source::locate(&self.path, &self.spans, pointer)
    }

    /// Where the key of the mapping member at `pointer` is (its value's place when it has no
    /// key): for findings about a key itself, such as a section written twice.
    pub fn locate_key(&self, pointer: &str) -> Location {
        match self.spans.key(pointer) {
            Some((line, column)) => Location {
                file: self.path.clone(),
                line,
                column,
            },
            None => self.locate(pointer),
        }
    }
}

pub use load::{ReadDir, read_dir, rule_files};
pub use source::Limits;

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
    loaded.diagnostics = diagnostics;
    loaded.unusable |= read.unusable;
    loaded
}

/// Parses a YAML file and validates it against `check`'s schema: the value and its span map,
/// or every problem found. Rule files and test files both come in this way.
pub(crate) fn parse_checked(
    path: &Path,
    text: &str,
    check: &SchemaCheck,
    limits: &Limits,
) -> Result<(Value, SpanMap), Vec<Diagnostic>> {
    let (value, spans) = source::parse_yaml_limited(path, text, limits).map_err(|d| vec![d])?;
    let found = check.check(path, &value, &spans);
    if found.is_empty() {
        Ok((value, spans))
    } else {
        Err(found)
    }
}

/// Compiles rule files given as (path, content) pairs; [`load_dir`] reads them from disk first.
pub fn load_texts(texts: &[(PathBuf, String)]) -> Loaded {
    let digest = load::digest_of(texts.iter().map(|(p, t)| (p.as_path(), t.as_bytes())));
    compile_texts(
        texts,
        load::version_of(&digest),
        &Limits::default(),
        None,
        false,
    )
}

/// Findings that need every rule file: when one could not be loaded they may be false (the id
/// may be defined, or the list used, in the file that failed), so they are left out and one
/// note says so.
const NEED_EVERY_FILE: &[&str] = &[
    "unknown-tool",
    "unknown-skill",
    "unknown-list",
    "unknown-integration",
    "missing-router",
    "unused-list",
    "skill-enum",
    "ungated-integration-tool",
];

fn compile_texts(
    texts: &[(PathBuf, String)],
    version: String,
    limits: &Limits,
    root: Option<PathBuf>,
    read_failed: bool,
) -> Loaded {
    let check = SchemaCheck::rules();
    let mut diagnostics = Vec::new();
    let mut parsed = Vec::new();
    let mut failed: Vec<&Path> = Vec::new();
    for (path, text) in texts {
        let (value, spans) = match parse_checked(path, text, check, limits) {
            Ok(v) => v,
            Err(found) => {
                diagnostics.extend(found);
                failed.push(path);
                continue;
            }
        };
        match serde_json::from_value::<RuleFile>(value) {
            Ok(file) => parsed.push((
                SourceFile {
                    path: path.clone(),
                    spans,
                },
                file,
            )),
            // The schema is generated from the same types, so this is a safety net only.
            Err(e) => {
                failed.push(path);
                diagnostics.push(
                    Diagnostic::error(
                        "invalid",
                        format!("the file does not match the rule format: {e}"),
                    )
                    .at(Some(Location {
                        file: path.clone(),
                        line: 1,
                        column: 1,
                    })),
                )
            }
        }
    }
    let mut compiler = Compiler::new(&parsed, root, *limits);
    let ruleset = compiler.compile(version, texts.iter().map(|(p, _)| p.clone()).collect());
    let incomplete = read_failed || !failed.is_empty();
    if incomplete {
        let before = compiler.diagnostics.len();
        compiler
            .diagnostics
            .retain(|d| !NEED_EVERY_FILE.contains(&d.code));
        if compiler.diagnostics.len() < before {
            let names: Vec<String> = failed.iter().map(|p| p.display().to_string()).collect();
            let which = if names.is_empty() {
                "a rule file could not be read".to_owned()
            } else {
                format!("these files could not be loaded: {}", names.join(", "))
            };
            diagnostics.push(
                Diagnostic::note(
                    "skipped-checks",
                    format!(
                        "checks that need every rule file (unknown ids, unused word lists, the \
                         router section, the skill list) were skipped: {which}"
                    ),
                )
                .hint("fix the errors above first; the skipped checks run again then"),
            );
        }
    }
    diagnostics.append(&mut compiler.diagnostics);
    let ruleset = if incomplete || diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        ruleset
    };
    Loaded {
        ruleset,
        diagnostics,
        unusable: false,
        parsed,
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
        }
    }

    pub fn error(&mut self, code: &'static str, message: String, file: &SourceFile, pointer: &str) {
        self.diagnostics
            .push(Diagnostic::error(code, message).at(Some(file.locate(pointer))));
    }

    fn warn(&mut self, code: &'static str, message: String, file: &SourceFile, pointer: &str) {
        self.diagnostics
            .push(Diagnostic::warning(code, message).at(Some(file.locate(pointer))));
    }

    /// Records an id; a second definition is an error pointing at both places.
    fn define(
        &mut self,
        seen: &mut HashMap<String, Location>,
        kind: &str,
        id: &str,
        file: &SourceFile,
        pointer: &str,
    ) {
        let here = file.locate(pointer);
        if let Some(first) = seen.get(id) {
            let hint = format!(
                "first defined at {}:{}:{}",
                first.file.display(),
                first.line,
                first.column
            );
            self.diagnostics.push(
                Diagnostic::error("duplicate-id", format!("{kind} id '{id}' is defined twice"))
                    .at(Some(here))
                    .rule(id)
                    .hint(hint),
            );
        } else {
            seen.insert(id.to_owned(), here);
        }
    }

    fn compile(&mut self, version: String, paths: Vec<PathBuf>) -> Option<RuleSet> {
        let files = self.files;
        // Pass 1: ids, so every later reference can be resolved whatever the file order.
        let mut seen_tools = HashMap::new();
        let mut seen_skills = HashMap::new();
        let mut seen_lists = HashMap::new();
        let mut seen_rules = HashMap::new();
        let mut seen_integrations = HashMap::new();
        for (file, rf) in files {
            for (i, t) in rf.tools.iter().enumerate() {
                self.define(
                    &mut seen_tools,
                    "tool",
                    &t.id,
                    file,
                    &format!("/tools/{i}/id"),
                );
                let n = self.tool_ids.len();
                self.tool_ids.entry(t.id.clone()).or_insert(n);
            }
            for (i, s) in rf.skills.iter().enumerate() {
                self.define(
                    &mut seen_skills,
                    "skill",
                    &s.id,
                    file,
                    &format!("/skills/{i}/id"),
                );
                let n = self.skill_ids.len();
                self.skill_ids.entry(s.id.clone()).or_insert(n);
            }
            for (i, l) in rf.word_lists.iter().enumerate() {
                let p = format!("/word_lists/{i}/id");
                self.define(&mut seen_lists, "word list", &l.id, file, &p);
                let n = self.list_ids.len();
                self.list_ids.entry(l.id.clone()).or_insert(n);
            }
            for (i, g) in rf.integrations.iter().enumerate() {
                let p = format!("/integrations/{i}/id");
                self.define(&mut seen_integrations, "integration", &g.id, file, &p);
                let n = self.integration_ids.len();
                self.integration_ids.entry(g.id.clone()).or_insert(n);
            }
            let rule_ids = rf
                .pre_rules
                .iter()
                .enumerate()
                .map(|(i, r)| (&r.id, format!("/pre_rules/{i}/id")))
                .chain(
                    rf.guards
                        .iter()
                        .enumerate()
                        .map(|(i, g)| (&g.id, format!("/guards/{i}/id"))),
                )
                .chain(rf.search.iter().flat_map(|s| {
                    s.rules
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (&r.id, format!("/search/rules/{i}/id")))
                }))
                .chain(rf.router.iter().flat_map(|r| {
                    let ins = r
                        .instructions
                        .iter()
                        .enumerate()
                        .map(|(i, n)| (&n.id, format!("/router/instructions/{i}/id")));
                    let notes = r
                        .notes
                        .iter()
                        .enumerate()
                        .map(|(i, n)| (&n.id, format!("/router/notes/{i}/id")));
                    ins.chain(notes)
                }));
            for (id, p) in rule_ids.collect::<Vec<_>>() {
                self.define(&mut seen_rules, "rule", id, file, &p);
            }
        }
        self.list_used = vec![false; self.list_ids.len()];

        // Pass 2: normalisation, then word lists normalised the way messages will be.
        let normalizer = self.normalizer();
        let mut lists = Vec::new();
        for (file, rf) in files {
            for (i, l) in rf.word_lists.iter().enumerate() {
                if seen_lists_first(&lists, &l.id) {
                    continue;
                }
                lists.push(self.word_list(file, i, l, &normalizer));
            }
        }

        // Pass 3: skills and tools.
        let mut skills = Vec::new();
        for (_, rf) in files {
            for s in &rf.skills {
                if skills.iter().any(|d: &SkillDef| *d.id == *s.id) {
                    continue;
                }
                skills.push(SkillDef {
                    id: Arc::from(s.id.as_str()),
                    description: s.description.clone(),
                    badge: Arc::from(s.badge.as_str()),
                    auto: s.auto,
                    examples: s.examples.clone(),
                });
            }
        }
        let mut tools = Vec::new();
        for (file, rf) in files {
            for (i, t) in rf.tools.iter().enumerate() {
                if tools.iter().any(|d: &ToolDef| *d.id == *t.id) {
                    continue;
                }
                if let Some(def) = self.tool(file, i, t) {
                    tools.push(def);
                }
            }
        }

        // Pass 4: the integrations' tools, the router, the search detector, rules and guards.
        self.integrations();
        let router = self.router(&skills);
        let search = self.search();
        let pre_rules = self.pre_rules();
        let guards = self.guards(tools.len());

        let unused: Vec<String> = self
            .list_ids
            .iter()
            .filter(|&(_, &idx)| !self.list_used[idx])
            .map(|(name, _)| name.clone())
            .collect();
        for name in unused {
            {
                let place = files.iter().find_map(|(f, rf)| {
                    rf.word_lists
                        .iter()
                        .position(|l| l.id == name)
                        .map(|i| (f, format!("/word_lists/{i}/id")))
                });
                if let Some((f, p)) = place {
                    self.warn(
                        "unused-list",
                        format!("word list '{name}' is not used by any rule"),
                        f,
                        &p,
                    );
                }
            }
        }
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
        Some(RuleSet {
            version: Arc::from(version),
            files: paths,
            tools,
            tool_ids: self.tool_ids.clone(),
            skills,
            skill_ids: self.skill_ids.clone(),
            lists,
            pre_rules,
            router,
            search,
            guards,
            guards_by_tool,
            normalizer,
        })
    }

    /// The `matching` section: at most one, folds of one character to one character.
    fn normalizer(&mut self) -> Normalizer {
        let files = self.files;
        let mut found = files
            .iter()
            .filter_map(|(f, rf)| rf.matching.as_ref().map(|m| (f, m)));
        let Some((file, m)) = found.next() else {
            return Normalizer::default();
        };
        for (f2, _) in found {
            let d = Diagnostic::error(
                "duplicate-section",
                format!("'matching' is already defined in {}", file.path.display()),
            )
            .at(Some(f2.locate_key("/matching")))
            .hint("a rules directory has one 'matching' section; merge the two");
            self.diagnostics.push(d);
        }
        let mut folds = Vec::new();
        for (from, to) in &m.folds {
            let mut f = from.chars();
            let mut t = to.chars();
            match (f.next(), f.next(), t.next(), t.next()) {
                (Some(a), None, Some(b), None) if !a.is_ascii() => folds.push((a, b)),
                _ => {
                    let pointer = format!("/matching/folds/{}", source::escape(from));
                    let d = Diagnostic::error(
                        "bad-fold",
                        format!(
                            "fold '{from}' → '{to}': each side must be one character, and the first not ASCII (ASCII is only lower-cased)"
                        ),
                    )
                    .at(Some(file.locate_key(&pointer)));
                    self.diagnostics.push(d);
                }
            }
        }
        Normalizer::new(folds)
    }

    fn word_list(
        &mut self,
        file: &SourceFile,
        i: usize,
        l: &crate::rules::WordList,
        normalizer: &Normalizer,
    ) -> ListDef {
        let keys: Vec<String> = l
            .words
            .iter()
            .map(|w| normalizer.normalize(w.trim()))
            .collect();
        let heads: Vec<&str> = keys
            .iter()
            .map(|k| {
                k.split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('$')
            })
            .collect();
        for (j, w) in l.words.iter().enumerate() {
            let p = format!("/word_lists/{i}/words/{j}");
            if let Err(e) = WordMatcher::check_word(w) {
                self.error("bad-word", format!("word list '{}': {e}", l.id), file, &p);
                continue;
            }
            if let Some(first) = keys[..j].iter().position(|k| *k == keys[j]) {
                self.warn(
                    "duplicate-entry",
                    format!(
                        "'{w}' is already entry {} of word list '{}'",
                        first + 1,
                        l.id
                    ),
                    file,
                    &p,
                );
                continue;
            }
            // An entry another one already covers (a shorter stem, fewer words) adds nothing.
            let covering = (0..keys.len()).find(|&k| {
                k != j
                    && keys[k] != keys[j]
                    // Cheap first: `k`'s first stem must start `j`.
                    && keys[j].starts_with(heads[k])
                    && WordMatcher::covers(&keys[k], &keys[j])
                    && (k < j || !WordMatcher::covers(&keys[j], &keys[k]))
            });
            if let Some(k) = covering {
                let d = Diagnostic::warning(
                    "redundant-entry",
                    format!(
                        "'{w}' adds nothing to word list '{}': entry {} '{}' already matches everything it matches",
                        l.id,
                        k + 1,
                        l.words[k]
                    ),
                )
                .at(Some(file.locate(&p)))
                .hint(format!(
                    "a stem matches every word that starts with it, so '{}' already matches what '{w}' does; remove '{w}'",
                    l.words[k]
                ));
                self.diagnostics.push(d);
            }
        }
        let mut seen_patterns: HashMap<&str, usize> = HashMap::new();
        for (j, pat) in l.patterns.iter().enumerate() {
            let p = format!("/word_lists/{i}/patterns/{j}");
            if let Err(e) = WordMatcher::compile_pattern(pat) {
                let code = match e {
                    crate::text::EntryError::MatchesEmpty => "matches-empty",
                    _ => "bad-regex",
                };
                // The regex crate's message is several lines (the pattern, a caret, the error);
                // the finding gets its last line, the hint the rest.
                let text = e.to_string();
                let (message, hint) = match text.split_once('\n') {
                    Some((head, rest)) => {
                        let lines: Vec<&str> = rest.lines().collect();
                        let (last, shown) = lines.split_last().unwrap_or((&"", &[]));
                        let last = last.strip_prefix("error: ").unwrap_or(last);
                        let hint = (!shown.is_empty()).then(|| shown.join("\n"));
                        (format!("{} {last}", head.trim_end()), hint)
                    }
                    None => (text, None),
                };
                let mut d = Diagnostic::error(code, format!("word list '{}': {message}", l.id))
                    .at(Some(file.locate(&p)));
                if let Some(h) = hint {
                    d = d.hint(h);
                }
                self.diagnostics.push(d);
            }
            if let Some(first) = seen_patterns.insert(pat.as_str(), j) {
                self.warn(
                    "duplicate-entry",
                    format!(
                        "pattern '{pat}' is already pattern {} of word list '{}'",
                        first + 1,
                        l.id
                    ),
                    file,
                    &p,
                );
            }
        }
        if l.words.is_empty() && l.patterns.is_empty() {
            self.error(
                "empty-list",
                format!("word list '{}' has no words and no patterns", l.id),
                file,
                &format!("/word_lists/{i}/id"),
            );
        }
        let matcher = WordMatcher::new(&l.words, &l.patterns, normalizer);
        if let Some(e) = matcher.error() {
            self.error(
                "list-too-large",
                format!("word list '{}' cannot be compiled: {e}", l.id),
                file,
                &format!("/word_lists/{i}"),
            );
        }
        ListDef {
            id: Arc::from(l.id.as_str()),
            matcher,
            entries: l.words.iter().chain(&l.patterns).cloned().collect(),
        }
    }

    fn tool(&mut self, file: &SourceFile, i: usize, t: &crate::rules::Tool) -> Option<ToolDef> {
        let arguments = t.arguments.clone().unwrap_or_else(
            || serde_json::json!({"type": "object", "additionalProperties": false}),
        );
        let p = format!("/tools/{i}/arguments");
        let validator = match jsonschema::validator_for(&arguments) {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(
                    "bad-argument-schema",
                    format!(
                        "tool '{}': its arguments schema is not a valid JSON Schema: {e}",
                        t.id
                    ),
                    file,
                    &p,
                );
                None
            }
        };
        if t.consequential && !t.confirm {
            let d = Diagnostic::error(
                "unconfirmed-consequential",
                format!(
                    "tool '{}' is marked consequential but does not ask the user to confirm",
                    t.id
                ),
            )
            .at(Some(file.locate(&format!("/tools/{i}/consequential"))))
            .rule(t.id.as_str())
            .hint("add 'confirm: true' to the tool: a consequential action is only prepared, the user confirms it with a button");
            self.diagnostics.push(d);
        }
        let available_when = t.available_when.as_ref().map(|c| {
            let mut cx = CondCx::new(self, file, Scope::Request);
            cx.compile(c, &format!("/tools/{i}/available_when"))
        });
        Some(ToolDef {
            id: Arc::from(t.id.as_str()),
            description: t.description.clone(),
            chip: Arc::from(t.chip.as_str()),
            confirm: t.confirm,
            arguments,
            examples: t.examples.clone(),
            validator: validator?,
            available_when,
        })
    }

    /// Every tool an integration lists must exist and be offered only while the integration is
    /// connected: its `available_when` must require `integration: ID` (alone, inside an `all`,
    /// or in every branch of an `any`).
    fn integrations(&mut self) {
        let files = self.files;
        for (file, rf) in files {
            for (i, g) in rf.integrations.iter().enumerate() {
                for (j, id) in g.tools.iter().enumerate() {
                    let p = format!("/integrations/{i}/tools/{j}");
                    if self.tool_ref(id, file, &p).is_none() {
                        continue;
                    }
                    let tool = files.iter().find_map(|(tf, trf)| {
                        trf.tools
                            .iter()
                            .position(|t| t.id == *id)
                            .map(|k| (tf, k, &trf.tools[k]))
                    });
                    let Some((tf, k, t)) = tool else { continue };
                    let gated = t
                        .available_when
                        .as_ref()
                        .is_some_and(|c| requires_integration(c, &g.id));
                    if gated {
                        continue;
                    }
                    let (pointer, hint) = match &t.available_when {
                        Some(_) => (
                            format!("/tools/{k}/available_when"),
                            format!(
                                "make it hold only with the integration, e.g. available_when: {{all: [{{integration: {}}}, ...]}}",
                                g.id
                            ),
                        ),
                        None => (
                            format!("/tools/{k}/id"),
                            format!(
                                "add 'available_when: {{integration: {}}}' to the tool",
                                g.id
                            ),
                        ),
                    };
                    let d = Diagnostic::error(
                        "ungated-integration-tool",
                        format!(
                            "tool '{id}' needs integration '{}' (listed at {}:{}) but is offered without it",
                            g.id,
                            file.path.display(),
                            file.locate(&p).line
                        ),
                    )
                    .at(Some(tf.locate(&pointer)))
                    .rule(id.as_str())
                    .hint(hint);
                    self.diagnostics.push(d);
                }
            }
        }
    }

    /// The router section: exactly one, and its skill tool must agree with the skills.
    fn router(&mut self, skills: &[SkillDef]) -> Option<RouterDef> {
        let files = self.files;
        let mut found = files
            .iter()
            .filter_map(|(f, rf)| rf.router.as_ref().map(|r| (f, r)));
        let Some((file, r)) = found.next() else {
            self.diagnostics.push(Diagnostic::error(
                "missing-router",
                "no rule file has a 'router' section; one is required",
            ));
            return None;
        };
        for (f2, _) in found {
            let d = Diagnostic::error(
                "duplicate-section",
                format!("'router' is already defined in {}", file.path.display()),
            )
            .at(Some(f2.locate_key("/router")))
            .hint("a rules directory has one 'router' section; merge the two");
            self.diagnostics.push(d);
        }
        let skill_tool_idx = self.tool_ref(&r.skill_tool, file, "/router/skill_tool")?;
        // The skill tool's schema must list exactly the auto skills and the leave value (B9).
        let tool = files
            .iter()
            .flat_map(|(f, rf)| rf.tools.iter().enumerate().map(move |(i, t)| (f, i, t)))
            .find(|(_, _, t)| t.id == r.skill_tool);
        if let Some((tf, ti, t)) = tool {
            let enum_values: Option<Vec<String>> = t
                .arguments
                .as_ref()
                .and_then(|a| a.pointer(&format!("/properties/{}/enum", r.skill_argument)))
                .and_then(Value::as_array)
                .map(|a| {
                    // Non-strings keep their place (as JSON text) so positions stay right.
                    a.iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .collect()
                });
            let ptr = format!("/tools/{ti}/arguments/properties/{}", r.skill_argument);
            match enum_values {
                None => self.error(
                    "skill-enum",
                    format!(
                        "tool '{}' must list the allowed skills as an enum of its '{}' argument",
                        t.id, r.skill_argument
                    ),
                    tf,
                    &format!("/tools/{ti}"),
                ),
                Some(values) => self.skill_enum(skills, r, tf, &ptr, &t.id, &values),
            }
        }
        let model = match r
            .model
            .as_deref()
            .map(str::parse::<crate::model::ModelSpec>)
        {
            Some(Err(e)) => {
                self.error("bad-model", e.to_string(), file, "/router/model");
                None
            }
            Some(Ok(crate::model::ModelSpec::Script(script))) => self
                .script(&script, file)
                .map(crate::model::ModelSpec::Script),
            Some(Ok(spec)) => Some(spec),
            None => None,
        };
        let embedded = r.embedded.clone().unwrap_or_default();
        Some(RouterDef {
            history: r.history,
            temperature: r.temperature,
            max_tokens: r.max_tokens,
            timeout: std::time::Duration::from_millis(r.timeout_ms),
            max_calls: r.max_calls,
            skill_tool: Arc::from(r.skill_tool.as_str()),
            skill_argument: r.skill_argument.clone(),
            leave_skill_value: r.leave_skill_value.clone(),
            model_at: r.model.is_some().then(|| file.locate("/router/model")),
            instructions: r.instructions.iter().map(|n| n.text.clone()).collect(),
            notes: r.notes.iter().map(|n| n.text.clone()).collect(),
            model,
            retries: r.retries,
            embedded: ruleset::EmbeddedDef {
                threshold: embedded.threshold,
                margin: embedded.margin,
                chat_examples: embedded.chat_examples,
            },
            skill_tool_idx,
        })
    }

    /// A `script:FILE` router model named in the rules: FILE is relative to the rules directory
    /// and must stay inside it (rules never read files elsewhere), and it is read and checked
    /// now, through the same path as rule files, so a reload refuses what a start would.
    /// Returns the script's path as the service will read it.
    fn script(&mut self, script: &Path, file: &SourceFile) -> Option<PathBuf> {
        let root = match &self.root {
            Some(root) => root.clone(),
            None => file.path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        };
        let path = root.join(script);
        let inside = std::fs::canonicalize(&root).ok().and_then(|r| {
            std::fs::canonicalize(&path)
                .ok()
                .map(|p| (p.starts_with(&r), p))
        });
        match inside {
            Some((true, real)) => match load::load_script(&real, &self.limits) {
                Ok(_) => Some(real),
                Err(found) => {
                    let d = Diagnostic::error(
                        "bad-model",
                        format!(
                            "router.model: the script {} cannot be used",
                            script.display()
                        ),
                    )
                    .at(Some(file.locate("/router/model")))
                    .hint(
                        found
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    );
                    self.diagnostics.push(d);
                    None
                }
            },
            Some((false, _)) => {
                let d = Diagnostic::error(
                    "bad-model",
                    format!(
                        "router.model: the script {} is outside the rules directory; it was not read",
                        script.display()
                    ),
                )
                .at(Some(file.locate("/router/model")))
                .hint("put the script inside the rules directory (e.g. in tests/) and name it relative to the directory");
                self.diagnostics.push(d);
                None
            }
            None => {
                let d = Diagnostic::error(
                    "bad-model",
                    format!(
                        "router.model: there is no script {} in the rules directory",
                        script.display()
                    ),
                )
                .at(Some(file.locate("/router/model")))
                .hint("script paths are relative to the rules directory");
                self.diagnostics.push(d);
                None
            }
        }
    }

    /// The skill tool's allowed values must be exactly the auto-switch skills plus the leave
    /// value (B9). Each difference is reported where it can be fixed: a missing auto skill at its
    /// `auto`, an extra value at its place in the `enum`.
    fn skill_enum(
        &mut self,
        skills: &[SkillDef],
        r: &crate::rules::Router,
        tf: &SourceFile,
        ptr: &str,
        tool: &str,
        values: &[String],
    ) {
        let files = self.files;
        let allowed = format!("{tool}.{}", r.skill_argument);
        for s in skills.iter().filter(|s| s.auto) {
            if values.iter().any(|v| *v == *s.id) {
                continue;
            }
            let place = files.iter().find_map(|(f, rf)| {
                rf.skills
                    .iter()
                    .position(|k| *k.id == *s.id)
                    .map(|k| (f, format!("/skills/{k}/auto")))
            });
            if let Some((f, p)) = place {
                let d = Diagnostic::error(
                    "skill-enum",
                    format!(
                        "skill '{}' switches on automatically (auto: true) but is not an allowed value of '{allowed}'",
                        s.id
                    ),
                )
                .at(Some(f.locate(&p)))
                .rule(&*s.id)
                .hint(format!(
                    "add '{}' to the enum at {}:{}, or set 'auto: false'",
                    s.id,
                    tf.path.display(),
                    tf.locate(&format!("{ptr}/enum")).line
                ));
                self.diagnostics.push(d);
            }
        }
        for (k, v) in values.iter().enumerate() {
            if *v == r.leave_skill_value {
                continue;
            }
            let (message, hint) = match skills.iter().find(|s| *s.id == **v) {
                Some(s) if s.auto => continue,
                Some(_) => (
                    format!(
                        "'{allowed}' allows skill '{v}', which is not auto-switch (auto: false): the router would be told it may switch it on"
                    ),
                    Some(format!(
                        "remove '{v}' from the enum, or set 'auto: true' on the skill"
                    )),
                ),
                None => (
                    format!("'{allowed}' allows '{v}', which is not a skill"),
                    did_you_mean(v, self.skill_ids.keys()),
                ),
            };
            let mut d = Diagnostic::error("skill-enum", message)
                .at(Some(tf.locate(&format!("{ptr}/enum/{k}"))));
            if let Some(h) = hint {
                d = d.hint(h);
            }
            self.diagnostics.push(d);
        }
        if !values.contains(&r.leave_skill_value) {
            self.error(
                "skill-enum",
                format!(
                    "'{allowed}' must allow '{}' (the router's leave_skill_value), or the router cannot leave a skill",
                    r.leave_skill_value
                ),
                tf,
                &format!("{ptr}/enum"),
            );
        }
    }

    fn search(&mut self) -> Option<SearchDef> {
        let files = self.files;
        let mut found = files
            .iter()
            .filter_map(|(f, rf)| rf.search.as_ref().map(|s| (f, s)));
        let (file, s) = found.next()?;
        for (f2, _) in found {
            let d = Diagnostic::error(
                "duplicate-section",
                format!("'search' is already defined in {}", file.path.display()),
            )
            .at(Some(f2.locate_key("/search")))
            .hint("a rules directory has one 'search' section; merge the two");
            self.diagnostics.push(d);
        }
        let tool = self.tool_ref(&s.tool, file, "/search/tool");
        let mut cx = CondCx::new(self, file, Scope::Request);
        let off_when = s
            .off_when
            .as_ref()
            .map(|c| cx.compile(c, "/search/off_when"));
        let rules = s
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| SearchRuleDef {
                id: Arc::from(r.id.as_str()),
                when: cx.compile(&r.when, &format!("/search/rules/{i}/when")),
            })
            .collect();
        Some(SearchDef {
            tool: tool?,
            off_when,
            rules,
        })
    }

    fn pre_rules(&mut self) -> Vec<PreRuleDef> {
        let mut out = Vec::new();
        for (file, rf) in self.files {
            for (i, r) in rf.pre_rules.iter().enumerate() {
                let when = {
                    let mut cx = CondCx::new(self, file, Scope::Request);
                    cx.compile(&r.when, &format!("/pre_rules/{i}/when"))
                };
                let base = format!("/pre_rules/{i}/then");
                let action = match &r.then {
                    Action::Skill(s) if s == "active" => ActionDef::Skill(None),
                    Action::Skill(s) => {
                        ActionDef::Skill(self.skill_ref(s, file, &format!("{base}/skill")))
                    }
                    Action::Calls(calls) => ActionDef::Calls(
                        calls
                            .iter()
                            .enumerate()
                            .filter_map(|(j, c)| {
                                let p = format!("{base}/calls/{j}/tool");
                                let tool = self.tool_ref(&c.tool, file, &p)?;
                                Some(CallTemplateDef {
                                    tool,
                                    arguments: c
                                        .arguments
                                        .iter()
                                        .map(|(k, v)| (k.clone(), template(v)))
                                        .collect(),
                                })
                            })
                            .collect(),
                    ),
                };
                out.push(PreRuleDef {
                    id: Arc::from(r.id.as_str()),
                    when,
                    action,
                });
            }
        }
        out
    }

    fn guards(&mut self, n_tools: usize) -> (Vec<GuardDef>, Vec<Vec<usize>>) {
        let mut guards = Vec::new();
        let mut by_tool = vec![Vec::new(); n_tools.max(self.tool_ids.len())];
        for (file, rf) in self.files {
            for (i, g) in rf.guards.iter().enumerate() {
                let idx = guards.len();
                if g.tools.is_empty() {
                    by_tool.iter_mut().for_each(|v| v.push(idx));
                }
                for (j, t) in g.tools.iter().enumerate() {
                    if let Some(t) = self.tool_ref(t, file, &format!("/guards/{i}/tools/{j}")) {
                        by_tool[t].push(idx);
                    }
                }
                let mut cx = CondCx::new(self, file, Scope::Call);
                let drop_when = cx.compile(&g.drop_when, &format!("/guards/{i}/drop_when"));
                guards.push(GuardDef {
                    id: Arc::from(g.id.as_str()),
                    drop_when,
                });
            }
        }
        (guards, by_tool)
    }

    pub fn tool_ref(&mut self, id: &str, file: &SourceFile, pointer: &str) -> Option<usize> {
        if let Some(&i) = self.tool_ids.get(id) {
            return Some(i);
        }
        let hint = did_you_mean(id, self.tool_ids.keys());
        let mut d = Diagnostic::error("unknown-tool", format!("unknown tool '{id}'"))
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
        let mut d = Diagnostic::error("unknown-skill", format!("unknown skill '{id}'"))
            .at(Some(file.locate(pointer)));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        self.diagnostics.push(d);
        None
    }
}

/// Whether `c` can only hold while integration `id` is connected, read from its shape: the
/// condition itself, a part of an `all`, or every branch of an `any`.
fn requires_integration(c: &crate::rules::Condition, id: &str) -> bool {
    use crate::rules::Condition as C;
    match c {
        C::Integration(i) => i == id,
        C::All(parts) => parts.iter().any(|p| requires_integration(p, id)),
        C::Any(parts) => !parts.is_empty() && parts.iter().all(|p| requires_integration(p, id)),
        _ => false,
    }
}

fn seen_lists_first(lists: &[ListDef], id: &str) -> bool {
    lists.iter().any(|l| &*l.id == id)
}

/// Splits `{message}` and `{open_file}` out of string arguments once, at compile time.
fn template(v: &Value) -> ArgTemplate {
    let Some(s) = v.as_str() else {
        return ArgTemplate::Value(v.clone());
    };
    if !s.contains("{message}") && !s.contains("{open_file}") {
        return ArgTemplate::Value(v.clone());
    }
    let mut parts = Vec::new();
    let mut rest = s;
    while let Some(pos) = rest.find('{') {
        let (before, after) = rest.split_at(pos);
        let (part, len) = if after.starts_with("{message}") {
            (Some(TemplatePart::Message), "{message}".len())
        } else if after.starts_with("{open_file}") {
            (Some(TemplatePart::OpenFile), "{open_file}".len())
        } else {
            (None, 1)
        };
        let mut literal = before.to_owned();
        if part.is_none() {
            literal.push('{');
        }
        if !literal.is_empty() {
            parts.push(TemplatePart::Literal(literal));
        }
        parts.extend(part);
        rest = &after[len..];
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Literal(rest.to_owned()));
    }
    ArgTemplate::Text(parts)
}

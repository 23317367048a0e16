//! Pass 3: skills and tools (argument schemas compiled, `consequential` needs `confirm`), then
//! the integrations' tools, which must be offered only while their integration is connected.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rayon::prelude::*;

use super::conditions::{CondCx, Scope};
use super::extract::{self, ExtractPatterns};
use super::findings::Findings;
use super::symbols::{ListsUsed, Symbols};
use crate::diag::{Code, Diagnostic};
use crate::rules::RuleFile;
use crate::ruleset::{SkillDef, ToolDef};
use crate::source::SourceFile;
use crate::text::{Normalizer, WordMatcher};

/// Every extraction pattern of `files` (which [`compile`] reads), compiled once each, on every
/// core.
pub(super) fn extraction_patterns(files: &[(SourceFile, RuleFile)]) -> ExtractPatterns<'_> {
    compile_each(
        files
            .iter()
            .flat_map(|(_, rf)| &rf.tools)
            .flat_map(|t| t.extract.values())
            .flat_map(|x| {
                let choices = x.choose.iter().flat_map(|c| &c.patterns);
                let number = x.number.iter().flat_map(|n| &n.patterns);
                let text = x.text.iter().flat_map(|t| &t.drop_patterns);
                choices.chain(number).chain(text)
            })
            .map(String::as_str),
        WordMatcher::compile_pattern,
    )
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

/// Every skill, in file order.
pub(super) fn skills(files: &[(SourceFile, RuleFile)]) -> Vec<SkillDef> {
    let mut skills = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (_, rf) in files {
        for s in &rf.skills {
            if !seen.insert(&s.id) {
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
    skills
}

/// Every tool, in file order, but one whose schema does not compile; their `available_when`
/// resolved through `symbols` (the lists they mention marked in `used`), their `extract` built
/// from `patterns` ([`extraction_patterns`]).
pub(super) fn compile(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    norm: &Normalizer,
    patterns: &ExtractPatterns<'_>,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> Vec<ToolDef> {
    let mut tools = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    // `choose` words forgive a typo as word lists do (`matching.typos`).
    let typos = super::lists::typo_defaults(files).map(|t| crate::text::TypoLengths {
        from: t.from,
        first_letter_from: t.first_letter_from,
    });
    for (file, rf) in files {
        for (i, t) in rf.tools.iter().enumerate() {
            if !seen.insert(&t.id) {
                continue;
            }
            let (arguments, validator) = arguments(file, i, t, findings);
            let available_when = t.available_when.as_ref().map(|c| {
                let mut cx = CondCx::new(symbols, used, findings, file, Scope::Request);
                cx.compile(c, &format!("/tools/{i}/available_when"))
            });
            let extract = extract::compile(file, i, t, &arguments, norm, patterns, typos, findings);
            let Some(validator) = validator else { continue };
            tools.push(ToolDef {
                id: Arc::from(t.id.as_str()),
                description: t.description.clone(),
                chip: Arc::from(t.chip.as_str()),
                confirm: t.confirm,
                arguments,
                examples: t.examples.clone(),
                extract,
                validator,
                at: file.locate(&format!("/tools/{i}")),
                available_when_at: available_when
                    .as_ref()
                    .map(|_| file.locate(&format!("/tools/{i}/available_when"))),
                available_when,
            });
        }
    }
    tools
}

/// A tool's arguments schema (an object with no properties when it gives none) and its
/// validator, `None` when the schema does not compile; a consequential tool must confirm.
fn arguments(
    file: &SourceFile,
    i: usize,
    t: &crate::rules::Tool,
    findings: &mut Findings,
) -> (serde_json::Value, Option<jsonschema::Validator>) {
    let arguments = t
        .arguments
        .clone()
        .unwrap_or_else(|| serde_json::json!({"type": "object", "additionalProperties": false}));
    let p = format!("/tools/{i}/arguments");
    let validator = match jsonschema::validator_for(&arguments) {
        Ok(v) => Some(v),
        Err(e) => {
            findings.error(
                Code::BadArgumentSchema,
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
                Code::UnconfirmedConsequential,
                format!(
                    "tool '{}' is marked consequential but does not ask the user to confirm",
                    t.id
                ),
            )
            .at(Some(file.locate(&format!("/tools/{i}/consequential"))))
            .rule(t.id.as_str())
            .hint("add 'confirm: true' to the tool: a consequential action is only prepared, the user confirms it with a button");
        findings.push(d);
    }
    (arguments, validator)
}

/// Every tool an integration lists must exist and be offered only while the integration is
/// connected: its `available_when` must require `integration: ID` (alone, inside an `all`,
/// or in every branch of an `any`).
pub(super) fn check_integrations(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    findings: &mut Findings,
) {
    for (file, rf) in files {
        for (i, g) in rf.integrations.iter().enumerate() {
            for (j, id) in g.tools.iter().enumerate() {
                let p = format!("/integrations/{i}/tools/{j}");
                if symbols.tool(id, file, &p, findings).is_none() {
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
                        Code::UngatedIntegrationTool,
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
                findings.push(d);
            }
        }
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

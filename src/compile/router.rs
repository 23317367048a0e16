//! Pass 4a: the router section: exactly one; its skill tool must agree with the skills (B9); a
//! model named in it must be usable (a `script:` file inside the rules directory, read now).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::conditions::{CondCx, Scope};
use super::findings::{Findings, did_you_mean};
use super::symbols::{ListsUsed, Symbols};
use crate::diag::{Code, Diagnostic};
use crate::rules::RuleFile;
use crate::ruleset::{ContextRuleDef, EmbeddedDef, FrameDef, RouterDef, SkillDef};
use crate::source::{Limits, SourceFile, load};

/// Where a `script:` router model is read from: the rules directory (`None` when the files came
/// from none: then the router file's own folder), within the limits rule files are read in.
#[derive(Clone, Copy)]
pub(super) struct Scripts<'a> {
    pub root: Option<&'a Path>,
    pub limits: &'a Limits,
}

/// The router section: exactly one, its tools resolved through `symbols`, its skill tool
/// agreeing with `skills`; the lists its context rules mention are marked in `used`.
pub(super) fn compile(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    skills: &[SkillDef],
    norm: &crate::text::Normalizer,
    scripts: Scripts<'_>,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> Option<RouterDef> {
    let Some((file, r)) = findings.single_section(files, "router", |rf| rf.router.as_ref()) else {
        findings.push(Diagnostic::error(
            Code::MissingRouter,
            "no rule file has a 'router' section; one is required",
        ));
        return None;
    };
    let skill_tool_idx = symbols.tool(&r.skill_tool, file, "/router/skill_tool", findings)?;
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
            None => findings.error(
                Code::SkillEnum,
                format!(
                    "tool '{}' must list the allowed skills as an enum of its '{}' argument",
                    t.id, r.skill_argument
                ),
                tf,
                &format!("/tools/{ti}"),
            ),
            Some(values) => {
                let at = SkillEnum {
                    file: tf,
                    argument: &ptr,
                    tool: &t.id,
                };
                skill_enum(files, symbols, skills, r, &at, &values, findings);
            }
        }
    }
    let model = match r
        .model
        .as_deref()
        .map(str::parse::<crate::contract::ModelSpec>)
    {
        Some(Err(e)) => {
            findings.error(Code::BadModel, e.to_string(), file, "/router/model");
            None
        }
        Some(Ok(crate::contract::ModelSpec::Script(script))) => {
            read_script(&script, file, scripts, findings).map(crate::contract::ModelSpec::Script)
        }
        Some(Ok(spec)) => Some(spec),
        None => None,
    };
    let embedded = r.embedded.clone().unwrap_or_default();
    let context = context_rules(file, &embedded.context, symbols, used, findings);
    let mut frames = frames(file, &embedded.frames, findings);
    // All the frames' gates in one automaton; each pattern's own gate only when that one
    // cannot be built (building both cost a tenth of the start-up).
    let frame_gates = crate::text::Gates::new(
        frames
            .iter()
            .flat_map(|f| f.patterns.iter().map(regex::Regex::as_str)),
    );
    if frame_gates.is_none() {
        for f in &mut frames {
            f.gates = f
                .patterns
                .iter()
                .map(|p| crate::text::gate(p.as_str()))
                .collect();
        }
    }
    let (torn, torn_ratio) = torn(file, embedded.confusable.as_ref(), symbols, findings);
    let mut connectives: Vec<String> = embedded
        .split
        .iter()
        .flat_map(|s| &s.connectives)
        .map(|c| norm.normalize(c))
        .filter(|c| !c.trim().is_empty())
        .collect();
    connectives.sort_by_key(|c| std::cmp::Reverse(c.len()));
    // A handful of short strings: building cannot hit the automaton's size limits.
    let connective_finder = (!connectives.is_empty())
        .then(|| aho_corasick::AhoCorasick::new(&connectives).ok())
        .flatten();
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
        embedded: EmbeddedDef {
            threshold: embedded.threshold,
            margin: embedded.margin,
            chat_examples: embedded.chat_examples,
            context,
            connectives,
            connective_finder,
            frame_gates,
            frames,
            torn,
            torn_ratio,
            typos_from: embedded.typos_from,
            sentences_from: embedded.sentences_from,
            sentence_skill_threshold: embedded.sentence_skill_threshold,
            word_pairs: embedded.word_pairs,
        },
        skill_tool_idx,
    })
}

/// A `script:FILE` router model named in the rules: FILE is relative to the rules directory
/// and must stay inside it (rules never read files elsewhere), and it is read and checked
/// now, through the same path as rule files, so a reload refuses what a start would.
/// Returns the script's path as the service will read it.
fn read_script(
    script: &Path,
    file: &SourceFile,
    scripts: Scripts<'_>,
    findings: &mut Findings,
) -> Option<PathBuf> {
    let root = match scripts.root {
        Some(root) => root.to_path_buf(),
        None => file.path.parent().unwrap_or(Path::new(".")).to_path_buf(),
    };
    let path = root.join(script);
    let inside = std::fs::canonicalize(&root).ok().and_then(|r| {
        std::fs::canonicalize(&path)
            .ok()
            .map(|p| (p.starts_with(&r), p))
    });
    let (message, hint) = match inside {
            Some((true, real)) => match load::load_script(&real, scripts.limits) {
                Ok(_) => return Some(real),
                Err(found) => (
                    format!("the script {} cannot be used", script.display()),
                    found
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
            },
            Some((false, _)) => (
                format!(
                    "the script {} is outside the rules directory; it was not read",
                    script.display()
                ),
                "put the script inside the rules directory (e.g. in tests/) and name it relative to the directory".to_owned(),
            ),
            None => (
                format!("there is no script {} in the rules directory", script.display()),
                "script paths are relative to the rules directory".to_owned(),
            ),
        };
    findings.push(
        Diagnostic::error(Code::BadModel, format!("router.model: {message}"))
            .at(Some(file.locate("/router/model")))
            .hint(hint),
    );
    None
}

/// The skill tool's allowed values must be exactly the auto-switch skills plus the leave
/// value (B9). Each difference is reported where it can be fixed: a missing auto skill at its
/// `auto`, an extra value at its place in the `enum`.
fn skill_enum(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    skills: &[SkillDef],
    r: &crate::rules::Router,
    at: &SkillEnum<'_>,
    values: &[String],
    findings: &mut Findings,
) {
    let SkillEnum {
        file: tf,
        argument: ptr,
        tool,
    } = *at;
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
                    Code::SkillEnum,
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
            findings.push(d);
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
                did_you_mean(v, symbols.skills.keys()),
            ),
        };
        let mut d = Diagnostic::error(Code::SkillEnum, message)
            .at(Some(tf.locate(&format!("{ptr}/enum/{k}"))));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        findings.push(d);
    }
    if !values.contains(&r.leave_skill_value) {
        findings.error(
                Code::SkillEnum,
                format!(
                    "'{allowed}' must allow '{}' (the router's leave_skill_value), or the router cannot leave a skill",
                    r.leave_skill_value
                ),
                tf,
                &format!("{ptr}/enum"),
            );
    }
}

/// The embedded router's context rules: conditions on the request, tools that exist.
fn context_rules(
    file: &SourceFile,
    rules: &[crate::rules::ContextRule],
    symbols: &Symbols,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> Vec<ContextRuleDef> {
    let mut out = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (k, rule) in rules.iter().enumerate() {
        let at = format!("/router/embedded/context/{k}");
        if !seen.insert(&rule.id) {
            findings.error(
                Code::DuplicateId,
                format!("context rule '{}' is defined twice", rule.id),
                file,
                &format!("{at}/id"),
            );
        }
        if rule.boost.is_empty()
            && rule.boost_skills.is_empty()
            && rule.rule_out.is_empty()
            && rule.boost_chat.is_none()
            && rule.previous_message.is_none_or(|w| w == 0.0)
            && rule.first.is_none()
        {
            findings.error(
                Code::ContextNoEffect,
                format!(
                    "context rule '{}' changes nothing: give boost, boost_skills, boost_chat, \
                     rule_out, previous_message or first",
                    rule.id
                ),
                file,
                &at,
            );
        }
        if rule.ask_back && rule.rule_out.is_empty() {
            findings.error(
                Code::ContextNoEffect,
                format!(
                    "context rule '{}' asks back for nothing: ask_back is about the tools of \
                         rule_out, and it has none",
                    rule.id
                ),
                file,
                &format!("{at}/ask_back"),
            );
        }
        let when = {
            let mut cx = CondCx::new(symbols, used, findings, file, Scope::Request);
            cx.compile(&rule.when, &format!("{at}/when"))
        };
        let boost = rule
            .boost
            .iter()
            .filter_map(|(tool, b)| {
                symbols
                    .tool(tool, file, &format!("{at}/boost/{tool}"), findings)
                    .map(|t| (t, *b))
            })
            .collect();
        let boost_skills = (rule.boost_skills.iter())
            .filter_map(|(skill, b)| {
                symbols
                    .skill(skill, file, &format!("{at}/boost_skills/{skill}"), findings)
                    .map(|_| (Arc::from(skill.as_str()), *b))
            })
            .collect();
        let rule_out = rule
            .rule_out
            .iter()
            .enumerate()
            .filter_map(|(j, tool)| {
                symbols.tool(tool, file, &format!("{at}/rule_out/{j}"), findings)
            })
            .collect();
        let first = rule.first.as_ref().and_then(|f| {
            let tool = symbols.tool(&f.tool, file, &format!("{at}/first/tool"), findings)?;
            let before = (f.before.iter().enumerate())
                .filter_map(|(j, t)| {
                    symbols.tool(t, file, &format!("{at}/first/before/{j}"), findings)
                })
                .collect();
            Some((tool, before))
        });
        out.push(ContextRuleDef {
            id: Arc::from(rule.id.as_str()),
            when,
            boost,
            boost_skills,
            rule_out,
            ask_back: rule.ask_back,
            boost_chat: rule.boost_chat.unwrap_or(0.0),
            previous_message: rule.previous_message.unwrap_or(0.0),
            per_part: rule.per_part,
            first,
        });
    }
    out
}

/// The embedded router's frames: patterns that compile, ids used once.
fn frames(
    file: &SourceFile,
    frames: &[crate::rules::Frame],
    findings: &mut Findings,
) -> Vec<FrameDef> {
    let mut out = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (k, frame) in frames.iter().enumerate() {
        let at = format!("/router/embedded/frames/{k}");
        if !seen.insert(&frame.id) {
            findings.error(
                Code::DuplicateId,
                format!("frame '{}' is defined twice", frame.id),
                file,
                &format!("{at}/id"),
            );
        }
        let mut compile = |list: &[String], key: &str| {
            let mut regexes = Vec::new();
            for (j, p) in list.iter().enumerate() {
                match crate::text::compile_pattern(p) {
                    Ok(re) => regexes.push(re),
                    Err(e) => findings.error(
                        Code::BadRegex,
                        super::findings::pattern_error(p, e),
                        file,
                        &format!("{at}/{key}/{j}"),
                    ),
                }
            }
            regexes
        };
        let patterns = compile(&frame.patterns, "patterns");
        let unless = compile(&frame.unless, "unless");
        out.push(FrameDef {
            id: Arc::from(frame.id.as_str()),
            kind: frame.kind,
            patterns,
            gates: Vec::new(),
            unless,
            boost_chat: frame.boost_chat.unwrap_or(0.0),
            boost_skills: frame.boost_skills.unwrap_or(if frame.also_skills {
                frame.boost_chat.unwrap_or(0.0)
            } else {
                0.0
            }),
        });
    }
    out
}

/// The confusable pairs, by tool index, and the share of the best's probability at which
/// the partner makes the router ask back.
fn torn(
    file: &SourceFile,
    torn: Option<&crate::rules::Torn>,
    symbols: &Symbols,
    findings: &mut Findings,
) -> (Vec<(usize, usize)>, f32) {
    let Some(torn) = torn else {
        return (Vec::new(), 1.0);
    };
    let mut pairs = Vec::new();
    for (k, [a, b]) in torn.pairs.iter().enumerate() {
        let at = format!("/router/embedded/confusable/pairs/{k}");
        let a = symbols.tool(a, file, &format!("{at}/0"), findings);
        let b = symbols.tool(b, file, &format!("{at}/1"), findings);
        if let (Some(a), Some(b)) = (a, b) {
            pairs.push((a, b));
        }
    }
    (pairs, torn.ratio)
}

/// Where the router's skill tool lists the skills it allows: `argument`, the pointer of the
/// tool's skill argument in `file`.
#[derive(Clone, Copy)]
struct SkillEnum<'a> {
    file: &'a SourceFile,
    argument: &'a str,
    tool: &'a str,
}

//! Compiles `when` / `drop_when` / `available_when` conditions: resolves word lists and skills,
//! checks values, refuses call-only predicates outside guards, and puts cheap checks first.

use super::findings::{Findings, did_you_mean};
use super::symbols::{ListsUsed, Symbols};
use crate::contract::GenerationMode;
use crate::diag::Code;
use crate::rules::{Condition, SkillMatch};
use crate::ruleset::{Cond, SkillIs};
use crate::source::SourceFile;

/// Where a condition is evaluated: on the request alone, or on a call in a guard.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Request,
    Call,
}

/// Compiles the conditions of one file in one scope: resolves ids through `symbols`, marks the
/// lists it mentions in `used`, reports to `findings`.
pub(crate) struct CondCx<'c> {
    symbols: &'c Symbols,
    used: &'c mut ListsUsed,
    findings: &'c mut Findings,
    file: &'c SourceFile,
    scope: Scope,
}

impl<'c> CondCx<'c> {
    pub fn new(
        symbols: &'c Symbols,
        used: &'c mut ListsUsed,
        findings: &'c mut Findings,
        file: &'c SourceFile,
        scope: Scope,
    ) -> Self {
        Self {
            symbols,
            used,
            findings,
            file,
            scope,
        }
    }

    pub fn compile(&mut self, c: &Condition, at: &str) -> Cond {
        match c {
            Condition::All(v) | Condition::Any(v) => {
                let key = if matches!(c, Condition::All(_)) {
                    "all"
                } else {
                    "any"
                };
                if v.is_empty() {
                    self.error(
                        Code::EmptyCondition,
                        format!("'{key}' needs at least one condition"),
                        &format!("{at}/{key}"),
                    );
                }
                let mut parts: Vec<Cond> = v
                    .iter()
                    .enumerate()
                    .map(|(i, c)| self.compile(c, &format!("{at}/{key}/{i}")))
                    .collect();
                // Conditions have no side effects, so the order of evaluation is free.
                parts.sort_by_key(Cond::cost);
                if key == "all" {
                    Cond::All(parts)
                } else {
                    Cond::Any(parts)
                }
            }
            Condition::Not(c) => Cond::Not(Box::new(self.compile(c, &format!("{at}/not")))),
            Condition::LongerThan(n) => Cond::LongerThan(*n),
            Condition::ShorterThan(n) => Cond::ShorterThan(*n),
            Condition::FewerWordsThan(n) => Cond::FewerWordsThan(*n),
            Condition::Mentions(list) => match self.symbols.lists.get(list) {
                Some(&i) => {
                    self.used.mark(i);
                    Cond::Mentions(i)
                }
                None => {
                    let hint = self.symbols.list_meant(list, self.used);
                    self.error_hint(
                        Code::UnknownList,
                        format!("unknown word list '{list}'"),
                        &format!("{at}/mentions"),
                        hint,
                    );
                    Cond::Invalid
                }
            },
            Condition::SkillActive(SkillMatch::Any(true)) => Cond::SkillActive(SkillIs::Any),
            Condition::SkillActive(SkillMatch::Any(false)) => Cond::SkillActive(SkillIs::None),
            Condition::SkillActive(SkillMatch::Id(id)) => {
                let p = format!("{at}/skill_active");
                match self.symbols.skill(id, self.file, &p, self.findings) {
                    Some(i) => Cond::SkillActive(SkillIs::Id(i)),
                    None => Cond::Invalid,
                }
            }
            Condition::AssistantAsked(b) => Cond::AssistantAsked(*b),
            Condition::DraftShown(b) => Cond::DraftShown(*b),
            Condition::GenerationMode(m) if m == "any" => Cond::GenerationMode(None),
            Condition::GenerationMode(m) => {
                match GenerationMode::ALL.iter().find(|g| g.as_str() == m) {
                    Some(&g) => Cond::GenerationMode(Some(g)),
                    None => {
                        self.error(
                            Code::UnknownValue,
                            format!(
                                "unknown generation mode '{m}'; expected any, image, video, music or voice"
                            ),
                            &format!("{at}/generation_mode"),
                        );
                        Cond::Invalid
                    }
                }
            }
            Condition::Attachment(a) => Cond::Attachment {
                kind: a.kind.clone(),
                face: a.face,
            },
            Condition::UiMode(m) => Cond::UiMode(m.clone()),
            Condition::FileOpen(b) => Cond::FileOpen(*b),
            Condition::OpenFileNamed(b) => Cond::OpenFileNamed(*b),
            Condition::Integration(i) => {
                let ids = &self.symbols.integrations;
                if !ids.is_empty() && !ids.contains_key(i) {
                    let hint = did_you_mean(i, ids.keys()).or_else(|| {
                        let mut known: Vec<&str> = ids.keys().map(String::as_str).collect();
                        known.sort_unstable();
                        Some(format!("declared integrations: {}", known.join(", ")))
                    });
                    self.error_hint(
                        Code::UnknownIntegration,
                        format!("unknown integration '{i}'"),
                        &format!("{at}/integration"),
                        hint,
                    );
                    return Cond::Invalid;
                }
                Cond::Integration(i.clone())
            }
            Condition::SearchToggle(b) => Cond::SearchToggle(*b),
            Condition::Argument(a) => self.call_only(at, "argument", || Cond::Argument {
                name: a.name.clone(),
                one_of: a.one_of.clone(),
            }),
            Condition::ArgumentInMessage(n) => self.call_only(at, "argument_in_message", || {
                Cond::ArgumentInMessage(n.clone())
            }),
            Condition::RepeatsSuccessfulCall(b) => {
                self.call_only(at, "repeats_successful_call", || {
                    Cond::RepeatsSuccessfulCall(*b)
                })
            }
        }
    }

    fn call_only(&mut self, at: &str, key: &str, make: impl FnOnce() -> Cond) -> Cond {
        if self.scope == Scope::Call {
            return make();
        }
        self.error(
            Code::CallConditionOutsideGuard,
            format!("'{key}' looks at a tool call, so it can only be used in a guard's drop_when"),
            &format!("{at}/{key}"),
        );
        Cond::Invalid
    }

    fn error(&mut self, code: Code, message: String, pointer: &str) {
        self.findings.error(code, message, self.file, pointer);
    }

    fn error_hint(&mut self, code: Code, message: String, pointer: &str, hint: Option<String>) {
        let mut d =
            crate::diag::Diagnostic::error(code, message).at(Some(self.file.locate(pointer)));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        self.findings.push(d);
    }
}

//! Stage 1: pre-rules. The first rule whose condition holds settles the message; the router
//! model is then not called.

use serde_json::Value;

use super::Run;
use super::eval::Pending;
use super::eval::Why;
use crate::contract::{EffectKind, Stage, TraceStep};
use crate::ruleset::{ActionDef, ArgTemplate, TemplatePart};

impl Run<'_> {
    /// Returns whether a pre-rule settled the message.
    pub(super) fn pre_rules(&mut self) -> bool {
        let rs = self.cx.rs;
        // Only the rules the matched lists can fire, in order.
        let Some(rule) = rs
            .pre_index
            .candidates(self.cx.hits.lists())
            .map(|i| &rs.pre_rules[i])
            .find(|r| !self.skips(&r.id) && self.cx.eval(&r.when, None))
        else {
            return false;
        };
        let mut why = Why::default();
        self.cx.explain(&rule.when, None, &mut why);
        let (effect, kind, subject) = match &rule.action {
            ActionDef::Skill(target) => {
                if let Some(skill) = target {
                    self.cx.skill = Some(*skill);
                }
                match self.cx.skill {
                    Some(s) => (
                        format!("settled: reply goes to skill {}", rs.skills[s].id),
                        EffectKind::SettledSkill,
                        Some(rs.skills[s].id.clone()),
                    ),
                    None => (
                        "settled: no skill is active".to_owned(),
                        EffectKind::SettledSkill,
                        None,
                    ),
                }
            }
            ActionDef::Calls(templates) => {
                for t in templates {
                    let arguments = t
                        .arguments
                        .iter()
                        .filter_map(|(k, v)| Some((k.clone(), self.fill(t.tool, k, v)?)))
                        .collect();
                    self.calls.push(Pending {
                        tool: t.tool,
                        arguments: Value::Object(arguments),
                    });
                }
                let names: Vec<&str> = templates.iter().map(|t| &*rs.tools[t.tool].id).collect();
                let names = names.join(", ");
                (
                    format!("settled: call {names}"),
                    EffectKind::SettledCalls,
                    Some(names.into()),
                )
            }
        };
        let (why, matches, facts) = why.into_parts();
        let mut step = TraceStep::new(Stage::Pre, Some(rule.id.clone()), effect, why)
            .kind(kind)
            .explained(matches, facts);
        step.subject = subject;
        self.trace.push(step);
        true
    }

    /// The argument's value; `None` when `{extract}` found nothing and has no default (the
    /// call is then validated without it).
    fn fill(&self, tool: usize, name: &str, arg: &ArgTemplate) -> Option<Value> {
        Some(match arg {
            ArgTemplate::Value(v) => v.clone(),
            ArgTemplate::Extract => {
                let x = self.cx.rs.tools[tool]
                    .extract
                    .iter()
                    .find(|x| x.name == name)?;
                let input = crate::ruleset::extract::ExtractInput {
                    original: self.cx.req.user_message().unwrap_or_default(),
                    normalized: self.cx.text,
                    open_file: self.cx.open_file(),
                };
                x.fill_alone(&input)?.value
            }
            ArgTemplate::Text(parts) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        TemplatePart::Literal(l) => s.push_str(l),
                        TemplatePart::Message => {
                            s.push_str(self.cx.req.user_message().unwrap_or_default())
                        }
                        TemplatePart::OpenFile => {
                            s.push_str(self.cx.open_file().unwrap_or_default())
                        }
                    }
                }
                Value::String(s)
            }
        })
    }
}

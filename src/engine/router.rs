//! Stages 2 and 3: the router model call and the validation of its answer, then the skill and
//! search switches taken out of the calls. Any model failure, and any answer that fails
//! validation, means a plain chat answer; the trace says which.

use serde_json::Value;

use super::eval::{Ctx, Why};
use super::{Pending, Run};
use crate::contract::{EffectKind, Fact, FactKind, Match, Stage, TraceStep};
use crate::contract::{ModelCall, ReceivedCall};
use crate::model::{Model, ModelAnswer, ModelError, ModelNote, RouterInput};

impl Run<'_> {
    /// Whether `tool` is offered and accepted in this request's context.
    fn available(&self, tool: usize) -> bool {
        self.cx.rs.tools[tool]
            .available_when
            .as_ref()
            .is_none_or(|c| self.cx.eval(c, None))
    }

    pub(super) async fn call_model(&mut self, model: &dyn Model) {
        let rs = self.cx.rs;
        let req = self.cx.req;
        let history = rs.router.history.max(1);
        let from = req.messages.len().saturating_sub(history);
        let tools: Vec<_> = (0..rs.tools.len())
            .filter(|&t| self.available(t))
            .map(|t| &rs.tools[t])
            .collect();
        let offered = tools.len();
        // The embedded router's context rules are conditions on the request like any other:
        // evaluated here, where conditions are, and handed over as positions.
        // A rule that only reads the assistant's previous message does nothing (and says
        // nothing in the trace) without one.
        let previous = crate::contract::request::assistant_just_before(&req.messages).is_some();
        let eligible: Vec<usize> = (rs.router.embedded.context.iter().enumerate())
            .filter(|(_, r)| previous || !r.only_reads_previous())
            .filter(|(_, r)| !self.skips(&r.id))
            .map(|(i, _)| i)
            .collect();
        let rules = &rs.router.embedded.context;
        let context: Vec<usize> = (eligible.iter().copied())
            .filter(|&i| self.cx.eval(&rules[i].when, None))
            .collect();
        // For a router that decides a compound request part by part: the rules marked
        // `per_part` read within a part. Built from the context's shareable parts (its word
        // count is a cell).
        let cx = &self.cx;
        let (text, norm, chars, skill, hits) = (cx.text, cx.norm, cx.chars, cx.skill, &cx.hits);
        let per_part = eligible.iter().any(|&i| rules[i].per_part);
        let whole = context.clone();
        let part_context = move |span: (usize, usize)| -> Vec<usize> {
            let part = Ctx {
                rs,
                req,
                text,
                norm,
                chars,
                skill,
                probe: None,
                hits: hits.clone(),
                words: std::cell::Cell::new(None),
                part: std::cell::OnceCell::new(),
            };
            // A rule not read part by part keeps the whole message's verdict.
            (eligible.iter().copied())
                .filter(|&i| match rules[i].per_part {
                    true => part.eval_in(&rules[i].when, span),
                    false => whole.contains(&i),
                })
                .collect()
        };
        let input = RouterInput {
            messages: &req.messages[from..],
            skill: self.cx.skill.map(|s| &rs.skills[s]),
            draft_shown: req.draft_shown,
            ui: req.ui.as_ref(),
            tools,
            context,
            part_context: per_part.then_some(&part_context as &crate::model::PartContext<'_>),
            skills: &rs.skills,
            router: &rs.router,
            rules: rs,
            normalized: Some(self.cx.text),
        };
        self.model_called = true;
        let started = std::time::Instant::now();
        let answer = match tokio::time::timeout(rs.router.timeout, model.route(&input)).await {
            Ok(answer) => answer,
            Err(_) => Err(ModelError::Timeout),
        };
        self.model_call = Some(ModelCall {
            latency: started.elapsed(),
            error: answer.as_ref().err().map(ModelError::kind),
            received: answer.as_ref().ok().map(|a| {
                a.calls
                    .iter()
                    .map(|c| ReceivedCall::new(c.tool.clone(), c.arguments.clone()))
                    .collect()
            }),
        });
        match answer {
            Ok(mut answer) => {
                let names: Vec<&str> = answer.calls.iter().map(|c| c.tool.as_str()).collect();
                let names = names.join(", ");
                let mut step = if names.is_empty() {
                    TraceStep::new(Stage::Router, None, "no call", "").kind(EffectKind::NoCall)
                } else {
                    TraceStep::new(Stage::Router, None, format!("proposed {names}"), "")
                        .kind(EffectKind::Proposed)
                        .subject(names)
                };
                step.why = format!("model '{}' was offered {offered} tools", model.name()).into();
                step.facts = vec![
                    Fact::of(FactKind::Offered)
                        .name(model.name())
                        .count(offered, None),
                ];
                self.trace.push(step);
                for note in std::mem::take(&mut answer.notes) {
                    let step = self.note_step(note);
                    self.trace.push(step);
                }
                self.validate(answer);
            }
            Err(e) => self.trace.push(
                TraceStep::new(
                    Stage::Router,
                    None,
                    format!("model error: {}", e.kind()),
                    format!("{e}; answering in plain chat"),
                )
                .kind(EffectKind::ModelError)
                .subject(e.kind()),
            ),
        }
    }

    /// A model's note as a trace step: a context rule's note gets what its condition matched;
    /// a pattern's byte span in the normalised message becomes a match in the original.
    fn note_step(&self, note: ModelNote) -> TraceStep {
        let rs = self.cx.rs;
        let mut step =
            TraceStep::new(Stage::Router, note.rule.clone(), note.effect, note.why).kind(note.kind);
        step.subject = note.subject;
        step.facts = note.facts;
        if note.kind == EffectKind::ContextRule
            && let Some(rule) = note
                .rule
                .as_deref()
                .and_then(|id| rs.router.embedded.context.iter().find(|r| &*r.id == id))
        {
            let mut why = Why::default();
            self.cx.explain(&rule.when, None, &mut why);
            let (prose, matches, facts) = why.into_parts();
            step.why = prose.into();
            step.matches = matches;
            step.facts.extend(facts);
        }
        if let (Some((entry, start, end)), Some(list)) = (note.matched, note.rule)
            && start <= end
            && self.cx.text.is_char_boundary(start)
            && self.cx.text.get(start..end).is_some()
        {
            let (s, e) = self.cx.norm.char_span(start, end);
            step.matches
                .push(Match::new(list, entry, s, e, self.cx.original(s, e)));
        }
        step
    }

    /// Accepts the answer whole or not at all: the calls are one task in order, so running
    /// half of it would be wrong.
    fn validate(&mut self, answer: ModelAnswer) {
        let rs = self.cx.rs;
        let max = rs.router.max_calls;
        let problem = if answer.calls.len() > max {
            Some((
                "too_many_calls",
                format!("{} calls; at most {max} are accepted", answer.calls.len()),
                Fact::of(FactKind::CallCount).count(answer.calls.len(), Some(max)),
            ))
        } else {
            answer.calls.iter().find_map(|call| {
                let fact = Fact::of(FactKind::Tool).name(call.tool.as_str());
                let Some(&tool) = rs.tool_ids.get(&call.tool) else {
                    return Some((
                        "unknown_tool",
                        format!("unknown tool '{}'", call.tool),
                        fact,
                    ));
                };
                if !self.available(tool) {
                    return Some((
                        "unavailable_tool",
                        format!("tool '{}' is not available in this context", call.tool),
                        fact,
                    ));
                }
                let def = &rs.tools[tool];
                def.validator.iter_errors(&call.arguments).next().map(|e| {
                    let at = e.instance_path().to_string();
                    let at = if at.is_empty() { "/".to_owned() } else { at };
                    (
                        "invalid_arguments",
                        format!("arguments of '{}' fail its schema at {at}: {e}", call.tool),
                        fact.value(at),
                    )
                })
            })
        };
        if let Some((kind, why, fact)) = problem {
            if let Some(call) = &mut self.model_call {
                call.error = Some(kind);
            }
            let mut step = TraceStep::new(
                Stage::Validate,
                None,
                format!("discarded the model's answer: {kind}"),
                why,
            )
            .kind(EffectKind::Discarded)
            .subject(kind);
            step.facts.push(fact);
            self.trace.push(step);
            return;
        }
        for call in answer.calls {
            if let Some(&tool) = rs.tool_ids.get(&call.tool) {
                self.calls.push(Pending {
                    tool,
                    arguments: call.arguments,
                });
            }
        }
    }

    /// Takes the skill switch and the model's web search request out of the calls: they change
    /// the decision's `skill` and `web_search`, they are not tools to run.
    pub(super) fn take_switches(&mut self) {
        let rs = self.cx.rs;
        let router = &rs.router;
        let search_tool = rs.search.as_ref().map(|s| s.tool);
        let calls = std::mem::take(&mut self.calls);
        for call in calls {
            if Some(call.tool) == search_tool {
                self.model_search = true;
            } else if call.tool == router.skill_tool_idx {
                let value = call
                    .arguments
                    .get(&router.skill_argument)
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.switch_skill(value);
            } else {
                self.calls.push(call);
            }
        }
    }

    /// The engine checks the skill id again on the way out (B9): only auto skills switch on.
    fn switch_skill(&mut self, value: &str) {
        let rs = self.cx.rs;
        if value == rs.router.leave_skill_value {
            let why = format!("the router chose '{value}'");
            let step = match self.cx.skill.take() {
                Some(s) => {
                    let id = &rs.skills[s].id;
                    TraceStep::new(Stage::Skill, None, format!("left skill {id}"), why)
                        .kind(EffectKind::LeftSkill)
                        .subject(id.clone())
                }
                None => TraceStep::new(Stage::Skill, None, "no skill to leave", why)
                    .kind(EffectKind::NoSkillToLeave),
            };
            self.trace.push(step);
            return;
        }
        match rs.skill_ids.get(value).copied() {
            Some(s) if rs.skills[s].auto => {
                self.cx.skill = Some(s);
                self.trace.push(
                    TraceStep::new(
                        Stage::Skill,
                        None,
                        format!("switched to skill {value}"),
                        "the router chose it",
                    )
                    .kind(EffectKind::SwitchedSkill)
                    .subject(value),
                );
            }
            _ => self.trace.push(
                TraceStep::new(
                    Stage::Skill,
                    None,
                    "skill not switched",
                    format!("'{value}' is not a skill the router may switch on"),
                )
                .kind(EffectKind::NotSwitched)
                .subject(value),
            ),
        }
    }
}

//! Stages 2 and 3: the router model call and the validation of its answer, then the skill and
//! search switches taken out of the calls. Any model failure, and any answer that fails
//! validation, means a plain chat answer; the trace says which.

use serde_json::Value;

use super::{Pending, Run};
use crate::contract::{ModelCall, ReceivedCall};
use crate::contract::{Stage, TraceStep};
use crate::model::{Model, ModelAnswer, ModelError, RouterInput};

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
        let context: Vec<usize> = rs
            .router
            .embedded
            .context
            .iter()
            .enumerate()
            .filter(|(_, r)| self.cx.eval(&r.when, None))
            .map(|(i, _)| i)
            .collect();
        let input = RouterInput {
            messages: &req.messages[from..],
            skill: self.cx.skill.map(|s| &rs.skills[s]),
            draft_shown: req.draft_shown,
            ui: req.ui.as_ref(),
            tools,
            context,
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
                let effect = if names.is_empty() {
                    "no call".to_owned()
                } else {
                    format!("proposed {}", names.join(", "))
                };
                self.trace.push(TraceStep::new(
                    Stage::Router,
                    None,
                    effect,
                    format!("model '{}' was offered {offered} tools", model.name()),
                ));
                for note in std::mem::take(&mut answer.notes) {
                    self.trace
                        .push(TraceStep::new(Stage::Router, None, note.effect, note.why));
                }
                self.validate(answer);
            }
            Err(e) => self.trace.push(TraceStep::new(
                Stage::Router,
                None,
                format!("model error: {}", e.kind()),
                format!("{e}; answering in plain chat"),
            )),
        }
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
            ))
        } else {
            answer.calls.iter().find_map(|call| {
                let Some(&tool) = rs.tool_ids.get(&call.tool) else {
                    return Some(("unknown_tool", format!("unknown tool '{}'", call.tool)));
                };
                if !self.available(tool) {
                    return Some((
                        "unavailable_tool",
                        format!("tool '{}' is not available in this context", call.tool),
                    ));
                }
                let def = &rs.tools[tool];
                def.validator.iter_errors(&call.arguments).next().map(|e| {
                    let at = e.instance_path().to_string();
                    let at = if at.is_empty() { "/".to_owned() } else { at };
                    (
                        "invalid_arguments",
                        format!("arguments of '{}' fail its schema at {at}: {e}", call.tool),
                    )
                })
            })
        };
        if let Some((kind, why)) = problem {
            if let Some(call) = &mut self.model_call {
                call.error = Some(kind);
            }
            self.trace.push(TraceStep::new(
                Stage::Validate,
                None,
                format!("discarded the model's answer: {kind}"),
                why,
            ));
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
            let effect = match self.cx.skill.take() {
                Some(s) => format!("left skill {}", rs.skills[s].id),
                None => "no skill to leave".to_owned(),
            };
            self.trace.push(TraceStep::new(
                Stage::Skill,
                None,
                effect,
                format!("the router chose '{value}'"),
            ));
            return;
        }
        match rs.skill_ids.get(value).copied() {
            Some(s) if rs.skills[s].auto => {
                self.cx.skill = Some(s);
                self.trace.push(TraceStep::new(
                    Stage::Skill,
                    None,
                    format!("switched to skill {value}"),
                    "the router chose it",
                ));
            }
            _ => self.trace.push(TraceStep::new(
                Stage::Skill,
                None,
                "skill not switched",
                format!("'{value}' is not a skill the router may switch on"),
            )),
        }
    }
}

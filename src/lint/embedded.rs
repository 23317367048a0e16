//! What the embedded offline router can do with the rules: a tool it can never call with
//! valid arguments (a required argument it has no way to fill, or no examples to learn the
//! tool from) can never come out of the default router, and nothing else would say so.
//!
//! - `embedded-cannot-fill`: a required argument with no `extract`, no schema `default`, and
//!   not the tool's only free-text argument (which gets the message).
//! - `embedded-no-examples`: a tool without `examples` (the router's skill tool excepted: the
//!   skills' examples switch them on).
//!
//! Rules with no examples at all are not written for the embedded router: nothing is said.

use crate::diag::{Code, Diagnostic};
use crate::ruleset::RuleSet;
use crate::ruleset::extract::is_free_text;
use serde_json::Value;

/// Findings about tools the embedded router can never call with valid arguments.
pub(crate) fn check(rs: &RuleSet, out: &mut Vec<Diagnostic>) {
    // Rules that teach the embedded router nothing are not written for it.
    if rs.tools.iter().all(|t| t.examples.is_empty()) {
        return;
    }
    for (k, tool) in rs.tools.iter().enumerate() {
        if k == rs.router.skill_tool_idx {
            continue;
        }
        if tool.examples.is_empty() {
            out.push(
                Diagnostic::warning(
                    Code::EmbeddedNoExamples,
                    format!(
                        "tool '{}' has no examples: the embedded (offline) router can never choose it",
                        tool.id
                    ),
                )
                .at(Some(tool.at.clone()))
                .rule(&*tool.id)
                .hint("add a dozen `examples:` written as users ask for it"),
            );
        }
        let properties = tool.arguments.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = tool
            .arguments
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let unfilled: Vec<&str> = required
            .iter()
            .copied()
            .filter(|name| {
                let declared = tool.extract.iter().any(|x| x.name == *name);
                let default = properties
                    .and_then(|p| p.get(*name))
                    .is_some_and(|p| p.get("default").is_some());
                !declared && !default
            })
            .collect();
        let free = |name: &str| {
            properties
                .and_then(|p| p.get(name))
                .is_some_and(is_free_text)
        };
        if tool.examples.is_empty() {
            continue;
        }
        if let [only] = unfilled[..]
            && free(only)
        {
            continue;
        }
        for name in unfilled {
            let how = if free(name) {
                format!("extract: {{{name}: {{text: {{drop: [command words]}}}}}}")
            } else {
                format!("extract: {{{name}: {{choose: [{{value: …, words: […]}}], default: …}}}}")
            };
            out.push(
                Diagnostic::warning(
                    Code::EmbeddedCannotFill,
                    format!(
                        "the embedded (offline) router cannot fill the required argument '{name}' of tool '{}': its call always fails validation, so offline it can never be chosen",
                        tool.id
                    ),
                )
                .at(Some(tool.at.clone()))
                .rule(&*tool.id)
                .hint(format!(
                    "add to the tool `{how}` (or a `default` in its schema); see README, \"Argument extraction\""
                )),
            );
        }
    }
}

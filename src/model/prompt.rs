//! What the HTTP backends send, built the same way for every provider: the system prompt (a
//! short frame, then the rules' instructions and disambiguation notes, then the context as
//! hints — active skill, draft on screen, interface), and the tools offered (only those
//! available in this context, each with its arguments' JSON Schema as the rules wrote it; the
//! skill tool's schema already lists the allowed skills). Every word of domain comes from the
//! rules; the frame here is neutral English.

use std::fmt::Write as _;

use serde_json::Value;

use super::RouterInput;

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool<'a> {
    /// Its id (the function name the model calls).
    pub name: &'a str,
    /// What it does.
    pub description: &'a str,
    /// JSON Schema of its arguments.
    pub parameters: &'a Value,
}

/// The tools available in this context, in registry order.
pub fn tools<'a>(input: &RouterInput<'a>) -> Vec<OfferedTool<'a>> {
    input
        .tools
        .iter()
        .map(|t| OfferedTool {
            name: &t.id,
            description: &t.description,
            parameters: &t.arguments,
        })
        .collect()
}

/// The system prompt for this message.
pub fn system_prompt(input: &RouterInput<'_>) -> String {
    let r = input.router;
    let mut p = String::new();
    let _ = writeln!(
        p,
        "You route one message of a chat assistant. Decide how the user's last message is \
         handled: call the tools that must run for it, in the order they must run, or call no \
         tool when a plain answer is right. Call at most {} tools. Do not answer the message \
         yourself.",
        r.max_calls
    );
    section(&mut p, "Instructions", &r.instructions);
    section(&mut p, "Which tool", &r.notes);
    p.push_str("\n## Context (hints, not commands)\n");
    match input.skill {
        Some(skill) => {
            let _ = writeln!(
                p,
                "- Active skill: {} ({}). To leave it, call {} with {}: \"{}\".",
                skill.id,
                skill.description.trim(),
                r.skill_tool,
                r.skill_argument,
                r.leave_skill_value
            );
        }
        None => p.push_str("- No skill is active.\n"),
    }
    p.push_str(if input.draft_shown {
        "- A draft is shown on screen.\n"
    } else {
        "- No draft is shown on screen.\n"
    });
    let mut ui = Vec::new();
    if let Some(u) = input.ui {
        if let Some(mode) = &u.mode {
            ui.push(format!("mode \"{mode}\""));
        }
        if let Some(file) = &u.open_file {
            ui.push(format!("open file \"{}\"", file.name));
        }
        if let Some(tab) = &u.tab {
            ui.push(format!("tab \"{tab}\""));
        }
    }
    if ui.is_empty() {
        p.push_str("- Interface: no hint.\n");
    } else {
        let _ = writeln!(p, "- Interface: {}.", ui.join("; "));
    }
    p
}

fn section(p: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(p, "\n## {title}\n");
    for item in items {
        let _ = writeln!(p, "- {}", item.trim());
    }
}

/// A temperature as JSON, written as the rules wrote it (`0.2`, not `0.20000000298023224`).
pub fn temperature(t: f32) -> Value {
    t.to_string()
        .parse::<serde_json::Number>()
        .map_or(Value::Null, Value::Number)
}

//! What a report shows of a line besides its message: the request's context (a generation
//! mode, an open file, the active skill, the assistant's last question…) and the router's
//! recorded answer. The same message in an image generation mode or with a file open is
//! decided differently; an example without them explains nothing.
//!
//! And, for lines that carry an `expect`, which expectations an edit broke, which it fixed, and
//! which the old rules already missed: the last are not the edit's doing and are kept apart.

use serde::Serialize;

use super::{Line, Unexpected};
use crate::contract::parse::cut_to;
use crate::contract::{Decision, Request};
use crate::rules::testcase::ModelScript;
use crate::testing;

/// Longest quoted text in a context item (the assistant's last message, a file name), in
/// characters.
const QUOTE_CHARS: usize = 80;

/// The request's context, one `key=value` item each, only what is set, in the request's order.
pub fn context(req: &Request) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(skill) = &req.skill {
        out.push(format!("skill={skill}"));
    }
    if req.draft_shown {
        out.push("draft_shown".to_owned());
    }
    if let Some(ui) = &req.ui {
        if let Some(mode) = &ui.mode {
            out.push(format!("ui.mode={mode}"));
        }
        if let Some(file) = &ui.open_file {
            out.push(format!("open_file={}", cut_to(&file.name, QUOTE_CHARS)));
        }
        if let Some(tab) = &ui.tab {
            out.push(format!("ui.tab={tab}"));
        }
    }
    if let Some(mode) = req.generation_mode {
        out.push(format!("generation_mode={}", mode.as_str()));
    }
    if !req.attachments.is_empty() {
        let kinds: Vec<String> = req
            .attachments
            .iter()
            .map(|a| {
                if a.face {
                    format!("{} (face)", a.kind)
                } else {
                    a.kind.clone()
                }
            })
            .collect();
        out.push(format!("attachments={}", kinds.join("+")));
    }
    if !req.integrations.is_empty() {
        out.push(format!("integrations={}", req.integrations.join("+")));
    }
    if !req.recent_calls.is_empty() {
        let tools: Vec<&str> = req.recent_calls.iter().map(|c| c.tool.as_str()).collect();
        out.push(format!("recent_calls={}", tools.join("+")));
    }
    if req.web_search_toggle {
        out.push("web_search_toggle".to_owned());
    }
    if let Some(asked) = req.last_assistant() {
        out.push(format!("assistant said: {}", cut_to(asked, QUOTE_CHARS)));
    }
    out
}

/// The recorded router answer in a few words: `model: web_search+TOOL`,
/// `model: no call`, `model: error timeout`; `None` when the line has none.
pub fn answer(script: Option<&ModelScript>) -> Option<String> {
    let script = script?;
    if let Some(error) = &script.error {
        return Some(format!("model: error {error}"));
    }
    if script.calls.is_empty() {
        return Some("model: no call".to_owned());
    }
    let tools: Vec<&str> = script.calls.iter().map(|c| c.tool.as_str()).collect();
    Some(format!("model: {}", tools.join("+")))
}

/// The context items of a line and its recorded answer, for a human report.
pub fn shown(line: &Line) -> Vec<String> {
    let mut out = context(&line.request);
    out.extend(answer(line.model.as_ref()));
    out
}

/// What an edit did to the lines that carry an `expect`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Expectations {
    /// Lines with an `expect` decided by both versions.
    pub total: usize,
    /// How many the old version met.
    pub met_before: usize,
    /// How many the new version meets.
    pub met_after: usize,
    /// Met before, missed now: the edit broke them.
    pub broken: Vec<Unexpected>,
    /// Missed before, met now: the edit fixed them.
    pub fixed: Vec<Unexpected>,
    /// Missed before and now: the old rules already missed them; not the edit's doing.
    pub already_missed: Vec<Unexpected>,
}

/// Sorts every line with an `expect` by what the edit from `before` to `after` did to it.
pub fn expectations(
    lines: &[Line],
    before: &[Option<Decision>],
    after: &[Option<Decision>],
) -> Expectations {
    let mut out = Expectations::default();
    for ((line, b), a) in lines.iter().zip(before).zip(after) {
        let (Some(expect), Some(b), Some(a)) = (&line.expect, b, a) else {
            continue;
        };
        out.total += 1;
        let (fb, fa) = (testing::compare(expect, b), testing::compare(expect, a));
        out.met_before += usize::from(fb.is_empty());
        out.met_after += usize::from(fa.is_empty());
        match (fb.is_empty(), fa.is_empty()) {
            (true, true) => {}
            (true, false) => out.broken.push(Unexpected::of(line, fa)),
            (false, true) => out.fixed.push(Unexpected::of(line, fb)),
            (false, false) => out.already_missed.push(Unexpected::of(line, fa)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_names_what_is_set_and_nothing_else() {
        let req = Request::from_json(
            r#"{"messages":[{"role":"assistant","content":"How old?"},{"role":"user","content":"3"}],
                "generation_mode":"image","ui":{"open_file":{"name":"Plan"}},
                "attachments":[{"kind":"photo","face":true}]}"#,
        )
        .expect("a valid request");
        assert_eq!(
            context(&req),
            [
                "open_file=Plan",
                "generation_mode=image",
                "attachments=photo (face)",
                "assistant said: How old?"
            ]
        );
        let bare = Request::from_json(r#"{"messages":[{"role":"user","content":"hi"}]}"#)
            .expect("a valid request");
        assert!(context(&bare).is_empty());
    }
}

//! Pass 4b: the search detector, the pre-rules and the guards: conditions compiled, tools and
//! skills resolved, call templates split into parts once.

use std::sync::Arc;

use serde_json::Value;

use super::conditions::{CondCx, Scope};
use super::findings::Findings;
use super::symbols::{ListsUsed, Symbols};
use crate::diag::{Code, Diagnostic};
use crate::rules::{Action, RuleFile};
use crate::ruleset::{
    ActionDef, ArgTemplate, CallTemplateDef, GuardDef, PreRuleDef, SearchDef, SearchRuleDef,
    TemplatePart, ToolDef,
};
use crate::source::SourceFile;

/// The search detector: at most one `search` section, its tool resolved and its conditions
/// compiled (the lists they mention marked in `used`).
pub(super) fn search(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> Option<SearchDef> {
    let (file, s) = findings.single_section(files, "search", |rf| rf.search.as_ref())?;
    let tool = symbols.tool(&s.tool, file, "/search/tool", findings);
    let mut cx = CondCx::new(symbols, used, findings, file, Scope::Request);
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
            at: file.locate(&format!("/search/rules/{i}/id")),
        })
        .collect();
    Some(SearchDef {
        tool: tool?,
        off_when_at: s.off_when.as_ref().map(|_| file.locate("/search/off_when")),
        off_when,
        rules,
    })
}

/// The pre-rules, in file order: conditions compiled (the lists they mention marked in `used`),
/// skills and tools resolved, an `{extract}` argument checked against the tool's `extract` in
/// `tools`.
pub(super) fn pre_rules(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    tools: &[ToolDef],
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> Vec<PreRuleDef> {
    let mut out = Vec::new();
    for (file, rf) in files {
        for (i, r) in rf.pre_rules.iter().enumerate() {
            let when = {
                let mut cx = CondCx::new(symbols, used, findings, file, Scope::Request);
                cx.compile(&r.when, &format!("/pre_rules/{i}/when"))
            };
            let base = format!("/pre_rules/{i}/then");
            let action = match &r.then {
                Action::Skill(s) if s == "active" => ActionDef::Skill(None),
                Action::Skill(s) => {
                    ActionDef::Skill(symbols.skill(s, file, &format!("{base}/skill"), findings))
                }
                Action::Calls(calls) => ActionDef::Calls(
                    calls
                        .iter()
                        .enumerate()
                        .filter_map(|(j, c)| {
                            let p = format!("{base}/calls/{j}/tool");
                            let tool = symbols.tool(&c.tool, file, &p, findings)?;
                            let arguments = c
                                .arguments
                                .iter()
                                .map(|(k, v)| {
                                    let at = format!("{base}/calls/{j}/arguments/{k}");
                                    let t = template(v);
                                    if matches!(t, ArgTemplate::Extract) {
                                        check_extracted(file, &at, tools.get(tool), k, findings);
                                    }
                                    (k.clone(), t)
                                })
                                .collect();
                            Some(CallTemplateDef { tool, arguments })
                        })
                        .collect(),
                ),
            };
            out.push(PreRuleDef {
                id: Arc::from(r.id.as_str()),
                when,
                action,
                at: file.locate(&format!("/pre_rules/{i}/id")),
            });
        }
    }
    out
}

/// The guards, in file order, their conditions compiled in the scope of a call (the lists they
/// mention marked in `used`); and for each of the `n_tools` tools (or of `symbols`' tools, if
/// more), the guards that look at its calls.
pub(super) fn guards(
    files: &[(SourceFile, RuleFile)],
    symbols: &Symbols,
    n_tools: usize,
    used: &mut ListsUsed,
    findings: &mut Findings,
) -> (Vec<GuardDef>, Vec<Vec<usize>>) {
    let mut guards = Vec::new();
    let mut by_tool = vec![Vec::new(); n_tools.max(symbols.tools.len())];
    for (file, rf) in files {
        for (i, g) in rf.guards.iter().enumerate() {
            let idx = guards.len();
            if g.tools.is_empty() {
                by_tool.iter_mut().for_each(|v| v.push(idx));
            }
            for (j, t) in g.tools.iter().enumerate() {
                let p = format!("/guards/{i}/tools/{j}");
                if let Some(t) = symbols.tool(t, file, &p, findings) {
                    by_tool[t].push(idx);
                }
            }
            let mut cx = CondCx::new(symbols, used, findings, file, Scope::Call);
            let drop_when = cx.compile(&g.drop_when, &format!("/guards/{i}/drop_when"));
            guards.push(GuardDef {
                id: Arc::from(g.id.as_str()),
                drop_when,
                at: file.locate(&format!("/guards/{i}/id")),
                listed: g
                    .tools
                    .iter()
                    .enumerate()
                    .map(|(j, t)| (t.clone(), file.locate(&format!("/guards/{i}/tools/{j}"))))
                    .collect(),
            });
        }
    }
    (guards, by_tool)
}

/// `"{extract}"` for argument `name` needs the tool to say how it extracts it.
fn check_extracted(
    file: &SourceFile,
    at: &str,
    tool: Option<&ToolDef>,
    name: &str,
    findings: &mut Findings,
) {
    let Some(tool) = tool else { return };
    if tool.extract.iter().any(|x| x.name == name) {
        return;
    }
    let d = Diagnostic::error(
            Code::NoExtract,
            format!(
                "'{{extract}}' fills '{name}' as tool '{}' extracts it, but the tool has no `extract` for '{name}'",
                tool.id
            ),
        )
        .at(Some(file.locate(at)))
        .hint(format!(
            "add `extract: {{{name}: ...}}` to tool '{}', or write the value here",
            tool.id
        ));
    findings.push(d);
}

/// Splits `{message}` and `{open_file}` out of string arguments once, at compile time;
/// `"{extract}"` alone asks for the tool's own extraction of the argument.
fn template(v: &Value) -> ArgTemplate {
    let Some(s) = v.as_str() else {
        return ArgTemplate::Value(v.clone());
    };
    if s == "{extract}" {
        return ArgTemplate::Extract;
    }
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

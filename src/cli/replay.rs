//! `turnout replay CORPUS.jsonl`: decide a corpus or a decision log with the rules (and with
//! another version of them, `--against`), and say what the rules do to it, or exactly what an
//! edit changes (against the other version, or against the decisions the log recorded).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use super::{LimitArgs, ModelArgs, Output, load_rules};
use crate::replay::disagree::{self, Kind, KindReport};
use crate::replay::{self, Diff, Expectations, RuleEffect, Summary, Unexpected};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
The router's answer: a line's recorded answer (a corpus line's \"model\", a decision log \
line's \"model\") is given to the engine as the model's answer, which makes the line \
deterministic and free; lines without one go to the rules' router.model (else embedded). \
--model given on the command line replaces every recorded answer: each line is decided with \
that model (--model none: by the rules alone), so an edit of the rules that the recorded \
answers hide (a search phrase the model already asked for) shows.

A decision log (serve --decision-log) is read as it is. Without --against, the decisions are \
compared with the decisions the log recorded. A line logged with --log-messages hash or none \
carries no message text and cannot be replayed: each is named on stderr and counted, and the \
run goes on.")]
pub struct Args {
    /// The corpus or decision log: JSON lines, each a request, {"id", "request", "model",
    /// "expect"}, or a line of `serve --decision-log`.
    corpus: PathBuf,
    /// The rules directory (the new version, with --against).
    #[arg(long, default_value = "rules")]
    rules: PathBuf,
    /// Another rules directory (the old version): report exactly the decisions that differ.
    /// Without it, a decision log's lines are compared with the decisions it recorded.
    #[arg(long, value_name = "OTHER_DIR")]
    against: Option<PathBuf>,
    /// The router model for lines without a recorded answer; given, it replaces the recorded
    /// answers too (see below).
    #[command(flatten)]
    model: ModelArgs,
    /// How to print: human, or one JSON object (with a top-level "changed" count under
    /// --against).
    #[arg(long, value_enum, default_value_t = Output::Human)]
    format: Output,
    /// Exit 1 when any decision changed (with --against): for CI on a rules pull request.
    #[arg(long)]
    fail_on_change: bool,
    /// Exit 1 when more than N decisions changed (with --against).
    #[arg(long, value_name = "N")]
    max_changed: Option<usize>,
    /// Report where the rules and the router model disagree instead (with the --rules
    /// version): lines where the model asked for web search and no search rule fired
    /// (candidate phrases), where a search rule fired and the model did not ask (candidate
    /// false positives), each guard's vetoes of the model, and the pre-rules that settled a
    /// message; grouped, counted, with examples.
    #[arg(long)]
    disagreements: bool,
    /// Only these kinds of disagreement (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "KIND")]
    kinds: Vec<Kind>,
    /// Examples shown per group of disagreements (JSON too).
    #[arg(long, value_name = "N", default_value_t = 5)]
    examples: usize,
    /// Write the disagreeing lines (of --kinds) as rule test cases to FILE, in the format of
    /// rules/tests/*.yaml: the request, the router's answer (without the search call, for a
    /// candidate phrase) and what the rules decide now as `expect`, so the cases pass as
    /// written; flip the expectations that should change. Implies --disagreements.
    #[arg(long, value_name = "FILE")]
    emit_cases: Option<PathBuf>,
    /// Most cases --emit-cases writes.
    #[arg(long, value_name = "N", default_value_t = 500)]
    max_cases: usize,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: Args) -> ExitCode {
    let text = match std::fs::read_to_string(&args.corpus) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.corpus.display());
            return ExitCode::from(2);
        }
    };
    let replay::Lines {
        mut lines,
        bad,
        without_texts,
    } = replay::read_lines(&text);
    for b in &bad {
        eprintln!("{}:{}: {}", args.corpus.display(), b.line, b.error);
    }
    for b in &without_texts {
        eprintln!("{}:{}: skipped: {}", args.corpus.display(), b.line, b.error);
    }
    // A model named on the command line decides every line: the recorded answers would hide
    // what the rules do on their own.
    let replaced = args.model.given() && lines.iter().any(|l| l.model.is_some());
    if args.model.given() {
        for line in &mut lines {
            line.model = None;
            line.rules_only = false;
        }
    }
    let Some(new) = load_rules(&args.rules, &args.limits) else {
        return ExitCode::from(2);
    };
    let old = match &args.against {
        Some(dir) => match load_rules(dir, &args.limits) {
            Some(rs) => Some(rs),
            None => return ExitCode::from(2),
        },
        None => None,
    };
    let (model, rt) = match args.model.build(&new, 1) {
        Ok(built) => built,
        Err(status) => return status,
    };
    if let (Some(m), Some(old)) = (&model, &old) {
        m.prepare(old);
    }
    let passes = if old.is_some() { 2 } else { 1 };
    let bar = super::progress(
        indicatif::ProgressBar::new((lines.len() * passes) as u64),
        "{bar:40} {pos}/{len} requests, {per_sec}, {eta}",
    );
    let started = Instant::now();
    let model = model.as_deref();
    let new_decisions = rt.block_on(replay::run(&new, &lines, model, |n| {
        bar.set_position(n as u64);
    }));
    if args.disagreements || args.emit_cases.is_some() {
        bar.finish_and_clear();
        let kinds = if args.kinds.is_empty() {
            Kind::ALL.to_vec()
        } else {
            args.kinds.clone()
        };
        let found = rt.block_on(disagree::find(&new, &lines, &new_decisions, model));
        let report = disagree::report(&lines, &found, &kinds, args.examples);
        if let Some(path) = &args.emit_cases {
            let file = disagree::cases(&lines, &found, &kinds, args.max_cases);
            let written = serde_yaml::to_string(&file)
                .map_err(|e| e.to_string())
                .and_then(|yaml| {
                    let head = "# Written by `turnout replay --emit-cases`: each case expects what the rules\n\
                                # decided; change the expectations that should be different.\n";
                    std::fs::write(path, format!("{head}{yaml}")).map_err(|e| e.to_string())
                });
            match written {
                Ok(()) => eprintln!("{} cases written to {}", file.cases.len(), path.display()),
                Err(e) => {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
        let text = match args.format {
            Output::Json => format!(
                "{}\n",
                json!({
                    "lines": lines.len(),
                    "bad_lines": bad,
                    "without_texts": without_texts,
                    "recorded_answers_replaced": replaced,
                    "disagreements": report,
                })
            ),
            Output::Human => human_disagreements(lines.len(), &report),
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        return if bad.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        };
    }
    let old_decisions = old.as_ref().map(|old| {
        rt.block_on(replay::run(old, &lines, model, |n| {
            bar.set_position((lines.len() + n) as u64);
        }))
    });
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let per_second = (lines.len() * passes) as f64 / seconds.max(1e-9);
    let summary = replay::summarize(&lines, &new_decisions);
    // Against the other rules, else against what the log recorded.
    let against_log = old_decisions.is_none();
    let before = old_decisions.or_else(|| replay::recorded(&lines));
    let diff = before
        .as_ref()
        .map(|old| replay::diff(&lines, old, &new_decisions));
    let compared = match (&diff, against_log) {
        (None, _) => None,
        (Some(_), false) => Some("rules"),
        (Some(_), true) => Some("log"),
    };
    let before_summary = before.as_ref().map(|b| replay::summarize(&lines, b));
    // What the edit did to the lines' expectations, apart from those the old rules missed.
    let expectations = before
        .as_ref()
        .map(|b| replay::expectations(&lines, b, &new_decisions))
        .filter(|e| e.total > 0);
    // Which rules decided a line, and which agreed with the model: each fired rule taken out.
    let effects = rt.block_on(replay::attribute(&new, &lines, &new_decisions, model));
    let text = match args.format {
        Output::Json => {
            let mut v = json!({
                "lines": lines.len(),
                "bad_lines": bad,
                "without_texts": without_texts,
                "recorded_answers_replaced": replaced,
                "summary": summary,
                "requests_per_second": per_second.round(),
            });
            v["rule_effects"] = json!(effects);
            if let Some(d) = &diff {
                v["changed"] = json!(d.changed);
                v["compared_with"] = json!(compared);
                v["before"] = json!(before_summary);
                v["diff"] = json!(d);
            }
            if let Some(e) = &expectations {
                v["expectations"] = json!(e);
            }
            format!("{v}\n")
        }
        Output::Human => {
            let mut head = format!(
                "{} requests ({} unreadable, {} logged without their texts), {per_second:.0} decisions/s\n",
                lines.len(),
                bad.len(),
                without_texts.len()
            );
            if replaced {
                head.push_str("recorded router answers replaced by --model\n");
            }
            if compared == Some("log") {
                head.push_str("compared with the decisions the log recorded\n");
            }
            head + &human(
                &summary,
                before_summary.as_ref(),
                &effects,
                diff.as_ref(),
                expectations.as_ref(),
            )
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    let changed = diff.as_ref().map_or(0, |d| d.changed);
    let too_many =
        (args.fail_on_change && changed > 0) || args.max_changed.is_some_and(|max| changed > max);
    if !bad.is_empty() {
        ExitCode::from(2)
    } else if too_many {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn counts(map: &BTreeMap<String, usize>) -> String {
    let mut v: Vec<(&String, &usize)> = map.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `key before → after` for every key of either map, the largest after first.
fn totals(before: &BTreeMap<String, usize>, after: &BTreeMap<String, usize>) -> String {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let n = |m: &BTreeMap<String, usize>, k: &String| m.get(k).copied().unwrap_or(0);
    keys.sort_by(|a, b| n(after, b).cmp(&n(after, a)).then_with(|| a.cmp(b)));
    keys.iter()
        .map(|k| format!("{k} {} → {}", n(before, k), n(after, k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `  line N (id): message  [context; answer]`.
fn example(line: usize, id: Option<&str>, message: &str, context: &[String]) -> String {
    let id = id.map(|i| format!(" ({i})")).unwrap_or_default();
    let context = if context.is_empty() {
        String::new()
    } else {
        format!("  [{}]", context.join("; "))
    };
    format!("line {line}{id}: {message}{context}")
}

/// Lines that missed their expectation, with what differed, at most 20.
fn missed(line: &mut impl FnMut(String), heading: &str, list: &[Unexpected]) {
    if list.is_empty() {
        return;
    }
    line(format!("  {heading}: {}", list.len()));
    for u in list.iter().take(20) {
        line(format!(
            "    {}",
            example(u.line, u.id.as_deref(), &u.message, &u.context)
        ));
        line(format!("      {}", u.failures.join("; ")));
    }
}

fn human(
    s: &Summary,
    before: Option<&Summary>,
    effects: &BTreeMap<String, RuleEffect>,
    diff: Option<&Diff>,
    expectations: Option<&Expectations>,
) -> String {
    let mut out = String::new();
    let mut line = |t: String| {
        out.push_str(&t);
        out.push('\n');
    };
    match before {
        // The totals before the edit (or as served) and after it, side by side.
        Some(b) => {
            line(format!("before → after ({} lines):", b.total));
            line(format!("  outcomes: {}", totals(&b.outcomes, &s.outcomes)));
            line(format!("  tools: {}", totals(&b.tools, &s.tools)));
            line(format!("  skills: {}", totals(&b.skills, &s.skills)));
            line(format!(
                "  web search on: {} → {}",
                b.web_search, s.web_search
            ));
        }
        None => {
            line(format!("outcomes: {}", counts(&s.outcomes)));
            line(format!("tools: {}", counts(&s.tools)));
            line(format!("skills: {}", counts(&s.skills)));
            line(format!("web search on: {} of {}", s.web_search, s.total));
        }
    }
    let mut rules: Vec<(&String, &RuleEffect)> = effects.iter().collect();
    rules.sort_by(|a, b| b.1.matched.cmp(&a.1.matched).then_with(|| a.0.cmp(b.0)));
    line("rules: lines matched = decided (the decision differs without the rule) + agreed with the model (the same without it)".to_owned());
    for (rule, e) in rules {
        let shadowed = e.matched - e.fired;
        let shadowed = if shadowed > 0 {
            format!(" ({shadowed} of them: the model had asked for web search already)")
        } else {
            String::new()
        };
        line(format!(
            "  {rule}: matched {}, decided {}, agreed {}{shadowed}",
            e.matched, e.decided, e.agreed
        ));
    }
    match expectations {
        // The edit's doing kept apart from what the old rules already missed.
        Some(e) => {
            line(format!(
                "expectations met: {} → {} of {}",
                e.met_before, e.met_after, e.total
            ));
            missed(&mut line, "broken by the edit", &e.broken);
            missed(
                &mut line,
                "fixed by the edit (as they were missed)",
                &e.fixed,
            );
            missed(
                &mut line,
                "already missed before the edit (not its doing)",
                &e.already_missed,
            );
        }
        None if s.expected > 0 => {
            line(format!(
                "expectations: {} of {} met",
                s.expected - s.unexpected.len(),
                s.expected
            ));
            missed(&mut line, "missed", &s.unexpected);
        }
        None => {}
    }
    if let Some(d) = diff {
        line(format!("changed: {} of {}", d.changed, d.total));
        for g in &d.groups {
            line(format!(
                "  {} → {}: {} ({})",
                g.from,
                g.to,
                g.count,
                counts(&g.rules)
            ));
            for e in &g.examples {
                line(format!(
                    "    {}",
                    example(e.line, e.id.as_deref(), &e.message, &e.context)
                ));
            }
        }
    }
    out
}

fn human_disagreements(total: usize, report: &[KindReport]) -> String {
    let mut out = format!("where the rules and the model disagree, on {total} lines:\n");
    for k in report {
        out.push_str(&format!("{}: {}\n", k.title, k.count));
        for g in &k.groups {
            out.push_str(&format!("  {}: {}\n", g.key, g.count));
            for e in &g.examples {
                out.push_str(&format!(
                    "    {} → {}\n",
                    example(e.line, e.id.as_deref(), &e.message, &e.context),
                    e.decision
                ));
            }
        }
    }
    out
}

//! `turnout calibrate`: k-fold cross-validation of the embedded router on the pack's own
//! examples, the figures of the current `threshold`, `margin` and `confusable.ratio` and of the
//! best values of a grid, and the YAML lines to paste. The work is
//! `crate::model::embedded::calibrate`; this file parses flags and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{LimitArgs, Output, load_rules};
use crate::model::embedded::calibrate::{self, Calibration, Outcome, Score};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
The examples (tools' and auto skills' `examples`, the skill tool's, and \
router.embedded.chat_examples) are dealt into N folds, class by class in the order written. \
For each fold the classifier is trained on the others and decides the held-out examples as \
the router decides a message (frames applied, confusable pairs checked, every class allowed). \
Reported per fold and overall, for the values in the rules and for the best values of the \
grid: the share of tool/skill examples routed to their own class, and the share of chat \
examples left without a tool. Best: the most tool/skill examples routed among the values \
that leave at least as many chat examples alone as the current ones.

These are the pack's own examples, not an evaluation set: the figures say which way to move \
the numbers, not how well the router does on real messages.")]
pub struct Args {
    /// The rules directory.
    #[arg(long, default_value = "rules")]
    rules: PathBuf,
    /// How many folds (at least 2).
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// How to print: human, or one JSON object.
    #[arg(long, value_enum, default_value_t = Output::Human)]
    format: Output,
    #[command(flatten)]
    limits: LimitArgs,
}

pub fn run(args: Args) -> ExitCode {
    let Some(rs) = load_rules(&args.rules, &args.limits) else {
        return ExitCode::from(2);
    };
    let c = match calibrate::calibrate(&rs, args.folds) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match args.format {
        Output::Json => println!("{}", json(&c)),
        Output::Human => print!("{}", human(&c)),
    }
    ExitCode::SUCCESS
}

/// The JSON report: the calibration, the shares beside the counts, and the YAML lines.
fn json(c: &Calibration) -> serde_json::Value {
    let outcome = |o: &Outcome| {
        let score = |s: &Score| {
            serde_json::json!({
                "routed": s.routed, "actions": s.actions, "routed_share": s.routed_share(),
                "left_alone": s.left_alone, "chat": s.chat, "left_alone_share": s.left_alone_share(),
            })
        };
        serde_json::json!({
            "settings": o.settings,
            "overall": score(&o.overall),
            "per_fold": o.per_fold.iter().map(score).collect::<Vec<_>>(),
        })
    };
    serde_json::json!({
        "folds": c.folds,
        "examples": c.examples,
        "classes": c.classes,
        "current": outcome(&c.current),
        "best": outcome(&c.best),
        "chosen_by": c.chosen_by,
        "grid": c.grid,
        "yaml": c.best.settings.yaml(),
    })
}

fn percent(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.1} %", s * 100.0))
}

fn human(c: &Calibration) -> String {
    let mut out = format!(
        "{}-fold cross-validation on the rules' own examples ({} examples, {} classes; not an evaluation set)\n",
        c.folds, c.examples, c.classes
    );
    for (name, o) in [("current", &c.current), ("best", &c.best)] {
        let s = &o.settings;
        let ratio = s.ratio.map_or("none".into(), |r| format!("{r:.2}"));
        out.push_str(&format!(
            "\n{name}: threshold {:.3}, margin {:.3}, confusable ratio {ratio}\n",
            s.threshold, s.margin
        ));
        let line = |label: String, s: &Score| {
            format!(
                "  {label:<8} tools/skills routed {:>7} ({}/{}), chat left alone {:>7} ({}/{})\n",
                percent(s.routed_share()),
                s.routed,
                s.actions,
                percent(s.left_alone_share()),
                s.left_alone,
                s.chat
            )
        };
        for (i, f) in o.per_fold.iter().enumerate() {
            out.push_str(&line(format!("fold {}", i + 1), f));
        }
        out.push_str(&line("overall".into(), &o.overall));
    }
    out.push_str(&format!("\nbest chosen by: {}\n", c.chosen_by));
    if c.best.settings == c.current.settings {
        out.push_str("the current values are the best of the grid\n");
    } else {
        out.push_str("to use them, in router.yaml:\n");
        out.push_str(&c.best.settings.yaml());
    }
    out
}

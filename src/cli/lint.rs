//! `turnout lint [DIR...]`: schema, meaning checks, test cases and coverage of rules
//! directories. Exit status 0 clean, 1 findings, 2 unusable input (the worst over all DIRs).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::runtime;
use crate::lint::{self, Options, Report};
use crate::report::{self, Format, Sources};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rules directories to check.
    #[arg(default_value = "rules")]
    dirs: Vec<PathBuf>,
    /// How to print findings: human (source line and caret), json (one object per line, then a
    /// summary object), github (workflow annotations).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// Fail (exit 1) when test coverage of rules and word-list entries is below PCT percent.
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    min_coverage: Option<f64>,
    /// List every rule and word-list entry no test case exercised (without it, one line says
    /// how many entries).
    #[arg(long)]
    coverage: bool,
    #[command(flatten)]
    limits: super::LimitArgs,
}

/// `80`, `80%` or `72.5` → a percentage in 0..=100.
pub(super) fn parse_percent(s: &str) -> Result<f64, String> {
    let n: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage"))?;
    if (0.0..=100.0).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{s} is not between 0 and 100"))
    }
}

pub fn run(args: Args) -> ExitCode {
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let options = Options {
        min_coverage: args.min_coverage,
        limits: args.limits.limits(),
    };
    let mut status = 0u8;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for dir in &args.dirs {
        let report = rt.block_on(lint::lint_dir(dir, &options));
        let text = print(&report, &args);
        // A closed pipe (`| head`) is not worth a panic.
        if out.write_all(text.as_bytes()).is_err() {
            break;
        }
        status = status.max(report.exit_status(args.deny_warnings));
    }
    let _ = out.flush();
    ExitCode::from(status)
}

fn print(report: &Report, args: &Args) -> String {
    let deny_warnings = args.deny_warnings;
    let uncovered = |c: &lint::coverage::Coverage| {
        if args.coverage {
            c.uncovered_lines()
        } else {
            c.uncovered_short()
        }
    };
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    match args.format {
        Format::Human => {
            let sources = Sources::of(&report.texts);
            for d in &report.diagnostics {
                line(&report::human(d, &sources));
                line("");
            }
            let cases_run = report.tests.is_some_and(|t| t.passed + t.failed > 0);
            if let Some(c) = report.coverage.as_ref().filter(|_| cases_run) {
                let uncovered = uncovered(c);
                if !uncovered.is_empty() {
                    line("not exercised by any test case:");
                    for u in &uncovered {
                        line(&format!("  {u}"));
                    }
                }
            }
            line(&report.summary());
            if deny_warnings && report.errors() == 0 && report.warnings() > 0 {
                line("warnings are denied (--deny-warnings)");
            }
        }
        Format::Json => {
            for d in &report.diagnostics {
                line(&report::json_line(d));
            }
            let summary = json!({"summary": {
                "dir": report.dir.display().to_string(),
                "errors": report.errors(),
                "warnings": report.warnings(),
                "tests": report.tests.map(|t| json!({"passed": t.passed, "failed": t.failed})),
                "coverage": report.coverage.as_ref().map(|c| c.to_json()),
                "exit_status": report.exit_status(deny_warnings),
            }});
            line(&summary.to_string());
        }
        Format::Github => {
            for d in &report.diagnostics {
                line(&report::github(d));
            }
            let cases_run = report.tests.is_some_and(|t| t.passed + t.failed > 0);
            if let Some(c) = report.coverage.as_ref().filter(|_| cases_run) {
                for u in uncovered(c) {
                    line(&report::plain_line(&format!("not exercised: {u}")));
                }
            }
            line(&report::plain_line(&report.summary()));
        }
    }
    out
}

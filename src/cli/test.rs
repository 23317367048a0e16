//! `turnout test`: runs rule test cases and prints `N passed, M failed` last.

use std::path::PathBuf;
use std::process::ExitCode;

use super::runtime;
use crate::compile;
use crate::lint::coverage::{self, Coverage};
use crate::report::{self, Sources};
use crate::testing;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rules directory.
    #[arg(long, default_value = "rules")]
    rules: PathBuf,
    /// Test files to run (default: every YAML file in RULES/tests). A lone directory is the
    /// rules directory, as `turnout lint DIR` takes it.
    files: Vec<PathBuf>,
    /// Print every case, not only the failing ones.
    #[arg(long, short)]
    verbose: bool,
    /// Report which rules and word-list entries no case exercised.
    #[arg(long)]
    coverage: bool,
    /// Fail (exit 1) when coverage is below PCT percent (implies --coverage).
    #[arg(long, value_name = "PCT", value_parser = super::lint::parse_percent)]
    min_coverage: Option<f64>,
    #[command(flatten)]
    limits: super::LimitArgs,
}

pub fn run(mut args: Args) -> ExitCode {
    // `turnout test rules`, written as `turnout lint rules` is: a lone directory is the rules
    // directory, not a test file.
    if let [only] = args.files.as_slice()
        && only.is_dir()
    {
        args.rules = only.clone();
        args.files.clear();
    }
    let loaded = compile::load_dir_with(&args.rules, &args.limits.limits());
    let sources = Sources::of(&loaded.texts);
    for d in &loaded.diagnostics {
        eprintln!("{}", report::human(d, &sources));
    }
    let Some(rs) = &loaded.ruleset else {
        if !loaded.diagnostics.iter().any(|d| d.is_error()) {
            eprintln!(
                "error: the rules in {} could not be loaded",
                args.rules.display()
            );
        }
        return ExitCode::from(2);
    };
    let files = if args.files.is_empty() {
        testing::test_files(&args.rules)
    } else {
        args.files
    };
    let testing::Cases {
        cases,
        diagnostics,
        not_run,
        texts,
    } = testing::load_cases(rs, &files);
    let sources = Sources::of(&texts);
    for d in &diagnostics {
        eprintln!("{}", report::human(d, &sources));
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let mut coverage = Coverage::new(rs);
    let results = rt.block_on(coverage::run_cases(rs, &cases, &mut coverage));
    let mut failed = not_run;
    let mut passed = 0;
    for r in &results {
        let loc = format!("{}:{}", r.location.file.display(), r.location.line);
        if r.passed() {
            passed += 1;
            if args.verbose {
                println!("ok    {loc}  {}", r.name);
            }
            continue;
        }
        failed += 1;
        println!("FAIL  {loc}  {}", r.name);
        for f in &r.failures {
            println!("        {f}");
        }
        if let Some(d) = &r.decision {
            println!("        trace:");
            for step in &d.trace {
                let rule = step
                    .rule
                    .as_deref()
                    .map(|r| format!(" [{r}]"))
                    .unwrap_or_default();
                println!(
                    "          {:?}{rule}: {} — {}",
                    step.stage, step.effect, step.why
                );
            }
        }
    }
    let mut below = false;
    if args.coverage || args.min_coverage.is_some() {
        let uncovered = coverage.uncovered_lines();
        if !uncovered.is_empty() {
            println!("not exercised by any test case:");
        }
        for line in uncovered {
            println!("  {line}");
        }
        println!("{}", coverage.summary());
        if let Some(min) = args.min_coverage
            && coverage.percent() < min
        {
            below = true;
            println!(
                "error[min-coverage]: coverage {:.1}% is below the required {min}%",
                coverage.percent()
            );
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 && !below {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

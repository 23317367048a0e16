//! `turnout test`: runs rule test cases and prints `N passed, M failed` last.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{load_rules, runtime};
use crate::testing;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rules directory.
    #[arg(long, default_value = "rules")]
    rules: PathBuf,
    /// Test files to run (default: every YAML file in RULES/tests).
    files: Vec<PathBuf>,
    /// Print every case, not only the failing ones.
    #[arg(long, short)]
    verbose: bool,
}

pub fn run(args: Args) -> ExitCode {
    let Some(rs) = load_rules(&args.rules) else {
        return ExitCode::from(2);
    };
    let files = if args.files.is_empty() {
        testing::test_files(&args.rules)
    } else {
        args.files
    };
    let (cases, diagnostics) = testing::load_cases(&rs, &files);
    for d in &diagnostics {
        eprintln!("{d}");
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let results = rt.block_on(testing::run_cases(&rs, &cases));
    let mut failed = diagnostics.iter().filter(|d| d.is_error()).count();
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
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

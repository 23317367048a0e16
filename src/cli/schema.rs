//! `turnout schema`: the JSON Schema of rule files, for editors and CI.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::rules::schema::{rules_schema, schema_text, tests_schema, write_schemas};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the schema of rule test files instead.
    #[arg(long)]
    tests: bool,
    /// Write rules.schema.json and tests.schema.json into this directory instead of printing.
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    if let Some(dir) = args.write {
        return match write_schemas(&dir) {
            Ok(paths) => {
                paths.iter().for_each(|p| println!("wrote {}", p.display()));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!(
                    "error: cannot write the schemas into {}: {e}",
                    dir.display()
                );
                ExitCode::from(2)
            }
        };
    }
    let schema = if args.tests {
        tests_schema()
    } else {
        rules_schema()
    };
    print!("{}", schema_text(&schema));
    ExitCode::SUCCESS
}

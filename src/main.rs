use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    turnout::cli::Cli::parse().run()
}

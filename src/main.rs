use std::process::ExitCode;

use clap::Parser;

/// mimalloc: loading a rule pack allocates a lot (see `Cargo.toml`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    turnout::cli::Cli::parse().run()
}

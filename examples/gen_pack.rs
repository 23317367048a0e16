//! Writes the shipped rule pack grown N times, for benchmarks (see `benches/genpack`):
//!
//! ```sh
//! cargo run --release --example gen_pack -- 10 /tmp/pack10
//! target/release/turnout lint /tmp/pack10
//! ```
//!
//! It loads the written pack once and fails if the rules do not compile.

#[path = "../benches/genpack/mod.rs"]
mod genpack;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(factor), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: gen_pack FACTOR OUT_DIR   (e.g. gen_pack 10 /tmp/pack10)");
        return ExitCode::from(2);
    };
    let Ok(factor) = factor.parse::<usize>() else {
        eprintln!("FACTOR must be a whole number, got '{factor}'");
        return ExitCode::from(2);
    };
    let out = PathBuf::from(out);
    let stats = match genpack::write_pack(&genpack::shipped(), &out, factor) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("writing {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{}: shipped pack + {} generated parts ({} word lists, {} entries, {} pre-rules, {} search rules, {} guards)",
        out.display(),
        stats.parts,
        stats.lists,
        stats.entries,
        stats.pre_rules,
        stats.search_rules,
        stats.guards
    );
    let start = Instant::now();
    let loaded = turnout::compile::load_dir(&out);
    let errors: Vec<_> = loaded.diagnostics.iter().filter(|d| d.is_error()).collect();
    if loaded.ruleset.is_none() || !errors.is_empty() {
        for d in errors {
            eprintln!("{d}");
        }
        eprintln!("the generated pack does not compile");
        return ExitCode::FAILURE;
    }
    println!("compiles: load + compile took {:.0?}", start.elapsed());
    ExitCode::SUCCESS
}

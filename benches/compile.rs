//! Loading and compiling a rules directory (`turnout::compile::load_dir`, what every reload
//! pays): the shipped pack and the pack grown 10× and 100× (`genpack`).
//! `cargo bench --bench compile`.

/// The allocator the `turnout` binary uses (`src/main.rs`): the figures are the service's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "genpack/mod.rs"]
mod genpack;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    for factor in [1, 10, 100] {
        let dir = genpack::temp_pack(factor);
        assert!(
            turnout::compile::load_dir(&dir).ruleset.is_some(),
            "the {factor}x pack compiles"
        );
        // A 100x compile takes seconds before this fix: few samples keep the run sane.
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(if factor >= 100 { 20 } else { 5 }));
        group.bench_function(format!("load_dir/{factor}x"), |b| {
            b.iter(|| turnout::compile::load_dir(black_box(&dir)))
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

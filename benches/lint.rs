//! `turnout lint` on the shipped rule pack: loading and compiling every file (as reload does),
//! the whole-model meaning checks, all the test cases, and coverage. The target is under 100 ms.
//! Then the same on the pack grown 10× (`genpack`; the shipped test cases included): the target
//! is under 1 s. `cargo bench --bench lint`.

/// The allocator the `turnout` binary uses (`src/main.rs`): the figures are the service's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "genpack/mod.rs"]
mod genpack;

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use turnout::lint::{Options, lint_dir};

fn bench(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let options = Options::default();
    let report = rt.block_on(lint_dir(&dir, &options));
    assert_eq!(
        report.errors() + report.warnings(),
        0,
        "{:?}",
        report.diagnostics
    );
    assert!(
        report
            .tests
            .is_some_and(|t| t.passed > 100 && t.failed == 0)
    );

    let mut group = c.benchmark_group("lint");
    group.sample_size(30);
    group.bench_function("shipped_pack", |b| {
        b.iter(|| rt.block_on(lint_dir(black_box(&dir), &options)))
    });
    // The part reload pays for: reading, schema validation and compiling, no test cases.
    group.bench_function("load_dir_only", |b| {
        b.iter(|| turnout::compile::load_dir(black_box(&dir)))
    });

    let grown = genpack::temp_pack(10);
    let report = rt.block_on(lint_dir(&grown, &options));
    assert_eq!(report.errors(), 0, "{:?}", report.diagnostics);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("grown_10x", |b| {
        b.iter(|| rt.block_on(lint_dir(black_box(&grown), &options)))
    });
    let _ = std::fs::remove_dir_all(&grown);
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! One decision through the whole pipeline on the shipped rule pack, trace included; then the
//! same decision without a model on the pack grown 10× and 100× (`genpack`).
//! `cargo bench --bench decision` — medians are reported by criterion.

/// The allocator the `turnout` binary uses (`src/main.rs`): the figures are the service's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "genpack/mod.rs"]
mod genpack;

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use turnout::contract::Request;
use turnout::engine;
use turnout::model::RawCall;
use turnout::model::scripted::ScriptedModel;

const SHORT: &str = "сколько стоит айфон";
/// About 200 characters, the length of a typical detailed request.
const LONG: &str = "Привет! Посмотри, пожалуйста, статистику моей страницы в Schai за прошлую неделю и напиши по ней короткий пост для подписчиков: что понравилось людям больше всего и что стоит попробовать дальше";

fn request(text: &str) -> Request {
    serde_json::from_value(json!({
        "messages": [
            {"role": "user", "content": "привет"},
            {"role": "assistant", "content": "Здравствуйте! Чем помочь?"},
            {"role": "user", "content": text}
        ]
    }))
    .expect("a valid request")
}

fn bench(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let loaded = turnout::compile::load_dir(&dir);
    let rs = loaded.ruleset.expect("the shipped rules load");
    assert!(
        LONG.chars().count() >= 190,
        "the long message is ~200 characters"
    );

    let mut group = c.benchmark_group("decision");
    for (name, text) in [("short", SHORT), ("200_chars", LONG)] {
        let req = request(text);
        group.bench_function(format!("model_none/{name}"), |b| {
            b.iter(|| engine::decide_without_model(black_box(&rs), black_box(&req)))
        });
        let model = ScriptedModel::calls(vec![
            RawCall {
                tool: "schai_stats".into(),
                arguments: json!({"period": "week"}),
            },
            RawCall {
                tool: "post_draft".into(),
                arguments: json!({"topic": "статистика за неделю"}),
            },
        ]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        group.bench_function(format!("scripted_two_calls/{name}"), |b| {
            b.iter(|| {
                rt.block_on(engine::decide(
                    black_box(&rs),
                    black_box(&req),
                    engine::Options::model(Some(&model)),
                ))
            })
        });
    }
    group.finish();

    // Rules only, on generated packs: what more word lists and rules cost each decision.
    let mut group = c.benchmark_group("decision_grown");
    for factor in [1, 10, 100] {
        let dir = genpack::temp_pack(factor);
        let rs = turnout::compile::load_dir(&dir)
            .ruleset
            .expect("the generated pack loads");
        for (name, text) in [("short", SHORT), ("200_chars", LONG)] {
            let req = request(text);
            group.bench_function(format!("model_none/{factor}x/{name}"), |b| {
                b.iter(|| engine::decide_without_model(black_box(&rs), black_box(&req)))
            });
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

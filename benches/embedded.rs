//! One call of the embedded offline router on the shipped pack, trained beforehand as a reload
//! trains it: a ~60-character message, every tool offered. The target is under 10 µs.
//! `cargo bench --bench embedded`.

/// The allocator the `turnout` binary uses (`src/main.rs`): the figures are the service's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use turnout::contract::Message;
use turnout::model::embedded::EmbeddedModel;
use turnout::model::{Model, RouterInput};

/// 60 characters: a request with a period and an object, as users write them.
const MESSAGE: &str = "покажи, сколько визитов было на моём сайте за прошлую неделю";

fn bench(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let rs = turnout::compile::load_dir(&dir)
        .ruleset
        .expect("the shipped rules load");
    let messages: Vec<Message> = serde_json::from_value(serde_json::json!([
        {"role": "user", "content": MESSAGE}
    ]))
    .expect("messages");
    let model = EmbeddedModel::new();
    model.train(&rs);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // As the engine hands it over: the message already normalised for the rules.
    let normalized = rs
        .normalizer
        .normalize(messages.last().map_or("", |m| m.content.as_str()));
    let input = RouterInput {
        normalized: Some(&normalized),
        ..RouterInput::new(&rs, &messages)
    };
    let answer = rt.block_on(model.route(&input)).expect("an answer");
    assert!(!answer.calls.is_empty(), "the bench message calls a tool");
    c.bench_function("embedded/route_60_chars", |b| {
        b.iter(|| rt.block_on(model.route(black_box(&input))))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! `turnout calibrate`: cross-validation of the embedded router on the pack's own examples, as
//! an operator runs it. The figures it prints are the library's; on a pack whose threshold is
//! set too high, the best threshold it finds is lower.
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use turnout::model::embedded::Training;
use turnout::model::embedded::calibrate::{self, Settings};

use crate::common::{bin, root};

fn calibrate_json(rules: &Path) -> Value {
    let out = Command::new(bin())
        .args(["calibrate", "--folds", "5", "--format", "json", "--rules"])
        .arg(rules)
        .output()
        .expect("turnout runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn load(dir: &Path) -> turnout::RuleSet {
    let loaded = turnout::compile::load_dir(dir);
    loaded
        .ruleset
        .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics))
}

#[test]
fn calibrate_reports_for_the_current_values_what_the_library_computes() {
    let dir = root().join("rules");
    let got = calibrate_json(&dir);
    let rs = load(&dir);
    let current = Settings::of(&rs);
    let want = calibrate::cross_validate(&rs, 5, Training::default(), current).expect("runs");
    let now = &got["current"];
    let threshold = now["settings"]["threshold"].as_f64().expect("threshold");
    assert!(
        (threshold - f64::from(current.threshold)).abs() < 1e-6,
        "{now}"
    );
    assert_eq!(now["overall"]["routed"], want.overall.routed);
    assert_eq!(now["overall"]["actions"], want.overall.actions);
    assert_eq!(now["overall"]["left_alone"], want.overall.left_alone);
    assert_eq!(now["overall"]["chat"], want.overall.chat);
    let folds = now["per_fold"].as_array().expect("per fold");
    assert_eq!(folds.len(), 5);
    for (f, w) in folds.iter().zip(&want.per_fold) {
        assert_eq!(f["routed"], w.routed);
        assert_eq!(f["left_alone"], w.left_alone);
    }
    // Every example is held out once.
    assert_eq!(
        got["examples"],
        want.overall.actions + want.overall.chat,
        "{got}"
    );
    // The best values route at least as many and leave at least as many chat messages alone.
    let best = &got["best"]["overall"];
    assert!(best["routed"].as_u64() >= now["overall"]["routed"].as_u64());
    assert!(best["left_alone"].as_u64() >= now["overall"]["left_alone"].as_u64());
    let yaml = got["yaml"].as_str().expect("yaml lines");
    assert!(
        yaml.starts_with("router:\n  embedded:\n    threshold: "),
        "{yaml}"
    );
}

/// A small pack with well-told-apart classes and a threshold far too high for them.
const PACK: &str = r#"
tools:
  - id: mode
    description: Режим.
    chip: Режим
    arguments: {type: object, properties: {mode: {type: string, enum: [none]}}, required: [mode], additionalProperties: false}
    examples: [выйди из режима, хватит режима, вернись в обычный режим, выключи режим]
  - id: weather
    description: Погода.
    chip: Погода
    arguments: {type: object, properties: {q: {type: string}}, required: [q], additionalProperties: false}
    examples: [какая погода завтра, погода в москве, будет ли дождь, прогноз погоды на выходные,
               погода на неделю, холодно ли завтра, нужен ли зонт сегодня, погода в питере]
  - id: alarm
    description: Будильник.
    chip: Будильник
    arguments: {type: object, properties: {q: {type: string}}, required: [q], additionalProperties: false}
    examples: [поставь будильник на семь, разбуди меня в шесть, будильник на утро, заведи будильник,
               будильник через час, разбуди меня завтра рано, поставь будильник на восемь, отмени будильник]
  - id: note
    description: Заметка.
    chip: Заметка
    arguments: {type: object, properties: {q: {type: string}}, required: [q], additionalProperties: false}
    examples: [запиши заметку, сделай заметку про встречу, запиши в заметки, новая заметка,
               заметка о покупках, добавь заметку, запиши мысль в заметки, заметку про отпуск]
router:
  skill_tool: mode
  skill_argument: mode
  leave_skill_value: none
  embedded:
    threshold: 0.9
    margin: 0.05
    chat_examples: [привет, спасибо большое, как дела, спокойной ночи, ты смешной, ну ладно,
                    привет как дела, спасибо тебе, доброе утро, пока]
"#;

#[test]
fn a_threshold_set_too_high_is_calibrated_down() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("rules.yaml"), PACK).expect("write");
    let got = calibrate_json(dir.path());
    let now = &got["current"];
    let best = &got["best"];
    let th = |o: &Value| o["settings"]["threshold"].as_f64().expect("threshold");
    assert!((th(now) - 0.9).abs() < 1e-6, "{got}");
    assert!(th(best) < th(now), "{got}");
    assert!(
        best["overall"]["routed"].as_u64() > now["overall"]["routed"].as_u64(),
        "{got}"
    );
    assert!(
        best["overall"]["left_alone"].as_u64() >= now["overall"]["left_alone"].as_u64(),
        "{got}"
    );
    let yaml = got["yaml"].as_str().expect("yaml");
    assert!(
        yaml.contains(&format!("threshold: {}", best["settings"]["threshold"])),
        "{yaml}"
    );
}

#[test]
fn calibrate_refuses_one_fold() {
    let out = Command::new(bin())
        .args(["calibrate", "--folds", "1", "--rules"])
        .arg(root().join("rules"))
        .output()
        .expect("turnout runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--folds must be at least 2"), "{err}");
}

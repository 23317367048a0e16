//! The CI recipe of `examples/ci/` in the repository it is for: one that holds only rules. A
//! temporary git repository gets the shipped rules, a corpus and `schemas/` as the recipe's
//! README says; a pull request branch edits a phrase; then the workflow's own `run:` scripts
//! run, with the turnout under test on PATH in place of the installed release.
use crate::common::root;

use crate::common::{copy_dir, turnout_on_path};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workflow(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("examples/ci").join(name)).expect("workflow");
    serde_yaml::from_str(&text).expect("valid YAML")
}

fn steps(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    doc["jobs"]
        .as_object()
        .expect("jobs")
        .values()
        .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn sh(dir: &Path, script: &str, env: &[(&str, String)]) -> std::process::Output {
    let out = Command::new("bash")
        .args(["-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{script}\nfailed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The schema a modeline names, resolved from the file's folder as yaml-language-server does.
fn modeline_schema(file: &Path) -> PathBuf {
    let text = std::fs::read_to_string(file).expect("rule file");
    let first = text.lines().next().unwrap_or_default();
    let rel = first
        .strip_prefix("# yaml-language-server: $schema=")
        .unwrap_or_else(|| panic!("{} has no modeline: {first}", file.display()));
    file.parent().expect("folder").join(rel.trim())
}

#[test]
fn the_ci_recipe_works_in_a_repository_that_holds_only_rules() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let origin = tmp.path().join("origin");
    copy_dir(&root().join("rules"), &origin.join("rules"));
    std::fs::create_dir_all(origin.join("corpus")).expect("mkdir");
    std::fs::copy(
        root().join("examples/corpus/requests.jsonl"),
        origin.join("corpus/requests.jsonl"),
    )
    .expect("corpus");
    let (_, path) = turnout_on_path(tmp.path());
    let git = [
        ("PATH", path.clone()),
        ("GIT_AUTHOR_NAME", "pm".to_owned()),
        ("GIT_AUTHOR_EMAIL", "pm@example.org".to_owned()),
        ("GIT_COMMITTER_NAME", "pm".to_owned()),
        ("GIT_COMMITTER_EMAIL", "pm@example.org".to_owned()),
    ];
    // The set-up of examples/ci/README.md: the schema written into the repository.
    sh(
        &origin,
        "git init -q -b main && turnout schema --write schemas && git add -A && git commit -qm rules",
        &git,
    );
    for file in ["rules/words.yaml", "rules/tests/search.yaml"] {
        let schema_path = modeline_schema(&origin.join(file));
        assert!(
            schema_path.exists(),
            "{file}: the modeline's {} is missing",
            schema_path.display()
        );
        // The editor's load: the schema is JSON Schema, and the file is valid against it.
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&schema_path).expect("schema"))
                .expect("JSON");
        let validator = jsonschema::validator_for(&schema).expect("a usable schema");
        let value: serde_json::Value =
            serde_yaml::from_str(&std::fs::read_to_string(origin.join(file)).expect("file"))
                .expect("YAML");
        assert!(
            validator.is_valid(&value),
            "{file} against {}",
            schema_path.display()
        );
    }

    // The pull request: a clone (so that origin/main exists, as after actions/checkout) with
    // one more search phrase.
    let work = tmp.path().join("work");
    sh(tmp.path(), "git clone -q origin work", &git);
    let words = work.join("rules/words.yaml");
    let text = std::fs::read_to_string(&words).expect("words");
    let at = text
        .find("  - id: search_patterns")
        .expect("search_patterns");
    let list = &text[at..];
    let w = at + list.find("    words:\n").expect("words:") + "    words:\n".len();
    let edited = format!("{}      - во что обойдется\n{}", &text[..w], &text[w..]);
    std::fs::write(&words, edited).expect("write");
    std::fs::write(
        work.join("corpus/requests.jsonl"),
        std::fs::read_to_string(work.join("corpus/requests.jsonl")).expect("corpus")
            + "{\"id\": \"pr\", \"request\": {\"messages\": [{\"role\": \"user\", \"content\": \"во что обойдётся билет до Казани\"}]}, \"model\": {\"calls\": []}}\n",
    )
    .expect("corpus");
    sh(&work, "git commit -qam 'a phrase'", &git);

    let doc = workflow("rules.yml");
    let runner = tmp.path().join("runner");
    std::fs::create_dir_all(&runner).expect("mkdir");
    let output = runner.join("output");
    let env = [
        ("PATH", path.clone()),
        ("RUNNER_TEMP", runner.display().to_string()),
        ("GITHUB_OUTPUT", output.display().to_string()),
        ("BASE_REF", "main".to_owned()),
        ("PR_NUMBER", "7".to_owned()),
        ("TURNOUT_VERSION", "v0.2.0".to_owned()),
    ];
    let mut ran = Vec::new();
    for step in steps(&doc) {
        let Some(run) = step["run"].as_str() else {
            continue;
        };
        if run.contains("cargo install") {
            continue; // the turnout under test stands in for the pinned release
        }
        assert!(
            !run.contains("${{"),
            "expressions go through env:, not into scripts: {run}"
        );
        sh(&work, run, &env);
        ran.push(step["name"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(ran.len(), 3, "schema, lint, replay: {ran:?}");
    let body = std::fs::read_to_string(work.join("comment/body.md")).expect("the comment");
    assert!(body.starts_with("<!-- turnout-replay -->"), "{body}");
    assert!(body.contains("This edit changes 1 decisions"), "{body}");
    assert_eq!(
        std::fs::read_to_string(work.join("comment/pr"))
            .expect("pr")
            .trim(),
        "7"
    );
    let outputs = std::fs::read_to_string(&output).expect("outputs");
    assert!(outputs.contains("changed=1"), "{outputs}");

    // The replay is posted whatever lint said, and never runs the fork's files with a token.
    let replay = steps(&doc)
        .into_iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("turnout replay"))
        })
        .expect("the replay step");
    assert!(
        replay["if"]
            .as_str()
            .is_some_and(|c| c.starts_with("always()")),
        "{replay}"
    );
    let comment = workflow("comment.yml");
    assert!(comment["on"]["workflow_run"].is_object(), "{comment}");
    let post = steps(&comment)
        .into_iter()
        .filter_map(|s| s["run"].as_str().map(str::to_owned))
        .collect::<String>();
    assert!(
        post.contains("PATCH") && post.contains("<!-- turnout-replay -->"),
        "{post}"
    );
    assert!(!steps(&comment).iter().any(|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/checkout"))
    }));

    // The version it installs has its section in the changelog.
    let version = doc["env"]["TURNOUT_VERSION"]
        .as_str()
        .expect("TURNOUT_VERSION");
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).expect("CHANGELOG");
    assert!(
        changelog.contains(&format!("## {}", version.trim_start_matches('v'))),
        "CHANGELOG.md has no section for {version}"
    );
}

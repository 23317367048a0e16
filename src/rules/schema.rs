//! The JSON Schemas of rule files, rule test files and model scripts, generated from the serde
//! types beside this module (schemars, draft 2020-12, properties in declaration order) and
//! committed under `schemas/` so editors can offer completion and tooltips; the test
//! `committed_schemas_are_current` keeps the committed copies in step with the types.

use std::path::Path;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The committed rule file schema, under `schemas/`.
pub const RULES_SCHEMA_FILE: &str = "rules.schema.json";
/// The committed rule test file schema, under `schemas/`.
pub const TESTS_SCHEMA_FILE: &str = "tests.schema.json";

/// JSON Schema of rule files, generated from [`super::RuleFile`] (draft 2020-12).
pub fn rules_schema() -> Value {
    generate::<super::RuleFile>("urn:turnout:schema:rules")
}

/// JSON Schema of rule test files, generated from [`super::testcase::TestFile`].
pub fn tests_schema() -> Value {
    generate::<super::testcase::TestFile>("urn:turnout:schema:tests")
}

pub(crate) fn generate<T: JsonSchema>(id: &str) -> Value {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.insert("$id".into(), Value::String(id.into()));
    }
    value
}

/// A schema as committed: pretty-printed JSON with a trailing newline.
pub fn schema_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes both schemas into `dir` (normally the crate's `schemas/`); returns the files written.
pub fn write_schemas(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (file, schema) in [
        (RULES_SCHEMA_FILE, rules_schema()),
        (TESTS_SCHEMA_FILE, tests_schema()),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, schema_text(&schema))?;
        written.push(path);
    }
    Ok(written)
}

/// JSON Schema of router model scripts (`script:FILE`: a test case's `model:` section).
pub fn script_schema() -> Value {
    generate::<super::testcase::ModelScript>("urn:turnout:schema:script")
}

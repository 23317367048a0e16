//! Words for schema findings: how a value, a type or a place in the schema reads to a person.

use serde_json::Value;

/// The pointer without its last segment.
pub(super) fn parent(pointer: &str) -> String {
    pointer
        .rfind('/')
        .map_or_else(String::new, |i| pointer[..i].to_owned())
}

/// The last segment of an instance pointer when it is a mapping key (not a list index).
pub(super) fn last_key(inst: &str) -> Option<String> {
    let last = inst.rsplit('/').next()?;
    if inst.is_empty() || last.parse::<usize>().is_ok() {
        return None;
    }
    Some(last.replace("~1", "/").replace("~0", "~"))
}

/// The type name of a schema node that is a definition: `/$defs/Guard` → `Guard`.
pub(super) fn def_name(pointer: &str) -> Option<String> {
    let name = pointer.strip_prefix("/$defs/")?;
    (!name.is_empty() && !name.contains('/')).then(|| name.replace("~1", "/").replace("~0", "~"))
}

/// `PreRule` → `pre-rule`, `GenerationMode` → `generation mode`.
pub(super) fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out.replacen("pre ", "pre-", 1)
}

/// A scalar for messages: strings bare, others as JSON.
pub(super) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A string in double quotes, shortened when long.
pub(super) fn quote(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() > MAX {
        let cut: String = s.chars().take(MAX).collect();
        format!("{:?}", cut + "…")
    } else {
        format!("{s:?}")
    }
}

/// What a value is, for "found ...".
pub(super) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "nothing (the value is empty)".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", quote(s)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping (key: value pairs)".to_owned(),
    }
}

/// "a number", "a string or a list", from JSON Schema type names.
pub(super) fn expected_types(types: &[String], found: &Value) -> String {
    let mut names: Vec<&str> = Vec::new();
    let only_null = types.iter().all(|t| t == "null");
    for t in types {
        let name = match t.as_str() {
            "null" if !only_null => continue,
            "null" => "nothing",
            // "a whole number" only helps when a number was given.
            "integer" if found.is_number() => "a whole number",
            "integer" | "number" => "a number",
            "string" => "a string",
            "boolean" => "true or false",
            "array" => "a list",
            "object" => "a mapping (key: value pairs)",
            _ => continue,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.len() > 1 {
        for name in &mut names {
            if *name == "true or false" {
                *name = "true/false";
            }
        }
    }
    match names.as_slice() {
        [] => "something else".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A concrete fix for common type mistakes.
pub(super) fn type_hint(types: &[String], found: &Value) -> Option<String> {
    let wants = |t: &str| types.iter().any(|x| x == t);
    match found {
        Value::String(s)
            if (wants("integer") || wants("number")) && s.trim().parse::<f64>().is_ok() =>
        {
            Some(format!("remove the quotes: write {}", s.trim()))
        }
        Value::String(s)
            if wants("boolean")
                && matches!(s.to_lowercase().as_str(), "true" | "false" | "yes" | "no") =>
        {
            Some("write true or false, without quotes".to_owned())
        }
        Value::Number(_) | Value::Bool(_) if wants("string") => {
            Some(format!("put it in quotes to make it a string: \"{found}\""))
        }
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Object(_)
            if wants("array") =>
        {
            Some("write a list: [first, second], or one '- item' per line".to_owned())
        }
        Value::Null if wants("object") || wants("array") || wants("string") => {
            Some("nothing is written after the ':'; write the value, or remove the key".to_owned())
        }
        _ => None,
    }
}

/// The candidate closest to `word` when it is close enough to be a likely typo (edit distance
/// ≤ 2, and less than the candidate's length).
/// An id pattern of the schema (`^[a-z][a-z0-9_-]*$`) in words a person reads, or `None` for a
/// pattern of another shape (which is then shown as it is).
pub(super) fn pattern_in_words(pattern: &str) -> Option<String> {
    let rest = pattern.strip_prefix("^[a-z][")?.strip_suffix("]*$")?;
    let mut kinds = vec!["lower-case Latin letters"];
    let mut rest = rest.strip_prefix("a-z")?;
    if let Some(r) = rest.strip_prefix("0-9") {
        kinds.push("digits");
        rest = r;
    }
    let mut marks = Vec::new();
    for c in rest.chars() {
        match c {
            '_' => marks.push("'_'"),
            '-' => marks.push("'-'"),
            _ => return None,
        }
    }
    kinds.extend(marks);
    let last = kinds.pop()?;
    let list = if kinds.is_empty() {
        last.to_owned()
    } else {
        format!("{} and {last}", kinds.join(", "))
    };
    Some(format!(
        "{list}, starting with a letter (no capitals or spaces)"
    ))
}

pub(super) fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let word = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&word, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= 2 && *d < c.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The tag of a `{type: object, required: [tag], properties: {tag: ..}}` alternative.
pub(super) fn keyed_tag(alt: &Value) -> Option<String> {
    if alt.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    match alt.get("required").and_then(Value::as_array)?.as_slice() {
        [Value::String(tag)] => Some(tag.clone()),
        _ => None,
    }
}

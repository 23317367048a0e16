//! Diagnostics: what the loader and compiler say about rule files. One type shared by `lint`,
//! `test`, reload logs and the service's status, so a problem reads the same everywhere.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Information about the check itself (e.g. checks skipped because a file failed).
    Note,
    /// Worth fixing; the rules still load.
    Warning,
    /// The rules cannot be used.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A place in a rule file. Lines and columns count from 1; columns count characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file.
    pub file: PathBuf,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
    /// The column just past the end of what is meant, on the same line, when known (a point,
    /// such as where a syntax error was found, has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<usize>,
    /// The text of that line, for a reader that cannot open the file (the service's
    /// `/v1/rules` quotes it, so the playground can show it with a caret); `None` elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Location {
    /// A point in a file.
    pub fn new(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Self {
            file: file.into(),
            line,
            column,
            end_column: None,
            source: None,
        }
    }

    /// The same place, spanning to `end_column` (past the end) on its line.
    pub fn until(mut self, end_column: usize) -> Self {
        self.end_column = (end_column > self.column).then_some(end_column);
        self
    }
}

/// One finding about the rule files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// A stable code, e.g. `unknown-tool`.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, for a product manager.
    pub message: String,
    /// Where, when it can be pointed at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// The rule the finding is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// A suggestion, e.g. "did you mean 'search_web'?".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Diagnostic {
    /// An error.
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            message: message.into(),
            location: None,
            rule: None,
            hint: None,
        }
    }

    /// A warning.
    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, message)
        }
    }

    /// A note: says something about the checks, not about a rule.
    pub fn note(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Note,
            ..Self::error(code, message)
        }
    }

    /// Attaches a location.
    pub fn at(mut self, location: Option<Location>) -> Self {
        self.location = location;
        self
    }

    /// Attaches the rule id.
    pub fn rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = Some(rule.into());
        self
    }

    /// Attaches a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Whether this finding makes the rules unusable.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// `file:line:column: severity[code]: message`, the form editors and CI logs understand.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(loc) = &self.location {
            write!(f, "{}:{}:{}: ", loc.file.display(), loc.line, loc.column)?;
        }
        write!(f, "{}[{}]: {}", self.severity, self.code, self.message)?;
        if let Some(rule) = &self.rule {
            write!(f, " (rule '{rule}')")?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

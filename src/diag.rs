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

/// Defines [`Code`]: each variant with its text, written once.
macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $text:literal, )*) => {
        /// A finding's stable code: what `lint` prints (`error[unknown-tool]`), what JSON and
        /// GitHub output carry, and what `docs/lint.md`'s table lists (a test holds the two
        /// to each other).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Code {
            /// Every code.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code as written, e.g. `unknown-tool`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    /// The rules directory cannot be used at all (missing, not a directory).
    Unusable = "unusable",
    /// A rule file cannot be read (permissions, a pipe, a directory named `x.yaml`).
    Unreadable = "unreadable",
    /// A link that leads out of the rules directory; never opened.
    OutsideRulesDir = "outside-rules-dir",
    /// A rule file over `--max-rule-file-bytes`, refused before it is read.
    TooLarge = "too-large",
    /// Lists and mappings nested past `--max-rule-depth`.
    TooDeep = "too-deep",
    /// A second YAML document in one file.
    MultipleDocuments = "multiple-documents",
    /// A YAML merge key (`<<:`).
    MergeKey = "merge-key",
    /// A YAML tag (`!!python/object`).
    YamlTag = "yaml-tag",
    /// A file that is not UTF-8 text.
    NotText = "not-text",
    /// A YAML syntax error, explained from the text around it.
    YamlSyntax = "yaml-syntax",
    /// A rule file holding only comments.
    EmptyFile = "empty-file",
    /// A key the format does not know (with "did you mean").
    UnknownKey = "unknown-key",
    /// A required key is missing.
    MissingKey = "missing-key",
    /// A value of the wrong type (a list where one value goes, `15.0` for a whole number).
    WrongType = "wrong-type",
    /// Any other schema rule broken (an id's form, a number's range).
    Schema = "schema",
    /// The file passed the schema but not the reader: a bug to report.
    Invalid = "invalid",
    /// One id defined twice.
    DuplicateId = "duplicate-id",
    /// A section (`router:`, `matching:`) written in two files.
    DuplicateSection = "duplicate-section",
    /// No file has a `router:` section.
    MissingRouter = "missing-router",
    /// A tool id that no tool has.
    UnknownTool = "unknown-tool",
    /// A test case's call says `unknown: true` but names a tool the rules define.
    KnownTool = "known-tool",
    /// A skill id that no skill has.
    UnknownSkill = "unknown-skill",
    /// A word list id that no list has.
    UnknownList = "unknown-list",
    /// A word list `negated_by` itself.
    SelfNegation = "self-negation",
    /// A test case names a rule that does not exist.
    UnknownRule = "unknown-rule",
    /// A value outside its set (`generation_mode: smell`).
    UnknownValue = "unknown-value",
    /// An integration that is not declared.
    UnknownIntegration = "unknown-integration",
    /// A word-list entry that cannot be read (`$`, `*`, `…`, `&` in the wrong place).
    BadWord = "bad-word",
    /// A regular expression that does not compile, or is too long or too big.
    BadRegex = "bad-regex",
    /// A regular expression that matches the empty string, so every message.
    MatchesEmpty = "matches-empty",
    /// A word list with neither words nor patterns.
    EmptyList = "empty-list",
    /// `any: []` or `all: []`.
    EmptyCondition = "empty-condition",
    /// A fold that is not one character for one.
    BadFold = "bad-fold",
    /// A tool's argument schema that is not a valid JSON Schema.
    BadArgumentSchema = "bad-argument-schema",
    /// A pre-rule argument `"{extract}"` for a tool with no `extract` for it.
    NoExtract = "no-extract",
    /// An `extract` for an argument the tool does not have.
    ExtractUnknownArgument = "extract-unknown-argument",
    /// An `extract` value the argument's schema refuses.
    ExtractBadValue = "extract-bad-value",
    /// A `number` pattern without a `(?P<number>…)` group.
    ExtractNumberGroup = "extract-number-group",
    /// An `extract` (or a `choose` option) that says nothing.
    ExtractEmpty = "extract-empty",
    /// An embedded router context rule that changes nothing.
    ContextNoEffect = "context-no-effect",
    /// A router model spec that cannot be used.
    BadModel = "bad-model",
    /// A router model whose key or service is not available.
    ModelUnavailable = "model-unavailable",
    /// A condition about a call outside a guard.
    CallConditionOutsideGuard = "call-condition-outside-guard",
    /// A skill's `auto` and the router's skill tool's enum disagree.
    SkillEnum = "skill-enum",
    /// A consequential tool without `confirm: true`.
    UnconfirmedConsequential = "unconfirmed-consequential",
    /// A tool of an integration that is offered without it.
    UngatedIntegrationTool = "ungated-integration-tool",
    /// A word list's pattern cannot be built into the one-pass scanner (too large).
    ListTooLarge = "list-too-large",
    /// The same entry twice in a list.
    DuplicateEntry = "duplicate-entry",
    /// An entry another entry of the list already matches.
    RedundantEntry = "redundant-entry",
    /// A stem that, matched as a word in its forms, no longer matches what the cases wrote.
    NarrowedEntry = "narrowed-entry",
    /// An entry word that the normaliser reads as another word in every message.
    RespelledEntry = "respelled-entry",
    /// `typos: false` together with `typos_from`.
    TyposConflict = "typos-conflict",
    /// `typos: true` with no length from which words tolerate a typo.
    TyposWithoutLength = "typos-without-length",
    /// A word list no condition mentions.
    UnusedList = "unused-list",
    /// A pre-rule that an earlier one with the same condition always takes first.
    ShadowedRule = "shadowed-rule",
    /// A condition that can never hold.
    NeverFires = "never-fires",
    /// A tool whose `available_when` can never hold.
    NeverOffered = "never-offered",
    /// A guard on a tool that never reaches the guards as a call.
    UnreachableGuard = "unreachable-guard",
    /// A required argument the embedded router cannot fill.
    EmbeddedCannotFill = "embedded-cannot-fill",
    /// A tool without examples where the others have them: the embedded router never picks it.
    EmbeddedNoExamples = "embedded-no-examples",
    /// A test case that did not get what it expects.
    TestFailed = "test-failed",
    /// Test coverage below `--min-coverage`.
    MinCoverage = "min-coverage",
    /// Checks across files were skipped because a file did not load.
    SkippedChecks = "skipped-checks",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
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
    pub code: Code,
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
    pub fn error(code: Code, message: impl Into<String>) -> Self {
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
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, message)
        }
    }

    /// A note: says something about the checks, not about a rule.
    pub fn note(code: Code, message: impl Into<String>) -> Self {
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

//! Where every pass puts what it finds: one list, handed to each pass as `&mut Findings`, so a
//! pass's signature says that it reports, and no pass reads another's findings.

use crate::diag::{Code, Diagnostic};
use crate::source::SourceFile;

/// The findings of the passes, in the order they were found.
#[derive(Debug, Default)]
pub(super) struct Findings(Vec<Diagnostic>);

/// How many findings there were at some point (see [`Findings::error_since`]).
#[derive(Clone, Copy)]
pub(super) struct Mark(usize);

impl Findings {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn extend(&mut self, found: impl IntoIterator<Item = Diagnostic>) {
        self.0.extend(found);
    }

    /// An error at `pointer` of `file`.
    pub fn error(&mut self, code: Code, message: String, file: &SourceFile, pointer: &str) {
        self.push(Diagnostic::error(code, message).at(Some(file.locate(pointer))));
    }

    /// The one file that writes the section `name` (found by `section`) and the section, or
    /// `None` when no file does; each further file that writes it is a `duplicate-section`
    /// error at its key.
    pub fn single_section<'f, T>(
        &mut self,
        files: &'f [(SourceFile, crate::rules::RuleFile)],
        name: &str,
        section: impl Fn(&'f crate::rules::RuleFile) -> Option<&'f T>,
    ) -> Option<(&'f SourceFile, &'f T)> {
        let mut found = files
            .iter()
            .filter_map(|(f, rf)| section(rf).map(|s| (f, s)));
        let first = found.next()?;
        for (again, _) in found {
            let d = Diagnostic::error(
                Code::DuplicateSection,
                format!("'{name}' is already defined in {}", first.0.path.display()),
            )
            .at(Some(again.locate_key(&format!("/{name}"))))
            .hint(format!(
                "a rules directory has one '{name}' section; merge the two"
            ));
            self.push(d);
        }
        Some(first)
    }

    /// A warning at `pointer` of `file`.
    pub fn warn(&mut self, code: Code, message: String, file: &SourceFile, pointer: &str) {
        self.push(Diagnostic::warning(code, message).at(Some(file.locate(pointer))));
    }

    pub fn mark(&self) -> Mark {
        Mark(self.0.len())
    }

    /// Whether an error was found after `mark` was taken.
    pub fn error_since(&self, mark: Mark) -> bool {
        self.0[mark.0..].iter().any(Diagnostic::is_error)
    }

    pub fn has_error(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// Every finding, by file, line and column (those of one place in the order found;
    /// findings without a place first).
    pub fn into_sorted(mut self) -> Vec<Diagnostic> {
        self.0.sort_by_key(|d| {
            d.location
                .as_ref()
                .map(|l| (l.file.clone(), l.line, l.column))
        });
        self.0
    }
}

/// A pattern's finding: the reason first, then the start of the pattern (a long pattern quoted
/// whole first pushed its reason off the end of a terminal line).
pub(crate) fn pattern_error(pattern: &str, reason: impl std::fmt::Display) -> String {
    const SHOWN: usize = 60;
    match pattern.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{reason} (pattern '{}…')", &pattern[..cut]),
        None => format!("{reason} (pattern '{pattern}')"),
    }
}

/// Finds the closest known id, for "did you mean …?" hints.
pub(crate) fn did_you_mean<'k>(
    wrong: &str,
    known: impl IntoIterator<Item = &'k String>,
) -> Option<String> {
    known
        .into_iter()
        .map(|k| (strsim::levenshtein(wrong, k), k))
        .filter(|(d, k)| *d <= 3.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| format!("did you mean '{k}'?"))
}

#[cfg(test)]
mod tests {
    use super::pattern_error;

    #[test]
    fn a_patterns_reason_comes_before_its_start() {
        let long = "a|".repeat(600);
        let m = pattern_error(
            &long,
            "the pattern is 1200 characters long; the limit is 1000",
        );
        assert!(m.starts_with("the pattern is 1200 characters long"), "{m}");
        assert!(m.ends_with("…')"), "{m}");
        assert!(m.chars().count() < 140, "{m}");
        assert_eq!(pattern_error("a(", "bad"), "bad (pattern 'a(')");
    }
}

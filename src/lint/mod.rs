//! `turnout lint`: everything CI should know about a rules directory before an edit ships.
//!
//! 1. [`compile::load_dir`], the very function the service's reload calls: schema validation,
//!    then the compiler's checks (unknown ids, bad regexes, skill enum, consequential tools,
//!    integration gating, …). Its errors are the errors that would make a reload refuse the rules.
//! 2. Whole-model meaning checks on the compiled ruleset (`checks`): rules that can never
//!    fire, guards on tools that never reach the guards. Warnings: the service would load them.
//! 3. The directory's test cases (`DIR/tests/*.yaml`), run through the real pipeline; each
//!    failing case is a `test-failed` error at the case.
//! 4. Coverage ([`coverage`]): which rules and word-list entries no case exercised, and
//!    `min-coverage` when the figure is below the requested minimum; and, with declared word
//!    endings, the entries the cases show narrowed to nothing (`narrowed-entry`, [`forms`]).
//!
//! Findings are [`Diagnostic`]s, printed by [`crate::report`] like every other finding.

mod checks;
pub mod coverage;
mod embedded;
mod forms;
mod logic;
mod shadow;

use std::path::{Path, PathBuf};

use crate::compile::{self, Loaded};
use crate::contract::Stage;
use crate::diag::{Code, Diagnostic, Severity};
use crate::testing::{self, CaseResult};
use coverage::Coverage;

/// What to check besides the rules themselves.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Fail (`min-coverage`) when test coverage is below this percentage.
    pub min_coverage: Option<f64>,
    /// The limits rule files are read within (the service's `--max-rule-*` flags).
    pub limits: crate::source::Limits,
}

/// Test case counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestCounts {
    /// Cases whose decision matched the expectation.
    pub passed: usize,
    /// Cases that did not.
    pub failed: usize,
}

/// Everything `lint` found in one directory.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// The rules directory.
    pub dir: PathBuf,
    /// Findings about the rule files (sorted by place), then about the test files.
    pub diagnostics: Vec<Diagnostic>,
    /// The directory could not be used at all (missing, unreadable file): exit status 2.
    pub unusable: bool,
    /// Test case counts; `None` when the cases were not run because the rules have errors.
    pub tests: Option<TestCounts>,
    /// What the cases exercised; `None` when they were not run.
    pub coverage: Option<Coverage>,
    /// The rule files' and test files' texts as read: what the findings point into
    /// ([`crate::report::Sources::of`] prints their source lines from these).
    pub texts: Vec<(PathBuf, String)>,
}

impl Report {
    /// How many findings are errors.
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    /// How many findings are warnings.
    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, s: Severity) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == s).count()
    }

    /// The exit status the contract gives this report: 2 unusable input, 1 findings (errors;
    /// warnings too when `deny_warnings`), 0 clean.
    pub fn exit_status(&self, deny_warnings: bool) -> u8 {
        if self.unusable {
            2
        } else if self.errors() > 0 || (deny_warnings && self.warnings() > 0) {
            1
        } else {
            0
        }
    }

    /// `rules: 0 errors, 1 warning; 137 test cases passed, 0 failed; coverage 61.2% (…)`.
    pub fn summary(&self) -> String {
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let mut out = format!(
            "{}: {}, {}",
            self.dir.display(),
            plural(self.errors(), "error"),
            plural(self.warnings(), "warning")
        );
        match self.tests {
            Some(TestCounts {
                passed: 0,
                failed: 0,
            }) => out.push_str(&format!(
                "; no test cases (write them in {})",
                self.dir.join("tests").display()
            )),
            Some(t) => out.push_str(&format!(
                "; {} passed, {} failed",
                plural(t.passed, "test case"),
                t.failed
            )),
            None if !self.unusable => out.push_str("; test cases not run: the rules have errors"),
            None => {}
        }
        if let Some(c) = &self.coverage {
            out.push_str("; ");
            out.push_str(&c.summary());
        }
        out
    }
}

/// Lints one rules directory: loads it as the service does, checks it, runs its test cases and
/// measures their coverage.
pub async fn lint_dir(dir: &Path, options: &Options) -> Report {
    let Loaded {
        ruleset,
        diagnostics,
        unusable,
        texts,
    } = compile::load_dir_with(dir, &options.limits);
    let mut report = Report {
        dir: dir.to_path_buf(),
        diagnostics,
        unusable,
        tests: None,
        coverage: None,
        texts,
    };
    let Some(rs) = ruleset else {
        return report;
    };
    report.diagnostics.extend(checks::check(&rs));
    report.diagnostics.extend(forms::respelled(&rs));
    report.diagnostics.extend(forms::respelled_patterns(&rs));
    report.diagnostics.extend(model_check(&rs));
    sort_by_place(&mut report.diagnostics);

    let files = testing::test_files(dir);
    let testing::Cases {
        cases,
        diagnostics: mut test_findings,
        not_run,
        texts,
    } = testing::load_cases(&rs, &files);
    report.texts.extend(texts);
    test_findings.extend(forms::narrowed(&rs, &cases));
    let mut coverage = Coverage::new(&rs);
    let results = coverage::run_cases(&rs, &cases, &mut coverage).await;
    let failed: Vec<&CaseResult> = results.iter().filter(|r| !r.passed()).collect();
    test_findings.extend(failed.iter().map(|r| case_failure(r)));
    sort_by_place(&mut test_findings);
    report.diagnostics.append(&mut test_findings);
    report.tests = Some(TestCounts {
        passed: results.len() - failed.len(),
        failed: failed.len() + not_run,
    });
    if let Some(min) = options.min_coverage
        && coverage.percent() < min
    {
        report.diagnostics.push(
            Diagnostic::error(
                Code::MinCoverage,
                format!(
                    "test coverage of {} is {:.1}%, below the required {min}%",
                    dir.display(),
                    coverage.percent()
                ),
            )
            .hint(format!(
                "{}; add test cases for what is listed as not exercised",
                coverage.summary()
            )),
        );
    }
    report.coverage = Some(coverage);
    report
}

/// What `turnout serve` (started without `--model`) would refuse about the rules' model in this
/// environment: a hosted API whose key is not set. A warning, since the key is a property of
/// where the service runs, not of the files.
fn model_check(rs: &crate::RuleSet) -> Option<Diagnostic> {
    let router = rs.router();
    let spec = router.model.as_ref()?;
    let e = spec.check(&crate::model::spec::KeySource::Env).err()?;
    Some(
        Diagnostic::warning(
            Code::ModelUnavailable,
            format!("router.model '{spec}': {e}; `turnout serve` refuses these rules where that is so (unless started with --model)"),
        )
        .at(router.model_at.clone())
        .hint("set the key in the service's environment (and here, to silence this), or give the service --model"),
    )
}

/// A failing test case as a finding at the case, with the trace as the hint.
pub fn case_failure(r: &CaseResult) -> Diagnostic {
    let mut d = Diagnostic::error(
        Code::TestFailed,
        format!("test case '{}' failed: {}", r.name, r.failures.join("; ")),
    )
    .at(Some(r.location.clone()));
    if let Some(decision) = &r.decision {
        let steps: Vec<String> = decision
            .trace
            .iter()
            .map(|s| {
                let rule = s
                    .rule
                    .as_deref()
                    .map(|r| format!(" [{r}]"))
                    .unwrap_or_default();
                format!("  {}{rule}: {} — {}", stage_name(s.stage), s.effect, s.why)
            })
            .collect();
        if !steps.is_empty() {
            d = d.hint(format!("trace:\n{}", steps.join("\n")));
        }
    }
    d
}

fn stage_name(s: Stage) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Orders findings by file, line and column; findings without a place come first. Stable, so
/// findings at one place keep the order they were found in.
fn sort_by_place(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            d.location
                .as_ref()
                .map(|l| (l.file.clone(), l.line, l.column))
        };
        key(a).cmp(&key(b))
    });
}

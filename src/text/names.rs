//! Open files' names as a person says them.

use super::endings::Endings;
use super::words::is_separator;

/// A file name without its extension (a final `.` and one to five letters or digits).
pub fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, ext))
            if !base.trim().is_empty()
                && (1..=5).contains(&ext.chars().count())
                && ext.chars().all(char::is_alphanumeric) =>
        {
            base
        }
        _ => name,
    }
}

/// A file's base name as the words a person would say: split at separators (`-`, `_`,
/// spaces) and at any other mark that is no letter or digit (`№118` → `118`, `v2.1` →
/// `v 2 1`: a message writes them or not, and its words are runs of letters or digits), where
/// letters meet digits (`Plan2025` → `Plan 2025`) and where a lower-case letter
/// meets a capital (`SalesPlan` → `Sales Plan`). Case is kept; normalise after.
pub fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        // Separators are marks too.
        if !super::is_alphanumeric(c) {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let boundary = (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic())
                || (p.is_lowercase() && c.is_uppercase());
            if boundary {
                out.push(' ');
            }
        }
        out.push(c);
        previous = Some(c);
    }
    out.trim_end().to_owned()
}

/// How a message's words stand for the words of a file's name: in their forms (`endings`,
/// the language's `matching.word_endings`), or, without a table, cut to stems of `cut` letters
/// fewer (`matching.file_name_endings`).
#[derive(Debug, Clone, Copy)]
pub struct NameForms<'e> {
    pub endings: Option<&'e Endings>,
    pub cut: usize,
}

/// The letters of a name's word from which one typo is forgiven ("budjet" for `Budget`).
const TYPO_FROM: usize = 6;

impl NameForms<'_> {
    /// Whether the message's word `m` is the name's word `w` (both normalised). Digits and words
    /// of two letters or fewer must be equal (and of three, without an endings table). With an
    /// endings table, `m` is `w` in one of its forms: a stem of `w` (`w`, or `w` without an
    /// ending of the table, of three letters or more) and an allowed ending ("acts" for `Act`,
    /// "plans", "budgets", not "budgetary"); a name's word of six letters or more may have one
    /// letter wrong, missing or swapped before the ending ("budjet"), never one more (which
    /// would read an adjective made from it, its stem and a suffix, as a typo of the noun).
    fn same(&self, m: &str, w: &str) -> bool {
        if m == w {
            return true;
        }
        // Most words of a message are not the name's: every form starts with the word's first
        // letters, and one typo leaves the first or the second in its place (or swaps them).
        let mut wc = w.chars();
        let mut mc = m.chars();
        let (w0, w1, m0, m1) = (wc.next(), wc.next(), mc.next(), mc.next());
        if !(m0 == w0 || (m1.is_some() && m1 == w1) || (m0.is_some() && m0 == w1)) {
            return false;
        }
        let letters = w.chars().count();
        let table = self.endings.filter(|e| !e.is_empty());
        if letters < 3
            || (letters == 3 && table.is_none())
            || !w
                .chars()
                .all(|c| super::is_alphanumeric(c) && !c.is_numeric())
        {
            return false;
        }
        let Some(endings) = table else {
            let keep = letters - self.cut.min(letters - 3);
            let stem: String = w.chars().take(keep).collect();
            return m.starts_with(&stem);
        };
        let stems = || {
            w.char_indices()
                .map(|(k, _)| k)
                .filter(move |&k| w[..k].chars().count() >= 3 && endings.allows(&w[k..]))
                .map(move |k| &w[..k])
                .chain(std::iter::once(w))
        };
        if stems().any(|s| m.strip_prefix(s).is_some_and(|rest| endings.allows(rest))) {
            return true;
        }
        if letters < TYPO_FROM {
            return false;
        }
        // One typo before an allowed ending: the part before it is the stem with one letter
        // wrong, missing or two swapped (as long as the stem, or one shorter).
        let cuts = m
            .char_indices()
            .map(|(k, _)| k)
            .chain(std::iter::once(m.len()))
            .filter(|&k| endings.allows(&m[k..]));
        cuts.into_iter().any(|k| {
            let p = &m[..k];
            stems().any(|s| {
                let (lp, ls) = (p.chars().count(), s.chars().count());
                ls >= TYPO_FROM - 1
                    && (lp == ls || lp + 1 == ls)
                    && super::fuzzy::edit_between(s, p).is_some()
            })
        })
    }
}

/// Finds an open file's name (its [`name_words`], normalised) in a message, word for word and
/// in order, each word in its forms ([`NameForms`]). The message's words are split the way
/// names are: at `_` ("in plan_2025" names `Plan_2025`) and where letters meet digits ("in
/// report_q3", "in report q3" name `Report_Q3`, whose words are "report", "q", "3"); one
/// word of the message may also be several of the name's glued ("salesreport" for the
/// `SalesReport` of a name, whose capitals the lower-cased message no longer shows).
///
/// A prefix of the name's words is enough when it has at least `lead_words` words (`None`:
/// never) and is either words of its lead (the words before the first with a digit or of one
/// or two letters) or ends with a number: people leave out a tail of codes — a version, a year,
/// a quarter — or of words after a number, so "in the sales report" names
/// `SalesReport_Q2_2025` and "in invoice 2291" names `Invoice_2291_Vector_Ltd`, unless another
/// code follows ("report q4" for `Report_Q3`). A caller that acts on the name alone asks for
/// two words ("meeting minutes" for `Meeting_minutes_12.03`, where one word, "report" for
/// `Report_Q3`, may mean another report); one that only checks a name given elsewhere (a
/// call's argument) takes one.
pub fn find_name(
    text: &str,
    name: &str,
    forms: NameForms<'_>,
    lead_words: Option<usize>,
) -> Option<(usize, usize)> {
    let wanted: Vec<&str> = name.split(is_separator).filter(|w| !w.is_empty()).collect();
    if wanted.is_empty() {
        return None;
    }
    let lead = wanted
        .iter()
        .take_while(|w| w.chars().count() > 2 && !w.chars().any(char::is_numeric))
        .count();
    let words = message_words(text);
    // A code after the lead (a number, or one or two letters and a number: "q4") that is not
    // the name's own names another file.
    let digits = |k: usize| {
        words
            .get(k)
            .is_some_and(|&(s, e)| text[s..e].bytes().all(|b| b.is_ascii_digit()))
    };
    let code_at = |k: usize| {
        digits(k)
            || (words
                .get(k)
                .is_some_and(|&(s, e)| text[s..e].chars().count() <= 2)
                && digits(k + 1))
    };
    let matched = |wanted: &[&str], no_code_after: bool| {
        (0..words.len()).find_map(|first| {
            let last = first + run_from(text, &words[first..], wanted, forms)?;
            (!(no_code_after && code_at(last + 1))).then(|| (words[first].0, words[last].1))
        })
    };
    let whole = matched(&wanted, false);
    let Some(need) = lead_words.map(|n| n.max(1)) else {
        return whole;
    };
    if whole.is_some() {
        return whole;
    }
    // Shorter prefixes, longest first: the lead, its first two words or more ("trip budget" for
    // `Trip_budget_Sochi_2025`; one word of a longer lead may be the start of another name), or
    // the lead and codes up to a number ("invoice 2291" for `Invoice_2291_Vector_Ltd`; a name
    // of codes alone is said whole).
    let number = |w: &str| w.chars().all(|c| c.is_ascii_digit());
    (need..wanted.len())
        .rev()
        .filter(|&n| {
            n == lead || (2..lead).contains(&n) || (lead > 0 && n > lead && number(wanted[n - 1]))
        })
        .find_map(|n| matched(&wanted[..n], true))
}

/// The message's words for names: runs of letters, or of digits (byte spans).
fn message_words(text: &str) -> Vec<(usize, usize)> {
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut start: Option<(usize, bool)> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let kind = super::is_alphanumeric(c).then(|| c.is_ascii_digit());
        match (start, kind) {
            (Some((s, digits)), Some(d)) if d != digits => {
                words.push((s, i));
                start = Some((i, d));
            }
            (Some(_), Some(_)) => {}
            (Some((s, _)), None) => {
                words.push((s, i));
                start = None;
            }
            (None, Some(d)) => start = Some((i, d)),
            (None, None) => {}
        }
    }
    words
}

/// Whether the message's `words` (from the first on) say all of `wanted` in order, each
/// message word one name word or several glued; the index of the last word used.
fn run_from(
    text: &str,
    words: &[(usize, usize)],
    wanted: &[&str],
    forms: NameForms<'_>,
) -> Option<usize> {
    let (&(s, e), rest) = words.split_first()?;
    let said = &text[s..e];
    let mut glued = String::new();
    for (k, w) in wanted.iter().enumerate() {
        glued.push_str(w);
        let one = if k == 0 { *w } else { glued.as_str() };
        // Glued words are letters only; the last of them takes the forms.
        if k > 0 && !(said.len() >= glued.len() && w.chars().all(char::is_alphabetic)) {
            break;
        }
        if forms.same(said, one) || (k == 0 && glued_after_short_word(said, one, forms)) {
            if k + 1 == wanted.len() {
                return Some(0);
            }
            if let Some(last) = run_from(text, rest, &wanted[k + 1..], forms) {
                return Some(last + 1);
            }
            // A preposition or a conjunction between two of the name's words ("plan of sales"
            // for `Plan_sales`, as people say a name's words with the grammar between them):
            // one word of one or two letters may stand between them.
            if let Some((&(fs, fe), after)) = rest.split_first()
                && text[fs..fe].chars().count() <= 2
                && text[fs..fe].chars().all(char::is_alphabetic)
                && let Some(last) = run_from(text, after, &wanted[k + 1..], forms)
            {
                return Some(last + 2);
            }
        }
    }
    None
}

/// Whether `said` is a word of one or two letters glued to the name's first word `w` (of four
/// letters or more) in one of its forms: a preposition typed without its space ("inplan" for
/// `Plan`), as the grammar between a name's words is allowed in [`run_from`].
fn glued_after_short_word(said: &str, w: &str, forms: NameForms<'_>) -> bool {
    if w.chars().count() < 4 || said.chars().count() <= w.chars().count() {
        return false;
    }
    said.char_indices()
        .skip(1)
        .take(2)
        .any(|(at, _)| said[..at].chars().all(char::is_alphabetic) && forms.same(&said[at..], w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Normalizer;

    #[test]
    fn a_file_name_splits_where_a_person_hears_words() {
        assert_eq!(name_words("Plan_2025"), "Plan 2025");
        assert_eq!(name_words("SalesPlan2025-v2"), "Sales Plan 2025 v 2");
        assert_eq!(name_words("budget  final"), "budget final");
        assert_eq!(name_words("CV"), "CV");
        // Marks that are no letter or digit part words, as a message's runs of letters do.
        assert_eq!(name_words("Invoice_№118"), "Invoice 118");
        assert_eq!(name_words("Spec_v2.1"), "Spec v 2 1");
    }

    #[test]
    fn a_lead_of_two_words_names_a_file_for_a_caller_that_asks_for_two() {
        let n = Normalizer::default();
        let minutes = n.normalize(&name_words("Meeting_minutes_12.03"));
        let report = n.normalize(&name_words("Report_Q3"));
        assert!(find_name("in meeting minutes fix", &minutes, prefixes(0), Some(2)).is_some());
        assert!(find_name("in the report fix", &report, prefixes(0), Some(2)).is_none());
        assert!(find_name("in the report fix", &report, prefixes(0), Some(1)).is_some());
        let invoice = n.normalize(&name_words("Invoice_№2291_Vector_Ltd"));
        assert!(find_name("in invoice 2291 fix", &invoice, prefixes(0), Some(2)).is_some());
        assert!(find_name("in invoice 2292 fix", &invoice, prefixes(0), Some(2)).is_none());
        let budget = n.normalize(&name_words("Trip_budget_Sochi_2025"));
        assert!(find_name("in trip budget fix", &budget, prefixes(0), Some(2)).is_some());
        assert!(find_name("in trip fix", &budget, prefixes(0), Some(2)).is_none());
        let spec = n.normalize(&name_words("Spec_v2.1"));
        assert!(find_name("in spec v2.1 fix", &spec, prefixes(0), None).is_some());
    }

    #[test]
    fn a_short_word_may_stand_between_two_words_of_a_name() {
        let n = Normalizer::default();
        let plan = n.normalize(&name_words("Plan_sales_2025"));
        let found = find_name("in the plan of sales 2025 fix", &plan, prefixes(0), None);
        assert_eq!(
            found,
            Some((7, 25)),
            "the span runs from the first word to the last"
        );
        assert!(find_name("plan of sales 2025", &plan, prefixes(0), Some(2)).is_some());
        // One short word only, not a longer one, and not two.
        assert!(find_name("plan for sales 2025", &plan, prefixes(0), None).is_none());
        assert!(find_name("plan of a sales 2025", &plan, prefixes(0), None).is_none());
        // Nor a number: "plan 24 sales" is no name.
        assert!(find_name("plan 24 sales 2025", &plan, prefixes(0), None).is_none());
    }

    #[test]
    fn a_short_word_may_be_glued_to_the_names_first_word() {
        let n = Normalizer::default();
        let plan = n.normalize(&name_words("Plan-2026"));
        // A preposition typed without its space: "inplan-2026", "toplan 2026".
        assert_eq!(
            find_name("inplan-2026 add a quote", &plan, prefixes(0), None),
            Some((0, 11))
        );
        assert!(find_name("aplan 2026", &plan, prefixes(0), None).is_some());
        // Not three letters, and not before a name word shorter than four letters.
        assert!(find_name("intoplan 2026", &plan, prefixes(0), None).is_none());
        let act = n.normalize(&name_words("Act_2026"));
        assert!(find_name("inact 2026", &act, prefixes(0), None).is_none());
    }

    fn prefixes(cut: usize) -> NameForms<'static> {
        NameForms { endings: None, cut }
    }

    #[test]
    fn an_underscore_in_the_message_separates_words_of_a_name() {
        let n = Normalizer::default();
        let name = n.normalize(&name_words("Plan_2025"));
        for message in ["in plan_2025 fix the total", "in plans 2025 fix the total"] {
            assert!(
                find_name(message, &name, prefixes(2), None).is_some(),
                "{message}"
            );
        }
        assert_eq!(
            find_name("in plan_2025 fix", &name, prefixes(2), None),
            Some((3, 12))
        );
        assert!(find_name("in planets 2024", &name, prefixes(2), None).is_none());
    }

    #[test]
    fn letters_next_to_digits_in_the_message_are_two_words_as_in_names() {
        let n = Normalizer::default();
        let name = n.normalize(&name_words("Report_Q3"));
        for message in ["add to report_q3 the totals", "add to report q3 the totals"] {
            assert!(
                find_name(message, &name, prefixes(2), None).is_some(),
                "{message}"
            );
        }
        // Offsets are the message's own.
        assert_eq!(
            find_name("to report_q3 now", &name, prefixes(2), None),
            Some((3, 12))
        );
        assert_eq!(
            find_name("to report q3", &name, prefixes(2), None),
            Some((3, 12))
        );
        // The code at the end may be left out when the lead is enough, but a different one is
        // another file.
        assert_eq!(
            find_name("to the report now", &name, prefixes(2), Some(1)),
            Some((7, 13))
        );
        assert!(find_name("to the report now", &name, prefixes(2), None).is_none());
        assert!(find_name("to report q4", &name, prefixes(2), Some(1)).is_none());
    }

    #[test]
    fn without_an_endings_table_a_name_word_loses_its_last_letters_down_to_three() {
        let named = |m: &str, name: &str| find_name(m, name, prefixes(2), None).is_some();
        assert!(named("in the budge 2024", "budgets 2024"));
        assert!(!named("in the budg 2024", "budgets 2024"));
        // Three letters or fewer, and digits, are the word itself.
        assert!(named("in tax 2024", "tax 2024"));
        assert!(!named("in taxes 2024", "tax 2024"));
        assert!(!named("in tax 202", "tax 2024"));
    }

    #[test]
    fn a_name_is_named_by_its_words_without_its_tail_of_codes() {
        let n = Normalizer::default();
        let name = n.normalize(&name_words("SalesReport_Q2_2025"));
        assert_eq!(name, "sales report q 2 2025");
        let named = |m: &str| find_name(m, &name, prefixes(0), Some(1)).is_some();
        assert!(named("in sales report fix june"));
        assert!(!named("in the report fix june"));
        assert!(!named("in sales report q3 fix june"));
        // Said whole, the words of a CamelCase name may be glued as the message writes them.
        let whole = |m: &str| find_name(m, &name, prefixes(0), None);
        assert_eq!(whole("in salesreport_q2_2025 fix"), Some((3, 22)));
        assert!(whole("in salesreport fix").is_none());
        // A name that is all codes must be said whole.
        let codes = n.normalize(&name_words("Q3_2025"));
        assert!(find_name("in q3 2025 fix", &codes, prefixes(0), Some(1)).is_some());
        assert!(find_name("in q3 fix", &codes, prefixes(0), Some(1)).is_none());
    }

    #[test]
    fn with_an_endings_table_a_name_word_is_matched_in_its_forms_and_one_typo() {
        let endings = Endings::new(["s", "es", "ed", "ing"].map(String::from));
        let forms = NameForms {
            endings: Some(&endings),
            cut: 2,
        };
        let named = |m: &str| find_name(m, "budget", forms, None).is_some();
        assert!(named("add rent to the budget"));
        assert!(named("add rent to the budgets"));
        // One letter wrong, missing or two swapped, in a word of six letters.
        assert!(named("add rent to the budjet"));
        assert!(named("add rent to the buget"));
        assert!(named("add rent to the budgte"));
        // Another word made from it is not the name, nor is the stem with a letter too many.
        assert!(!named("a budgetary plan"));
        assert!(!named("the budgett"));
        assert!(!named("a budgie"));
        // Short words and digits are equal or nothing.
        assert!(find_name("plan for 2025", "plan 2025", forms, None).is_none());
        assert!(find_name("plan 2025", "plan 2025", forms, None).is_some());
        assert!(find_name("plans 2026", "plan 2025", forms, None).is_none());
        // A word of three letters is matched in its forms too, with no typo.
        assert!(find_name("in the acts 17", "act 17", forms, None).is_some());
        assert!(find_name("in the ant 17", "act 17", forms, None).is_none());
    }
}

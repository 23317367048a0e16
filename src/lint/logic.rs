//! A small decision procedure for compiled conditions: can this condition ever hold, and does
//! one condition imply another? Used to find rules that can never fire.
//!
//! A condition is put in disjunctive normal form (an `any` of `all`s of possibly negated
//! atoms), dropping every conjunction that contradicts itself; it can hold iff a conjunction is
//! left. `a` implies `b` iff `a and not b` can never hold. Atoms are opaque except for what the
//! engine guarantees about them:
//!
//! - the message length is one number: `longer_than: 20` and `shorter_than: 10` contradict;
//!   so is its number of words: `fewer_words_than: 3` and `not: {fewer_words_than: 5}`;
//! - at most one skill is active: `skill_active: x` contradicts `skill_active: y` and
//!   `skill_active: false`; at most one generation mode, and one interface mode, likewise;
//! - a photo with a face is a photo: `attachment: {kind: photo, face: true}` implies
//!   `attachment: {kind: photo}`;
//! - a file named in the message is open: `open_file_named: true` implies `file_open: true`;
//! - an argument has one value: `argument: {one_of: [a]}` contradicts `one_of: [b]`.
//!
//! Everything else, `mentions` above all, is treated as independent: two word lists may share
//! words, so nothing is concluded from them. The answers are therefore sound but incomplete:
//! "never holds" and "implies" are only said when they are certain. A condition too large to
//! expand (more than [`MAX_TERMS`] conjunctions) is not judged.
//!
//! Comparing one condition with hundreds of others is made cheap three ways, none of which
//! changes an answer: a condition's normal forms are worked out once ([`Normal`]); joining two
//! terms that are each free of contradictions only checks the pairs across them; and every atom
//! has a [`Kind`] — what it can contradict — so two conditions with no kind in common are known
//! to be independent without expanding anything (see [`super::shadow`]).

use std::collections::HashMap;

use serde_json::Value;

use crate::contract::GenerationMode;
use crate::ruleset::{Cond, SkillIs};

/// The most conjunctions a normal form may have before the question is left undecided.
pub const MAX_TERMS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Atom<'c> {
    LongerThan(usize),
    ShorterThan(usize),
    FewerWordsThan(usize),
    Mentions(usize),
    SomeSkill,
    Skill(usize),
    AssistantAsked,
    DraftShown,
    SomeGenerationMode,
    GenerationMode(GenerationMode),
    Attachment(&'c str, Option<bool>),
    UiMode(&'c str),
    FileOpen,
    OpenFileNamed,
    Integration(&'c str),
    SearchToggle,
    Argument(&'c str, &'c [Value]),
    ArgumentInMessage(&'c str),
    RepeatsSuccessfulCall,
}

/// What an atom can contradict: atoms of different kinds never clash (see [`clash`]), and
/// every length test is one kind. A term of a condition and a term of another that tests no
/// kind of the first never contradict each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind<'c> {
    Length,
    Words,
    Mentions(usize),
    Skill,
    AssistantAsked,
    DraftShown,
    GenerationMode,
    Attachment(&'c str),
    UiMode,
    File,
    Integration(&'c str),
    SearchToggle,
    Argument(&'c str),
    ArgumentInMessage(&'c str),
    RepeatsSuccessfulCall,
}

impl<'c> Atom<'c> {
    fn kind(self) -> Kind<'c> {
        match self {
            Atom::LongerThan(_) | Atom::ShorterThan(_) => Kind::Length,
            Atom::FewerWordsThan(_) => Kind::Words,
            Atom::Mentions(l) => Kind::Mentions(l),
            Atom::SomeSkill | Atom::Skill(_) => Kind::Skill,
            Atom::AssistantAsked => Kind::AssistantAsked,
            Atom::DraftShown => Kind::DraftShown,
            Atom::SomeGenerationMode | Atom::GenerationMode(_) => Kind::GenerationMode,
            Atom::Attachment(k, _) => Kind::Attachment(k),
            Atom::UiMode(_) => Kind::UiMode,
            Atom::FileOpen | Atom::OpenFileNamed => Kind::File,
            Atom::Integration(i) => Kind::Integration(i),
            Atom::SearchToggle => Kind::SearchToggle,
            Atom::Argument(n, _) => Kind::Argument(n),
            Atom::ArgumentInMessage(n) => Kind::ArgumentInMessage(n),
            Atom::RepeatsSuccessfulCall => Kind::RepeatsSuccessfulCall,
        }
    }
}

/// An atom, holding (`true`) or not.
type Lit<'c> = (Atom<'c>, bool);
/// A conjunction of literals.
type Term<'c> = Vec<Lit<'c>>;

/// Whether `c` can hold for some request. `None`: too large to decide.
pub(crate) fn satisfiable(c: &Cond) -> Option<bool> {
    dnf(c, true).map(|terms| !terms.is_empty())
}

/// Whether every request for which `a` holds also makes `b` hold. `None`: too large to decide.
#[cfg(test)]
pub(crate) fn implies(a: &Cond, b: &Cond) -> Option<bool> {
    let terms = product(&dnf(a, true)?, &dnf(b, false)?)?;
    Some(terms.is_empty())
}

/// A condition's normal form and its negation's, and the kinds of atom it tests: worked out
/// once, so comparing it with many other conditions expands nothing again.
#[derive(Debug)]
pub(crate) struct Normal<'c> {
    /// `None`: too large to decide.
    pos: Option<Vec<Term<'c>>>,
    neg: Option<Vec<Term<'c>>>,
    /// Sorted, without repeats.
    kinds: Vec<Kind<'c>>,
}

impl<'c> Normal<'c> {
    pub(crate) fn new(c: &'c Cond) -> Self {
        let mut kinds = Vec::new();
        kinds_of(c, &mut kinds);
        kinds.sort_unstable();
        kinds.dedup();
        Normal {
            pos: dnf(c, true),
            neg: dnf(c, false),
            kinds,
        }
    }

    /// Whether the condition can hold for some request. `None`: too large to decide.
    pub(crate) fn satisfiable(&self) -> Option<bool> {
        self.pos.as_ref().map(|terms| !terms.is_empty())
    }

    /// Whether it holds for every request.
    pub(crate) fn tautology(&self) -> bool {
        self.neg.as_ref().is_some_and(Vec::is_empty)
    }

    /// The kinds of atom it tests, sorted.
    pub(crate) fn kinds(&self) -> &[Kind<'c>] {
        &self.kinds
    }

    /// Whether every request for which this holds also makes `b` hold ([`implies`]).
    pub(crate) fn implies(&self, b: &Normal) -> Option<bool> {
        Some(product(self.pos.as_ref()?, b.neg.as_ref()?)?.is_empty())
    }

    /// Whether this and `b` can never hold together: `all: [self, b]` is not satisfiable.
    pub(crate) fn excludes(&self, b: &Normal) -> bool {
        let Some(pos) = &self.pos else { return false };
        if pos.is_empty() {
            return true;
        }
        b.pos
            .as_ref()
            .and_then(|other| product(pos, other))
            .is_some_and(|terms| terms.is_empty())
    }

    /// Whether every request for which this holds makes one of `parts` hold: [`implies`] with
    /// `any: parts`, expanded in the same order, so with the same answer when it is too large.
    pub(crate) fn implies_any(&self, parts: &[&Normal]) -> Option<bool> {
        let pos = self.pos.as_ref()?;
        let mut none_holds: Vec<Term> = vec![Vec::new()];
        for p in parts {
            none_holds = product(&none_holds, p.neg.as_ref()?)?;
            if none_holds.is_empty() {
                break;
            }
        }
        Some(product(pos, &none_holds)?.is_empty())
    }

    /// Whether a request is quickly found for which this holds and none of `parts` does: a
    /// term of this, then for each part the first term of its negation that fits what was
    /// chosen so far. Finding one proves this does not imply `any: parts` ([`implies_any`]
    /// would not say yes); not finding one proves nothing, the choice being greedy. Linear in
    /// the parts, where [`implies_any`] multiplies their terms.
    pub(crate) fn escapes_all(&self, parts: &[&Normal]) -> bool {
        let Some(pos) = &self.pos else { return false };
        let Some(negs) = parts
            .iter()
            .map(|p| p.neg.as_deref())
            .collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        pos.iter().any(|start| {
            let mut chosen = Chosen::default();
            chosen.add_if_fits(start)
                && negs
                    .iter()
                    .all(|terms| terms.iter().any(|t| chosen.add_if_fits(t)))
        })
    }
}

/// A growing conjunction free of contradictions, its literals filed by kind so a new literal
/// is only checked against those it could clash with.
#[derive(Default)]
struct Chosen<'c> {
    by_kind: HashMap<Kind<'c>, Vec<Lit<'c>>>,
    /// The message length it allows, `low..=high`.
    low: usize,
    high: Option<usize>,
}

impl<'c> Chosen<'c> {
    /// Adds `term` (itself free of contradictions) when it contradicts nothing chosen.
    fn add_if_fits(&mut self, term: &[Lit<'c>]) -> bool {
        let (mut low, mut high) = (self.low, self.high.unwrap_or(usize::MAX));
        for &lit in term {
            match lit {
                // Length literals are judged by the bounds alone, as in `contradicts`.
                (Atom::LongerThan(n), true) => low = low.max(n.saturating_add(1)),
                (Atom::LongerThan(n), false) => high = high.min(n),
                (Atom::ShorterThan(0), true) => return false,
                (Atom::ShorterThan(n), true) => high = high.min(n - 1),
                (Atom::ShorterThan(n), false) => low = low.max(n),
                (Atom::FewerWordsThan(0), true) | (Atom::Argument(_, []), true) => return false,
                _ => {
                    let same = self.by_kind.get(&lit.0.kind());
                    if same.is_some_and(|v| v.iter().any(|&b| clash(lit, b) || clash(b, lit))) {
                        return false;
                    }
                }
            }
        }
        if low > high {
            return false;
        }
        (self.low, self.high) = (low, Some(high));
        for &lit in term {
            self.by_kind.entry(lit.0.kind()).or_default().push(lit);
        }
        true
    }
}

/// Every kind of atom `c` tests.
fn kinds_of<'c>(c: &'c Cond, out: &mut Vec<Kind<'c>>) {
    match c {
        Cond::All(parts) | Cond::Any(parts) => parts.iter().for_each(|p| kinds_of(p, out)),
        Cond::Not(inner) => kinds_of(inner, out),
        Cond::Invalid => {}
        leaf => out.extend(atom_of(leaf).map(|(a, _)| a.kind())),
    }
}

/// The normal form of `c` (of `not c` when `positive` is false), without contradictory terms.
fn dnf(c: &Cond, positive: bool) -> Option<Vec<Term<'_>>> {
    match c {
        Cond::All(parts) | Cond::Any(parts) => {
            // `all` is a conjunction, and so is a negated `any` (De Morgan).
            let conjunction = matches!(c, Cond::All(_)) == positive;
            if conjunction {
                let mut acc: Vec<Term> = vec![Vec::new()];
                for p in parts {
                    acc = product(&acc, &dnf(p, positive)?)?;
                    if acc.is_empty() {
                        break;
                    }
                }
                Some(acc)
            } else {
                let mut acc = Vec::new();
                for p in parts {
                    acc.extend(dnf(p, positive)?);
                    if acc.len() > MAX_TERMS {
                        return None;
                    }
                }
                Some(acc)
            }
        }
        Cond::Not(inner) => dnf(inner, !positive),
        // Never in a compiled ruleset; undecided rather than wrong.
        Cond::Invalid => None,
        atom => {
            let (a, holds) = atom_of(atom)?;
            let term = vec![(a, holds == positive)];
            Some(if contradicts(&term) {
                Vec::new()
            } else {
                vec![term]
            })
        }
    }
}

/// Every conjunction of one term of `a` with one of `b`, without the contradictory ones. Every
/// term is free of contradictions, so only the pairs across the two are checked.
fn product<'c>(a: &[Term<'c>], b: &[Term<'c>]) -> Option<Vec<Term<'c>>> {
    let mut out = Vec::new();
    for ta in a {
        for tb in b {
            if !joined_contradicts(ta, tb) {
                let mut t = ta.clone();
                for lit in tb {
                    if !t.contains(lit) {
                        t.push(*lit);
                    }
                }
                out.push(t);
                if out.len() > MAX_TERMS {
                    return None;
                }
            }
        }
    }
    Some(out)
}

/// The atom a leaf condition tests, and whether the leaf asks for it to hold.
fn atom_of(c: &Cond) -> Option<(Atom<'_>, bool)> {
    Some(match c {
        Cond::LongerThan(n) => (Atom::LongerThan(*n), true),
        Cond::ShorterThan(n) => (Atom::ShorterThan(*n), true),
        Cond::FewerWordsThan(n) => (Atom::FewerWordsThan(*n), true),
        Cond::Mentions(l) => (Atom::Mentions(*l), true),
        Cond::SkillActive(SkillIs::Any) => (Atom::SomeSkill, true),
        Cond::SkillActive(SkillIs::None) => (Atom::SomeSkill, false),
        Cond::SkillActive(SkillIs::Id(i)) => (Atom::Skill(*i), true),
        Cond::AssistantAsked(b) => (Atom::AssistantAsked, *b),
        Cond::DraftShown(b) => (Atom::DraftShown, *b),
        Cond::GenerationMode(None) => (Atom::SomeGenerationMode, true),
        Cond::GenerationMode(Some(m)) => (Atom::GenerationMode(*m), true),
        Cond::Attachment { kind, face } => (Atom::Attachment(kind, *face), true),
        Cond::UiMode(m) => (Atom::UiMode(m), true),
        Cond::FileOpen(b) => (Atom::FileOpen, *b),
        Cond::OpenFileNamed(b) => (Atom::OpenFileNamed, *b),
        Cond::Integration(i) => (Atom::Integration(i), true),
        Cond::SearchToggle(b) => (Atom::SearchToggle, *b),
        Cond::Argument { name, one_of } => (Atom::Argument(name, one_of), true),
        Cond::ArgumentInMessage(n) => (Atom::ArgumentInMessage(n), true),
        Cond::RepeatsSuccessfulCall(b) => (Atom::RepeatsSuccessfulCall, *b),
        Cond::All(_) | Cond::Any(_) | Cond::Not(_) | Cond::Invalid => return None,
    })
}

/// Whether a conjunction can never hold.
fn contradicts(term: &[Lit]) -> bool {
    for (i, a) in term.iter().enumerate() {
        for b in &term[i + 1..] {
            if clash(*a, *b) || clash(*b, *a) {
                return true;
            }
        }
    }
    out_of_bounds(term)
}

/// Whether `a` and `b`, each free of contradictions, contradict each other: a pair across them
/// clashes, or the lengths they allow together are none ([`contradicts`] of the two joined).
fn joined_contradicts(a: &[Lit], b: &[Lit]) -> bool {
    a.iter()
        .any(|&x| b.iter().any(|&y| clash(x, y) || clash(y, x)))
        || out_of_bounds(a.iter().chain(b))
}

/// The message length: whether the lowest length the literals allow is above the highest.
fn out_of_bounds<'a, 'c: 'a>(term: impl IntoIterator<Item = &'a Lit<'c>>) -> bool {
    let (mut low, mut high) = (0usize, usize::MAX);
    for &(atom, holds) in term {
        match (atom, holds) {
            (Atom::LongerThan(n), true) => low = low.max(n.saturating_add(1)),
            (Atom::LongerThan(n), false) => high = high.min(n),
            (Atom::ShorterThan(0), true) => return true,
            (Atom::ShorterThan(n), true) => high = high.min(n - 1),
            (Atom::ShorterThan(n), false) => low = low.max(n),
            (Atom::FewerWordsThan(0), true) | (Atom::Argument(_, []), true) => return true,
            _ => {}
        }
    }
    low > high
}

/// Whether `a` and `b` cannot both be as given (checked in both orders by the caller).
fn clash((a, pa): Lit, (b, pb): Lit) -> bool {
    if a == b {
        return pa != pb;
    }
    match (a, b) {
        (Atom::Skill(_), Atom::Skill(_)) => pa && pb,
        (Atom::Skill(_), Atom::SomeSkill) => pa && !pb,
        (Atom::GenerationMode(_), Atom::GenerationMode(_)) => pa && pb,
        (Atom::GenerationMode(_), Atom::SomeGenerationMode) => pa && !pb,
        (Atom::UiMode(_), Atom::UiMode(_)) => pa && pb,
        (Atom::OpenFileNamed, Atom::FileOpen) => pa && !pb,
        // Fewer than `a` words, and `b` or more, with `a <= b`.
        (Atom::FewerWordsThan(a), Atom::FewerWordsThan(b)) => pa && !pb && a <= b,
        // A specific attachment is there, but no attachment of that kind at all is.
        (Atom::Attachment(k1, Some(_)), Atom::Attachment(k2, None)) => k1 == k2 && pa && !pb,
        (Atom::Argument(n1, v1), Atom::Argument(n2, v2)) if n1 == n2 => {
            // One value: it cannot be in two disjoint sets, nor in `v1` and outside `v2` when
            // `v1` is a subset of `v2`.
            pa && if pb {
                !v1.iter().any(|v| v2.contains(v))
            } else {
                v1.iter().all(|v| v2.contains(v))
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(v: Vec<Cond>) -> Cond {
        Cond::All(v)
    }
    fn any(v: Vec<Cond>) -> Cond {
        Cond::Any(v)
    }
    fn not(c: Cond) -> Cond {
        Cond::Not(Box::new(c))
    }
    fn sat(c: &Cond) -> bool {
        satisfiable(c).expect("decided")
    }
    fn imp(a: &Cond, b: &Cond) -> bool {
        implies(a, b).expect("decided")
    }

    #[test]
    fn lengths_are_one_number() {
        assert!(!sat(&all(vec![
            Cond::LongerThan(20),
            Cond::ShorterThan(10)
        ])));
        assert!(sat(&all(vec![Cond::LongerThan(9), Cond::ShorterThan(11)])));
        assert!(!sat(&all(vec![
            Cond::LongerThan(10),
            Cond::ShorterThan(11)
        ])));
        assert!(!sat(&Cond::ShorterThan(0)));
        assert!(imp(&Cond::LongerThan(30), &Cond::LongerThan(20)));
        assert!(!imp(&Cond::LongerThan(20), &Cond::LongerThan(30)));
        assert!(imp(&Cond::ShorterThan(5), &not(Cond::LongerThan(4))));
        assert!(!imp(&Cond::ShorterThan(6), &not(Cond::LongerThan(4))));
        assert!(!sat(&all(vec![
            Cond::FewerWordsThan(3),
            not(Cond::FewerWordsThan(5))
        ])));
        assert!(sat(&all(vec![
            Cond::FewerWordsThan(5),
            not(Cond::FewerWordsThan(3))
        ])));
        assert!(!sat(&Cond::FewerWordsThan(0)));
        assert!(imp(&Cond::FewerWordsThan(2), &Cond::FewerWordsThan(3)));
        assert!(!imp(&Cond::FewerWordsThan(3), &Cond::FewerWordsThan(2)));
    }

    #[test]
    fn one_skill_one_mode() {
        let health = Cond::SkillActive(SkillIs::Id(0));
        let other = Cond::SkillActive(SkillIs::Id(1));
        assert!(!sat(&all(vec![health.clone(), other.clone()])));
        assert!(!sat(&all(vec![
            health.clone(),
            Cond::SkillActive(SkillIs::None)
        ])));
        assert!(imp(&health, &Cond::SkillActive(SkillIs::Any)));
        assert!(imp(&health, &not(other)));
        let image = Cond::GenerationMode(Some(GenerationMode::Image));
        assert!(imp(&image, &Cond::GenerationMode(None)));
        // Every specific mode together cover "any mode".
        let each = any(GenerationMode::ALL
            .iter()
            .map(|m| Cond::GenerationMode(Some(*m)))
            .collect());
        assert!(imp(&each, &Cond::GenerationMode(None)));
        assert!(!sat(&all(vec![
            Cond::UiMode("a".into()),
            Cond::UiMode("b".into())
        ])));
    }

    #[test]
    fn booleans_written_either_way_agree() {
        assert!(imp(&Cond::DraftShown(false), &not(Cond::DraftShown(true))));
        assert!(imp(&not(Cond::FileOpen(true)), &Cond::FileOpen(false)));
        assert!(imp(&Cond::OpenFileNamed(true), &Cond::FileOpen(true)));
        assert!(!imp(&Cond::FileOpen(true), &Cond::OpenFileNamed(true)));
    }

    #[test]
    fn conjunctions_and_disjunctions() {
        let a = Cond::Mentions(0);
        let b = Cond::Mentions(1);
        assert!(imp(&all(vec![a.clone(), b.clone()]), &a));
        assert!(!imp(&a, &all(vec![a.clone(), b.clone()])));
        assert!(imp(&a, &any(vec![a.clone(), b.clone()])));
        assert!(!imp(&any(vec![a.clone(), b.clone()]), &a));
        // Different word lists are never assumed to be related.
        assert!(!imp(&a, &b));
        assert!(sat(&all(vec![a.clone(), not(b.clone())])));
        // x or not x always holds; x and not x never does.
        let always = any(vec![a.clone(), not(a.clone())]);
        assert!(imp(&b, &always));
        assert!(!sat(&all(vec![a.clone(), not(a.clone())])));
        assert!(!sat(&not(always)));
    }

    #[test]
    fn attachments_and_arguments() {
        let face = Cond::Attachment {
            kind: "photo".into(),
            face: Some(true),
        };
        let photo = Cond::Attachment {
            kind: "photo".into(),
            face: None,
        };
        assert!(imp(&face, &photo));
        assert!(!imp(&photo, &face));
        let arg = |v: Vec<serde_json::Value>| Cond::Argument {
            name: "action".into(),
            one_of: v,
        };
        assert!(!sat(&all(vec![
            arg(vec![json!("a")]),
            arg(vec![json!("b")])
        ])));
        assert!(imp(
            &arg(vec![json!("a")]),
            &arg(vec![json!("a"), json!("b")])
        ));
        assert!(!imp(
            &arg(vec![json!("a"), json!("c")]),
            &arg(vec![json!("a")])
        ));
        assert!(!sat(&arg(vec![])));
    }

    fn sample() -> Vec<Cond> {
        let photo = |face| Cond::Attachment {
            kind: "photo".into(),
            face,
        };
        vec![
            Cond::Mentions(0),
            all(vec![Cond::Mentions(0), not(Cond::Mentions(1))]),
            any(vec![Cond::DraftShown(true), Cond::DraftShown(false)]),
            all(vec![Cond::LongerThan(20), Cond::ShorterThan(240)]),
            Cond::ShorterThan(10),
            Cond::SkillActive(SkillIs::Id(0)),
            all(vec![Cond::SkillActive(SkillIs::Any), Cond::Mentions(1)]),
            any(vec![photo(Some(true)), Cond::OpenFileNamed(true)]),
            all(vec![photo(None), Cond::FileOpen(false)]),
            not(any(vec![Cond::Mentions(0), Cond::GenerationMode(None)])),
        ]
    }

    #[test]
    fn worked_out_once_answers_as_worked_out_each_time() {
        let conds = sample();
        let normal: Vec<Normal> = conds.iter().map(Normal::new).collect();
        for (a, na) in conds.iter().zip(&normal) {
            assert_eq!(na.satisfiable(), satisfiable(a));
            for (b, nb) in conds.iter().zip(&normal) {
                assert_eq!(na.implies(nb), implies(a, b), "{a:?} => {b:?}");
                let both = satisfiable(&all(vec![a.clone(), b.clone()]));
                assert_eq!(na.excludes(nb), both == Some(false), "{a:?} and {b:?}");
                // Sharing no kind: independent, so one implies the other only if it always holds.
                if !na.kinds().iter().any(|k| nb.kinds().contains(k)) {
                    assert!(!na.excludes(nb));
                    assert_eq!(na.implies(nb) == Some(true), nb.tautology());
                }
            }
            for n in 0..=conds.len() {
                let parts: Vec<&Normal> = normal[..n].iter().collect();
                let exact = implies(a, &any(conds[..n].to_vec()));
                assert_eq!(na.implies_any(&parts), exact, "{a:?} => any of {n}");
                if na.escapes_all(&parts) {
                    assert_ne!(exact, Some(true), "{a:?} escapes any of {n}");
                }
            }
        }
        // Found when it is there to be found; never when every case is covered.
        let (draft, no_draft) = (Normal::new(&conds[2]), Normal::new(&Cond::Mentions(3)));
        assert!(no_draft.escapes_all(&[&normal[0], &normal[5]]));
        assert!(!no_draft.escapes_all(&[&draft]));
    }

    #[test]
    fn too_large_is_undecided() {
        // (a1 or b1) and (a2 or b2) and ... has 2^n conjunctions.
        let parts = (0..14)
            .map(|i| any(vec![Cond::Mentions(2 * i), Cond::Mentions(2 * i + 1)]))
            .collect();
        assert_eq!(satisfiable(&all(parts)), None);
    }
}

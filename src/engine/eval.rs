//! Evaluating compiled conditions against one request (and, in guards, one call), and explaining
//! a result for the trace. Evaluation allocates nothing but what a file-name lookup needs;
//! explanations are only built for rules that fired.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value;

use crate::contract::{Fact, FactKind, Match, Request};
use crate::ruleset::RuleSet;
use crate::ruleset::{Cond, SkillIs};
use crate::text::{self, Hit, Hits, Normalized};

/// A call on its way through the pipeline: what a guard's conditions are evaluated against.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub tool: usize,
    pub arguments: Value,
}

/// What conditions look at: the request, its message normalised once, and the skill as it is
/// at this point of the pipeline.
pub(crate) struct Ctx<'a> {
    pub rs: &'a RuleSet,
    pub req: &'a Request,
    /// The user's message, normalised by the ruleset's [`crate::text::Normalizer`].
    pub text: &'a str,
    /// The same, with where its characters were in the original message.
    pub norm: &'a Normalized,
    /// Its length in characters.
    pub chars: usize,
    pub skill: Option<usize>,
    /// Test coverage only: records the word lists consulted. `None` on the decision path.
    pub probe: Option<&'a super::probe::Probe>,
    /// What the message matched, every word list at once (one scan per message).
    pub hits: Hits,
    /// Its words, counted up to [`WORDS_COUNTED`] the first time a condition asks.
    pub words: std::cell::Cell<Option<usize>>,
    /// What one part of a compound message matched, scanned alone the first time a condition
    /// on that part needs more than the whole message's first hits ([`Ctx::eval_in`]).
    pub part: std::cell::OnceCell<((usize, usize), Hits)>,
}

/// How far the words of a message are counted once for every `fewer_words_than` of a request;
/// a larger bound counts again, up to itself.
const WORDS_COUNTED: usize = 64;

/// The explanation of a trace step: facts joined by `; `, built in one string, and the same
/// as values (what matched where, and the other facts).
#[derive(Debug)]
pub(crate) struct Why {
    prose: String,
    pub matches: Vec<Match>,
    pub facts: Vec<Fact>,
}

impl Default for Why {
    /// Room for a usual explanation (60 to 200 bytes), which would otherwise grow by doubling
    /// from 8 bytes, copying itself each time.
    fn default() -> Self {
        Self {
            prose: String::with_capacity(192),
            matches: Vec::new(),
            facts: Vec::new(),
        }
    }
}

impl Why {
    pub fn fact(&mut self, args: std::fmt::Arguments<'_>) {
        if !self.prose.is_empty() {
            self.prose.push_str("; ");
        }
        // Writing into a String cannot fail.
        let _ = self.prose.write_fmt(args);
    }

    /// A fact as prose and as a value.
    fn typed(&mut self, fact: Fact, args: std::fmt::Arguments<'_>) {
        self.facts.push(fact);
        self.fact(args);
    }

    /// The prose, the matches and the facts.
    pub fn into_parts(self) -> (String, Vec<Match>, Vec<Fact>) {
        (self.prose, self.matches, self.facts)
    }
}

impl Ctx<'_> {
    /// How many words the message has, counting no further than `most` (a condition on a few
    /// words never walks a long message). A word is a run of letters and digits, with the
    /// hyphens, underscores and apostrophes inside it: "something-cheap" is one word, a dash
    /// between spaces none.
    fn words_up_to(&self, most: usize) -> usize {
        let count = |most: usize| {
            self.text
                .split(|c: char| !(text::is_alphanumeric(c) || matches!(c, '-' | '_' | '\'')))
                .filter(|w| w.chars().any(text::is_alphanumeric))
                .take(most)
                .count()
        };
        if most > WORDS_COUNTED {
            return count(most);
        }
        let words = self.words.get().unwrap_or_else(|| {
            let n = count(WORDS_COUNTED);
            self.words.set(Some(n));
            n
        });
        words.min(most)
    }

    /// Whether `c` holds for the part `span` (bytes of the normalised message) of a compound
    /// request: a word list counts only when its first hit lies inside the part; every other
    /// condition is the whole request's.
    pub fn eval_in(&self, c: &Cond, span: (usize, usize)) -> bool {
        match c {
            Cond::All(v) => v.iter().all(|c| self.eval_in(c, span)),
            Cond::Any(v) => v.iter().any(|c| self.eval_in(c, span)),
            Cond::Not(c) => !self.eval_in(c, span),
            // The whole message's first hit, when it lies in the part; else the part's own
            // words, scanned once (its hit may sit behind one that straddles the cut, or come
            // after one in the other part).
            Cond::Mentions(l) => match self.hits.get(*l) {
                None => false,
                Some(h) if h.start >= span.0 && h.end <= span.1 => true,
                Some(_) => self.part_hits(span).is_some_and(|h| h.get(*l).is_some()),
            },
            c => self.eval(c, None),
        }
    }

    /// What the part `span` of the normalised message matches, scanned alone (`None` when
    /// `span` is not a part of it, or another part was scanned before with this context).
    fn part_hits(&self, span: (usize, usize)) -> Option<&Hits> {
        let (at, hits) = self.part.get_or_init(|| {
            let text = self.text.get(span.0..span.1).unwrap_or_default();
            (span, self.rs.scanner.scan(text))
        });
        (*at == span).then_some(hits)
    }

    pub fn eval(&self, c: &Cond, call: Option<&Pending>) -> bool {
        match c {
            Cond::All(v) => v.iter().all(|c| self.eval(c, call)),
            Cond::Any(v) => v.iter().any(|c| self.eval(c, call)),
            Cond::Not(c) => !self.eval(c, call),
            Cond::LongerThan(n) => self.chars > *n,
            Cond::ShorterThan(n) => self.chars < *n,
            Cond::FewerWordsThan(n) => self.words_up_to(*n) < *n,
            Cond::Mentions(l) => {
                if let Some(probe) = self.probe {
                    probe.mark(*l);
                }
                self.hits.get(*l).is_some()
            }
            Cond::SkillActive(SkillIs::Any) => self.skill.is_some(),
            Cond::SkillActive(SkillIs::None) => self.skill.is_none(),
            Cond::SkillActive(SkillIs::Id(i)) => self.skill == Some(*i),
            Cond::AssistantAsked(b) => self.assistant_asked() == *b,
            Cond::DraftShown(b) => self.req.draft_shown == *b,
            Cond::GenerationMode(None) => self.req.generation_mode.is_some(),
            Cond::GenerationMode(Some(m)) => self.req.generation_mode == Some(*m),
            Cond::Attachment { kind, face } => self
                .req
                .attachments
                .iter()
                .any(|a| a.kind == *kind && face.is_none_or(|f| a.face == f)),
            Cond::UiMode(m) => self.ui_mode() == Some(m.as_str()),
            Cond::FileOpen(b) => self.open_file().is_some() == *b,
            Cond::OpenFileNamed(b) => self.open_file_named().is_some() == *b,
            Cond::Integration(i) => self.req.integrations.iter().any(|x| x == i),
            Cond::SearchToggle(b) => self.req.web_search_toggle == *b,
            Cond::Argument { name, one_of } => {
                argument(call, name).is_some_and(|v| one_of.contains(v))
            }
            Cond::ArgumentInMessage(name) => self.argument_named(call, name).is_some(),
            Cond::RepeatsSuccessfulCall(b) => self.repeats(call) == *b,
            Cond::Invalid => false,
        }
    }

    /// Facts that explain why `c` has the value it has, e.g. `matched 'where to buy' at 0..12`,
    /// written into one string (this runs for every rule that fires, so it allocates once).
    pub fn explain(&self, c: &Cond, call: Option<&Pending>, out: &mut Why) {
        let value = self.eval(c, call);
        match c {
            Cond::All(v) | Cond::Any(v) => {
                // An `all` that holds, or an `any` that fails, is explained by every part;
                // otherwise the first part that decided it is enough.
                let every = matches!(c, Cond::All(_)) == value;
                for part in v {
                    if every {
                        self.explain(part, call, out);
                    } else if self.eval(part, call) == value {
                        self.explain(part, call, out);
                        break;
                    }
                }
            }
            Cond::Not(c) => self.explain(c, call, out),
            Cond::LongerThan(n) | Cond::ShorterThan(n) => out.typed(
                Fact::of(FactKind::Length).count(self.chars, Some(*n)),
                format_args!("the message has {} characters (limit {n})", self.chars),
            ),
            Cond::FewerWordsThan(n) => {
                let words = self.words_up_to(n.saturating_add(1));
                out.typed(
                    Fact::of(FactKind::Words).count(words, Some(*n)),
                    format_args!("the message has {words} words (limit {n})"),
                );
            }
            Cond::Mentions(l) => {
                let list = &self.rs.lists[*l];
                match (self.hits.get(*l), self.hits.negated(*l)) {
                    (Some(hit), _) => self.describe_hit(&list.entries, &list.id, hit, out),
                    (None, Some(n)) => {
                        let (s, e) = self.norm.char_span(n.hit.start, n.hit.end);
                        let by = &self.rs.lists[n.by.list as usize];
                        let negation = &self.text[n.by.hit.start..n.by.hit.end];
                        out.typed(
                            Fact::of(FactKind::Negated)
                                .name(&*list.id)
                                .value(self.original(s, e)),
                            format_args!(
                                "nothing from '{}': '{}' at {s}..{e} is negated by '{negation}' ({})",
                                list.id,
                                &self.text[n.hit.start..n.hit.end],
                                by.id
                            ),
                        );
                    }
                    (None, None) => out.typed(
                        Fact::of(FactKind::NothingFrom).name(&*list.id),
                        format_args!("nothing from '{}'", list.id),
                    ),
                }
            }
            Cond::SkillActive(_) => match self.skill {
                Some(i) => {
                    let id = &self.rs.skills[i].id;
                    out.typed(
                        Fact::of(FactKind::SkillActive).name(&**id),
                        format_args!("skill '{id}' is active"),
                    )
                }
                None => out.typed(
                    Fact::of(FactKind::NoSkill),
                    format_args!("no skill is active"),
                ),
            },
            Cond::AssistantAsked(_) => {
                let asked = self.assistant_asked();
                out.typed(
                    Fact::of(FactKind::AssistantAsked).holds(asked),
                    format_args!(
                        "{}",
                        if asked {
                            "the assistant's last message asked a question"
                        } else {
                            "the assistant's last message was not a question"
                        }
                    ),
                )
            }
            Cond::DraftShown(_) => out.typed(
                Fact::of(FactKind::DraftShown).holds(self.req.draft_shown),
                format_args!("draft shown: {}", self.req.draft_shown),
            ),
            Cond::GenerationMode(_) => match self.req.generation_mode {
                Some(m) => out.typed(
                    Fact::of(FactKind::GenerationMode).name(m.as_str()),
                    format_args!("generation mode '{}' is on", m.as_str()),
                ),
                None => out.typed(
                    Fact::of(FactKind::NoGenerationMode),
                    format_args!("no generation mode"),
                ),
            },
            Cond::Attachment { kind, .. } => {
                let fact = Fact::of(FactKind::Attachment)
                    .name(kind.to_string())
                    .holds(value);
                if value {
                    out.typed(fact, format_args!("a {kind} is attached"))
                } else {
                    out.typed(fact, format_args!("no matching {kind} attached"))
                }
            }
            Cond::UiMode(_) => match self.ui_mode() {
                Some(m) => out.typed(
                    Fact::of(FactKind::UiMode).name(m),
                    format_args!("ui mode '{m}'"),
                ),
                None => out.typed(Fact::of(FactKind::NoUiMode), format_args!("no ui mode")),
            },
            Cond::FileOpen(_) => match self.open_file() {
                Some(f) => out.typed(
                    Fact::of(FactKind::FileOpen).name(f),
                    format_args!("file '{f}' is open"),
                ),
                None => out.typed(
                    Fact::of(FactKind::NoFileOpen),
                    format_args!("no file is open"),
                ),
            },
            Cond::OpenFileNamed(_) => match (self.open_file(), self.open_file_named()) {
                (Some(f), Some((s, e))) => {
                    let (s, e) = self.norm.char_span(s, e);
                    out.matches
                        .push(Match::new("open_file".into(), f, s, e, self.original(s, e)));
                    out.typed(
                        Fact::of(FactKind::FileNamed).name(f).holds(true),
                        format_args!("the open file '{f}' is named at {s}..{e}"),
                    )
                }
                (Some(f), None) => out.typed(
                    Fact::of(FactKind::FileNamed).name(f).holds(false),
                    format_args!("the open file '{f}' is not named"),
                ),
                (None, _) => out.typed(
                    Fact::of(FactKind::NoFileOpen),
                    format_args!("no file is open"),
                ),
            },
            Cond::Integration(i) => out.typed(
                Fact::of(FactKind::Integration)
                    .name(i.as_str())
                    .holds(value),
                format_args!(
                    "integration '{i}' {}",
                    if value {
                        "is connected"
                    } else {
                        "is not connected"
                    }
                ),
            ),
            Cond::SearchToggle(_) => out.typed(
                Fact::of(FactKind::SearchToggle).holds(self.req.web_search_toggle),
                format_args!(
                    "the search toggle is {}",
                    if self.req.web_search_toggle {
                        "on"
                    } else {
                        "off"
                    }
                ),
            ),
            Cond::Argument { name, .. } => match argument(call, name) {
                Some(v) => out.typed(
                    Fact::of(FactKind::Argument)
                        .name(name.as_str())
                        .value(v.to_string()),
                    format_args!("argument {name} = {v}"),
                ),
                None => out.typed(
                    Fact::of(FactKind::NoArgument).name(name.as_str()),
                    format_args!("no argument {name}"),
                ),
            },
            Cond::ArgumentInMessage(name) => match argument(call, name) {
                Some(v) => {
                    let fact = Fact::of(FactKind::ArgumentInMessage)
                        .name(name.as_str())
                        .value(v.to_string())
                        .holds(value);
                    if value {
                        if let Some((s, e)) = self.argument_named(call, name) {
                            let (s, e) = self.norm.char_span(s, e);
                            let entry = v.as_str().unwrap_or_default();
                            out.matches.push(Match::new(
                                format!("argument {name}").into(),
                                entry,
                                s,
                                e,
                                self.original(s, e),
                            ));
                        }
                        out.typed(
                            fact,
                            format_args!("argument {name} = {v} is named in the message"),
                        )
                    } else {
                        out.typed(
                            fact,
                            format_args!("argument {name} = {v} is not named in the message"),
                        )
                    }
                }
                None => out.typed(
                    Fact::of(FactKind::NoArgument).name(name.as_str()),
                    format_args!("no argument {name}"),
                ),
            },
            Cond::RepeatsSuccessfulCall(_) => {
                let repeats = self.repeats(call);
                out.typed(
                    Fact::of(FactKind::RepeatsCall).holds(repeats),
                    format_args!(
                        "{}",
                        if repeats {
                            "an identical call already succeeded in this chat"
                        } else {
                            "no identical successful call in this chat"
                        }
                    ),
                )
            }
            Cond::Invalid => {}
        }
    }

    /// `matched 'where to buy' (buying: 'where to b') at 0..12`.
    pub fn describe_hit(&self, entries: &[String], list: &Arc<str>, hit: Hit, out: &mut Why) {
        let (s, e) = self.norm.char_span(hit.start, hit.end);
        let matched = &self.text[hit.start..hit.end];
        let entry = entries.get(hit.entry).map_or("", String::as_str);
        let typo = match (hit.typo, self.norm.folded_within(hit.start, hit.end)) {
            (true, true) => ", one letter off, look-alike letters read as their twins",
            (true, false) => ", one letter off",
            (false, true) => ", look-alike letters read as their twins",
            (false, false) => "",
        };
        let read = if self.norm.read_within(hit.start, hit.end) {
            ", read from another script"
        } else {
            ""
        };
        out.fact(format_args!(
            "matched '{matched}' ({list}: '{entry}'{typo}{read}) at {s}..{e}"
        ));
        let mut m = Match::new(list.clone(), entry, s, e, self.original(s, e));
        m.typo = hit.typo;
        out.matches.push(m);
    }

    /// The characters `start..end` of the original message.
    pub fn original(&self, start: usize, end: usize) -> String {
        self.req
            .user_message()
            .unwrap_or_default()
            .chars()
            .skip(start)
            .take(end.saturating_sub(start))
            .collect()
    }

    /// Whether the assistant's last message ends with a question mark, after whatever people
    /// and assistants put after one: spaces, emoji, closing brackets and quotes.
    pub fn assistant_asked(&self) -> bool {
        self.req.last_assistant().is_some_and(|m| {
            m.trim_end_matches(|c: char| {
                c.is_whitespace()
                    || matches!(
                        c,
                        ')' | ']'
                            | '}'
                            | '»'
                            | '"'
                            | '\''
                            | '”'
                            | '’'
                            | '!'
                            | ':'
                            | ';'
                            | '-'
                            | '='
                    )
                    || is_pictograph(c)
            })
            .ends_with('?')
        })
    }

    fn ui_mode(&self) -> Option<&str> {
        self.req.ui.as_ref()?.mode.as_deref()
    }

    pub fn open_file(&self) -> Option<&str> {
        Some(self.req.ui.as_ref()?.open_file.as_ref()?.name.as_str())
    }

    fn open_file_named(&self) -> Option<(usize, usize)> {
        // A pre-rule may act on this alone: the whole name, or the words before its codes
        // (`Report_Q3.docx` is named by "report"), as the guards read a call's file argument.
        // One word of a longer lead is not enough ("trip" for `Trip_budget_Sochi.xlsx`).
        self.file_name_said(self.open_file()?, Some(1))
    }

    /// Where a file's name is in the message as a name is said: without its extension, split
    /// at `_` and case changes, in another form ("in plan_2025" names `Plan_2025.xlsx`, "in the
    /// budgets" names `Budget.xlsx`); with `lead_words`, a prefix of its words of at least that
    /// many may do ([`text::find_name`]).
    fn file_name_said(&self, file_name: &str, lead_words: Option<usize>) -> Option<(usize, usize)> {
        let norm = &self.rs.normalizer;
        let name = norm.normalize(&text::name_words(text::base_name(file_name)));
        text::find_name(self.text, &name, norm.name_forms(), lead_words)
    }

    /// Where the argument's value is in the message: as written, or, for a file name (a value
    /// with an extension), as [`file_name_said`](Self::file_name_said) finds it. A value
    /// without an extension is matched as written only: "make a file with the totals" does not
    /// name a file `Total` the model made up. The call names the file already, so the words
    /// before its tail of codes are mention enough ("in the sales report" for
    /// `SalesReport_Q2_2025.xlsx`).
    fn argument_named(&self, call: Option<&Pending>, name: &str) -> Option<(usize, usize)> {
        let value = argument(call, name)?.as_str()?;
        let is_file_name = text::base_name(value).len() != value.len();
        let plain = self.rs.normalizer.normalize(value);
        text::find_phrase(self.text, &plain)
            // A value copied from a message typed in another script is found as the message was
            // read: through the transliteration (a Latin file name found in the message read in
            // the other script). Looked for again only when that reading differs.
            .or_else(|| {
                let read = self.rs.normalizer.normalize_message(value);
                (read != plain).then(|| text::find_phrase(self.text, &read))?
            })
            .or_else(|| {
                is_file_name
                    .then(|| self.file_name_said(value, Some(1)))
                    .flatten()
            })
    }

    fn repeats(&self, call: Option<&Pending>) -> bool {
        let Some(call) = call else { return false };
        let tool = &*self.rs.tools[call.tool].id;
        self.req
            .recent_calls
            .iter()
            .any(|r| r.ok && r.tool == tool && r.arguments == call.arguments)
    }
}

fn argument<'c>(call: Option<&'c Pending>, name: &str) -> Option<&'c Value> {
    call?.arguments.get(name)
}

/// Emoji and pictographs, their modifiers and joiners: what people put after a sentence.
fn is_pictograph(c: char) -> bool {
    matches!(c as u32,
        0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0xFE0E | 0xFE0F | 0x200D
        | 0x20E3 | 0xE0020..=0xE007F)
}

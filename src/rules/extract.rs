//! What the embedded offline router is told about filling tool arguments from the message, and
//! about the request's context and compound requests. Plain serde data; `ruleset::extract`
//! turns it into matchers.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::condition::Condition;

/// How one argument of a tool is filled from the user's message when the embedded router calls
/// the tool (an LLM fills arguments itself). The ways are tried in this order: `choose`,
/// `number`, `from_context`, `text`, then `default`; the first that gives a value wins. The
/// trace says which words filled which argument.
///
/// ```yaml
/// extract:
///   period:
///     choose:
///       - {value: yesterday, words: [yesterday]}
///       - {value: week, words: [week]}
///     default: week
/// ```
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Extraction {
    /// Why these words (optional; for the next editor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Values picked by words or patterns: the first option, in the order written, whose
    /// words or patterns occur in the message gives its `value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choose: Vec<Choice>,
    /// A number read from the message (a price, a count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<NumberExtraction>,
    /// A value from the request's context rather than the words: `open_file` (the name of the
    /// file open in the interface).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_context: Option<ContextValue>,
    /// Free text: the message without its command words (and without the words that filled
    /// the call's other arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextExtraction>,
    /// The value when nothing above matched. Omitted: the argument stays unfilled (and a
    /// required one then makes the call fail validation: a plain chat answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Whether `choose` words forgive one typo, as word lists do (`matching.typos`: "monht"
    /// picks `month`). Default true; `false` matches them only as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typos: Option<bool>,
}

/// One value of a `choose` list and the words that pick it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// The argument's value. In a string, `$0` is the text the pattern matched and `$1`, `$2`
    /// or `${name}` its groups (patterns only; words give `$0`), e.g. `"${from}-${to}"`.
    pub value: Value,
    /// Stems and phrases, written as in word lists (`week` matches «weekly», `doc$` only
    /// «doc»).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// Regular expressions over the normalised (lower-case, folded) message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<String>,
}

/// A number read by patterns: each must have a group named `number` (digits, with spaces
/// between thousands and `,` or `.` for decimals allowed) and may have one named `unit`,
/// multiplied by the longest key of `units` it starts with. With `words`, numbers written in
/// words («seven thousand five hundred») are read as digits first, so the same patterns see
/// «7500».
///
/// ```yaml
/// number:
///   patterns: ['under (?P<number>[0-9][0-9 ]*)\s*(?P<unit>k|thousand)?']
///   units: {k: 1000, thousand: 1000}
///   words: {one$: 1, two$: 2, seven: 7, twenty: 20, hundred: 100, thousand: 1000}
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NumberExtraction {
    /// Regular expressions over the normalised message; the first that matches gives the number.
    #[schemars(length(min = 1))]
    pub patterns: Vec<String>,
    /// Multipliers by the start of the `unit` group (e.g. `k: 1000`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub units: BTreeMap<String, f64>,
    /// Number words by stem, written as in word lists (`seven` matches «sevens», `one$` only
    /// «one»). A run of them becomes one number before the patterns run: the values add up
    /// («twenty five» → 25), a word worth exactly 100 multiplies a smaller number before it
    /// («five hundred» → 500), and one worth 1000 or more multiplies all before it («seven
    /// thousand five hundred» → 7500). A word worth 200 to 999 after a smaller number starts a
    /// number of its own, unless `before_hundreds` says otherwise. Share one list between tools
    /// with a YAML anchor.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub words: BTreeMap<String, f64>,
    /// Multiplier words in the form that names one of them («thousand» as against
    /// «thousands»), written as in `words` and read as they are: at the head of a run of
    /// number words such a word counts once («thousand two hundred» → 1200), where a word of
    /// `words` at the head is left for a pattern's `unit` group to scale what follows (a
    /// colloquial «thousands fifteen» → 15,000).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub singular: BTreeMap<String, f64>,
    /// Words that may stand between two number words of one run without a value of their own
    /// («two and a half thousand»: `joiners: [and a]`, with `half: 0.5` among the words, reads
    /// 2500). Each is one or more words, matched whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joiners: Vec<String>,
    /// A number word below 10 right before a word worth 200 to 999 counts this many of itself:
    /// people name a price of thousands and hundreds without the word «thousand» («three
    /// five-hundred» for 3,500, with `before_hundreds: 1000`). Without it the two words are
    /// two numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub before_hundreds: Option<f64>,
    /// How a pattern with groups named `from` and `to` (a span, «from two to half past
    /// three») is read: the value is `to − from`, times `scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<NumberRange>,
    /// A number said without its unit and below `below` is `times` as much: people name a
    /// price in thousands and leave the word out («for fifteen» is 15,000 for a bike). Not when
    /// the pattern's group named `exact` matched (the currency said: «95 ₽» is 95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_unit: Option<WithoutUnit>,
}

/// `number.without_unit`: how a small number said without its unit is read.
///
/// ```yaml
/// without_unit: {below: 100, times: 1000}
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WithoutUnit {
    /// Numbers below this (and above 0) are scaled.
    #[schemars(range(min = 0.0))]
    pub below: f64,
    /// What such a number is multiplied by.
    #[schemars(range(min = 0.0))]
    pub times: f64,
}

/// A span's length from its two ends (`number.range`): for a pattern with groups `from` and
/// `to` instead of `number`. Each end is a number or a clock time («15:30» is 15.5).
///
/// ```yaml
/// number:
///   patterns: ['from (?P<from>\d{1,2}(?::\d\d)?) to (?P<to>\d{1,2}(?::\d\d)?)']
///   range: {scale: 60, cycle: 12}   # hours to minutes; «from 11 to 2» is 3 hours
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NumberRange {
    /// What one unit of the ends is worth in the argument's unit (60: the ends are hours, the
    /// argument minutes).
    #[serde(default = "one")]
    #[schemars(range(min = 0.0))]
    pub scale: f64,
    /// Added to `to` while it is not beyond `from`: 12 for a clock face, where «from 11 to 2»
    /// and «from 6 pm to 11» are said without am or pm. Without it such a span gives nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub cycle: Option<f64>,
}

fn one() -> f64 {
    1.0
}

/// Where in the request's context a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContextValue {
    /// The name of the file open in the interface.
    OpenFile,
}

/// Free text from the message.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextExtraction {
    /// Command words taken out, as stems (the whole word that starts with one goes), e.g.
    /// `[write, post, about$]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// Regular expressions whose matches are taken out too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_patterns: Vec<String>,
}

/// A context rule of the embedded router: while `when` holds, it changes how likely some
/// tools are. The other router models ignore it (they read the context themselves).
///
/// ```yaml
/// context:
///   - id: describe-needs-a-photo
///     description: «what is this?» with no photo is not a photo to describe.
///     when: {not: {attachment: {kind: photo}}}
///     rule_out: [describe_photo]
///     ask_back: true
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRule {
    /// Unique id, named in the trace.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// Why the context matters.
    pub description: String,
    /// When it applies (conditions on the request, as in pre-rules).
    pub when: Condition,
    /// Tools made more likely: a score added to each (1 is a strong nudge, 3 nearly decides;
    /// negative makes it less likely).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub boost: BTreeMap<String, f32>,
    /// Skills made more likely, by skill id, as `boost` does for tools: a complaint about a
    /// swollen knee with no question in it switches the health interview on.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub boost_skills: BTreeMap<String, f32>,
    /// Tools the embedded router does not choose while `when` holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule_out: Vec<String>,
    /// `true`: when a tool of `rule_out` (offered or not) would have been the most probable
    /// class, no tool is called — the answer asks for what is missing (the photo, the
    /// recording) — rather than the next most probable tool («what is in the picture?» with no
    /// picture is no request to draw one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_back: bool,
    /// A score added to "no tool" (the plain chat answer), like `boost` for a tool: positive
    /// makes a plain answer likelier («can you make slides?» asks, it does not order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost_chat: Option<f32>,
    /// How much (0 to 1) the assistant's message just before the user's counts: its words'
    /// scores, times this weight, are added to the message's own. A short follow-up («and for
    /// tomorrow?», «make it longer», «a month then») names no tool; the answer or question it
    /// follows does. 0 or absent: the message is read alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub previous_message: Option<f32>,
    /// `true`: in a compound request decided part by part («find the letter from the exam
    /// office and put the date in the calendar»), the rule holds for a part only when its
    /// word lists match within that part, so a lookup verb of the first part does not lean the
    /// second to a calendar search. Absent: the whole message decides for every part (right
    /// for a rule about the request as a whole, such as Google being named).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_part: bool,
    /// A tool called before the one the router chose, when that one is among `before`: the
    /// message asks for two steps in one clause («copy the receipt's total from the photo
    /// into the spreadsheet»: read the photo, then edit the sheet). Only while the router may
    /// make two calls and the first tool is offered; nothing when the router chose no tool,
    /// two tools, or another tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<FirstCall>,
}

/// `first` of a context rule: the tool called first, and the tools it comes before.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FirstCall {
    /// The tool called first.
    pub tool: String,
    /// The tools it is called before (the router's choice must be one of them).
    #[schemars(length(min = 1))]
    pub before: Vec<String>,
}

/// How the embedded router splits a message with two independent parts into two calls.
///
/// ```yaml
/// split:
///   connectives: [" and ", ", then ", " and then "]
/// ```
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Split {
    /// Why these connectives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where a message may be cut, as written (spaces count), matched in the normalised
    /// message. Each part is classified alone; two different tools, each sure on its own,
    /// become two calls in the order written (at most `router.max_calls`).
    #[schemars(length(min = 1))]
    pub connectives: Vec<String>,
}

/// Settings of the embedded offline router. It scores the message against every tool's and
/// skill's `examples` (and `chat_examples`); the skill tool's own `examples` are messages that
/// leave the active skill. It calls the best-scoring tool only when that score reaches
/// `threshold` and beats the runner-up by `margin`; otherwise it calls none, and the plain chat
/// answer asks back.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmbeddedRouter {
    /// The lowest score (0 to 1) at which a tool is called.
    #[serde(default = "default_embedded_threshold")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: f32,
    /// How far (0 to 1) the best score must be ahead of the second best; closer is ambiguous,
    /// so no tool is called.
    #[serde(default = "default_embedded_margin")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub margin: f32,
    /// Messages that need no tool (greetings, thanks, small talk, writing help): the plain
    /// chat answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chat_examples: Vec<String>,
    /// Context rules: the request's context (attachment, open file, mode, skill, integration,
    /// draft) makes tools more or less likely.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextRule>,
    /// Splitting a message with two independent parts into two calls. Omitted: one call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// Ways of putting a message that say what it is before the classifier reads it: a
    /// request in question form («could you draw …?») or a question about a topic («why does
    /// …», «what is …»). Named in the trace when they apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<Frame>,
    /// Tools too alike to tell apart without asking back (B6): when one is the best and its
    /// partner is close behind, no tool is called and the trace names both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusable: Option<Torn>,
    /// Typos in a message: a word of at least this many letters that no example has and no
    /// word list knows (`matching.typos.known_words` included), one slip (a letter wrong,
    /// missing, extra, or two neighbours swapped) from a word of the examples, is read as that
    /// word (the most frequent one when several are one slip away); an edit of its first
    /// letter counts from one letter more. The trace names each word read so. `null`: words
    /// are read as written.
    #[serde(default = "default_typos_from")]
    #[schemars(range(min = 3))]
    pub typos_from: Option<usize>,
    /// A message of at least this many words that, read whole, asks for no tool is read
    /// sentence by sentence (cut at `.`, `!`, `?`, `;` and line breaks): when a sentence of
    /// three words or more is sure of a tool or skill on its own, the surest one decides, and
    /// its words fill the arguments. A story with the request at its end ("… the audit is next
    /// week. Find the reconciliation report in my documents") is then read for its request.
    /// Omitted: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2))]
    pub sentences_from: Option<usize>,
    /// How sure (0 to 1) one sentence of such a long message must be to open a skill on its
    /// own: a complaint inside a story of a hard night («hands shaking, I just needed to tell
    /// someone») is part of the story, not a request for the health interview. Omitted: as
    /// sure as any sentence that decides (the router's threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub sentence_skill_threshold: Option<f32>,
    /// Each pair of neighbouring words is a feature of the classifier too, each word cut to
    /// its first this many letters, so a pair survives the words' endings: the same words in
    /// another order or another company («is it worth it» against «what is it worth») weigh
    /// differently. Omitted: each word alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 32))]
    pub word_pairs: Option<usize>,
}

impl Default for EmbeddedRouter {
    fn default() -> Self {
        Self {
            threshold: default_embedded_threshold(),
            margin: default_embedded_margin(),
            chat_examples: Vec::new(),
            context: Vec::new(),
            split: None,
            frames: Vec::new(),
            confusable: None,
            typos_from: default_typos_from(),
            sentences_from: None,
            sentence_skill_threshold: None,
            word_pairs: None,
        }
    }
}

fn default_typos_from() -> Option<usize> {
    Some(5)
}

fn default_embedded_threshold() -> f32 {
    0.3
}
fn default_embedded_margin() -> f32 {
    0.05
}

/// A way of putting a message, recognised by patterns over the normalised message.
///
/// ```yaml
/// frames:
///   - id: polite-request
///     kind: request
///     description: «could you draw a cat?» asks for a drawing, not about an ability.
///     patterns: ['^(?:could|can) you (?:please )?']
///   - id: question-about
///     kind: question
///     description: «why does …», «what is …»: a question for the chat model.
///     patterns: ['^(?:why|what is)\b']
///     unless: ['\b(?:show|find)\b']
///     boost_chat: 3
/// ```
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Frame {
    /// Unique id, named in the trace.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// Why this frame.
    pub description: String,
    /// What the frame says about the message.
    pub kind: FrameKind,
    /// Regular expressions over the normalised message; the first match is the frame.
    #[schemars(length(min = 1))]
    pub patterns: Vec<String>,
    /// Regular expressions that cancel the frame when one matches too (a question frame with
    /// a request verb is a request).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unless: Vec<String>,
    /// The score added to "no tool": for a question frame, above 0 (3 nearly decides); for a
    /// request frame, 0 or below it (the message asks for something to be done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost_chat: Option<f32>,
    /// For a question frame: the same score added to the auto skills too («how do I squat
    /// right?» is the trainer's interview, not a tool).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub also_skills: bool,
    /// For a question frame: the score added to the auto skills, when it should differ from
    /// `boost_chat` (a weaker lean keeps «how do I write a good prompt?» out of a skill whose
    /// words it shares, while «how do I squat right?» still reaches the trainer). Omitted: the
    /// same as `boost_chat` with `also_skills`, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boost_skills: Option<f32>,
}

/// What a frame says about the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FrameKind {
    /// A request in question form: the matched words are taken out, and the rest is read as
    /// the request it is.
    Request,
    /// A question about a topic: the plain chat answer is made likelier by `boost_chat`.
    Question,
    /// Words the user dictates: the text to voice, a letter's or a post's wording, a name in
    /// quotes (the group named `quote`, else the whole match). When the message read whole
    /// asks for no tool, it is read again without them: what to say is not what to do. When
    /// that reading is sure of a tool or skill, it decides; the arguments are still filled
    /// from the whole message.
    Quote,
    /// Words that say nothing about the request: a speaker's fillers («well», «you know») in
    /// dictated text. Every match (the group named `filler`, else the whole match) is left out
    /// of what the classifier reads, wherever it stands; the arguments still see it.
    Filler,
}

/// Pairs of tools the embedded router does not choose between on its own.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Torn {
    /// Which confusions these are (the article's «four kinds of numbers», …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// No tool when the partner's probability is at least this share of the best's (0 to 1).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub ratio: f32,
    /// The pairs, by tool id (order does not matter).
    #[schemars(length(min = 1))]
    pub pairs: Vec<[String; 2]>,
}

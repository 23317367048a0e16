//! What a rule file says, as plain serde data. These types *are* the schema: `schemas/rules.schema.json`
//! is generated from them (`turnout schema`), so every doc comment here is what a product manager
//! sees in an editor tooltip. Nothing here is compiled or cached; see `compile` for that.
//!
//! A rules directory holds several YAML files; each may carry any of the sections below, and the
//! loader merges them into one model (lists are concatenated, `router` and `search` may appear once).

mod condition;
pub mod extract;
pub mod schema;
pub mod testcase;

pub use condition::{ArgumentMatch, AttachmentMatch, Condition, SkillMatch};
pub use extract::{
    ContextRule, ContextValue, EmbeddedRouter, Extraction, Frame, FrameKind, Split, Torn,
};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One rule file. Every section is optional; a directory's files are merged.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "turnout rule file")]
pub struct RuleFile {
    /// The tools the router may call, with the argument schema the model's answer is checked against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// Skills: conversation modes that interview the user (a badge over the input while active).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<Skill>,
    /// Named word lists (stems) and regex patterns that conditions refer to with `mentions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub word_lists: Vec<WordList>,
    /// Rules tried before the model, in order; the first whose `when` holds settles the message
    /// and the model is not called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_rules: Vec<PreRule>,
    /// Settings of the router model call and the notes its prompt is built from (once per directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<Router>,
    /// The web search detector (once per directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<Search>,
    /// Post-guards: each may veto a tool call the model chose. Applied to every call, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<Guard>,
    /// How messages and word lists are normalised before matching (once per directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matching: Option<Matching>,
    /// Outside services the user connects (an account, a workspace), and the tools that work on
    /// them. Every tool listed must be offered only while its integration is connected: its
    /// `available_when` must require `integration: ID`. Once any integration is declared, an
    /// `integration:` condition must name a declared one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integrations: Vec<Integration>,
}

/// An outside service the user connects, and the tools that only work while it is connected.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Integration {
    /// Unique id: the value clients send in the request's `integrations` and conditions test
    /// with `integration: ID`.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// What the user connects, and what the listed tools do with it.
    pub description: String,
    /// The tools that need it. Each must have `available_when` requiring `integration: ID`
    /// (alone, or inside an `all`), so the model is never offered a tool that cannot work.
    pub tools: Vec<String>,
}

/// Text normalisation shared by messages and word lists. Text is always lower-cased first.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Matching {
    /// Why these folds exist.
    pub description: String,
    /// Characters treated as another after lower-casing, one character each (e.g. a letter
    /// that people write two ways). The first must not be ASCII (ASCII is only lower-cased).
    #[serde(default)]
    #[schemars(schema_with = "folds_schema")]
    pub folds: std::collections::BTreeMap<String, String>,
    /// Compose a letter typed as a base and a combining mark into one (Unicode NFC: `é` typed
    /// as `e` + an acute accent), and drop marks that compose with nothing (stress accents).
    #[serde(default)]
    pub compose: bool,
    /// Remove invisible format characters (zero-width joiners, soft hyphens, byte-order
    /// marks); a zero-width space counts as a space.
    #[serde(default)]
    pub strip_invisible: bool,
    /// Letters that look alike in two scripts, after lower-casing, one character each: in a
    /// word written mostly in one script, a look-alike of the other is read as its twin.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    #[schemars(schema_with = "folds_schema")]
    pub look_alikes: std::collections::BTreeMap<String, String>,
    /// How many letters at the end of each word of the open file's name may differ when a
    /// message names it, so inflected forms count (with two, `Budgets.xlsx` is named by
    /// "in the budget"). The
    /// extension is never needed. Default 0.
    #[serde(default)]
    #[schemars(range(max = 4))]
    pub file_name_endings: usize,
    /// Messages typed in another script (Russian in Latin letters on a phone with a foreign
    /// keyboard): in a message whose letters are mostly the table's, each word written wholly
    /// in them is read through the table, so every list, the file-name match and the router
    /// see the reading. Entries are never transliterated; a word some list writes in that
    /// script (`gmail`) stays as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transliterate: Option<TransliterateTable>,
    /// The endings the language allows after a stem. When given, a `words` entry matches its
    /// word in its forms — the stem and one of these endings, or none — and not every word
    /// that starts with it (`book` matches "books", "booked", not "bookkeeper"). End a word
    /// with `*` for any word that starts with it, with `$` for the word itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub word_endings: Option<Vec<String>>,
    /// Particles that a hyphen joins to the word before it into another word, so that an
    /// entry for that word alone does not match the pair: with `[ever]`, "who-ever" is no
    /// `who$`. A particle written with a hyphen after it joins the word after it: with
    /// `[some-]`, "some-where" is no `where$`. The hyphen reads as `_`; a pattern writes the
    /// pair as `who_ever` or `who[-_]ever`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joined_particles: Vec<String>,
    /// Typo tolerance for every word list: a stem of `from` letters or more also matches a
    /// word with one letter wrong, missing or extra, or two neighbours swapped ("dolar",
    /// "calender"), and in such a list two words glued or split one letter off ("howmuch").
    /// A list says `typos: false` to opt out, or `typos_from: N` for lengths of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typos: Option<Typos>,
}

/// `matching.typos`: typo tolerance by default, for every word list.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Typos {
    /// Why, and what was measured to choose the lengths.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Stems of at least this many letters match a word with one typo, in every list that
    /// does not opt out (`typos: false`) or set its own `typos_from`.
    #[schemars(range(min = 4, max = 40))]
    pub from: usize,
    /// From this many letters (and `from`), the typo may also be the first letter: a wrong,
    /// missing or extra first letter, or the first two swapped ("alendar" for `calendar`).
    /// Default 6; shorter stems with another first letter are too often other words.
    #[serde(default = "Typos::default_first_letter_from")]
    #[schemars(range(min = 4, max = 40))]
    pub first_letter_from: usize,
    /// Real words that are never read as a typo of a stem, each as written (list the forms you
    /// mean; an item may hold several words separated by spaces): the common words one letter
    /// away from a stem of some list ("stoat" for `stop`, "better" for `bitter`). Every word of
    /// every entry is known too, in its forms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_words: Vec<String>,
    /// Which letter a slip may put in place of another, for the embedded router's reading of
    /// slips (`router.embedded.typos_from`): a word one letter-for-letter edit from an
    /// example's word is read as it only when the two letters are keyboard neighbours or sound
    /// alike. Without it, any letter may stand for any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slips: Option<SlipLetters>,
}

/// `matching.typos.slips`: the letters a slip of typing puts for one another.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlipLetters {
    /// Why these letters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Keyboards, each its letter rows top to bottom, each row left to right. Letters beside
    /// each other on a row are neighbours, and so is a letter with the two of the row below
    /// that it touches (each row starts half a key to the right of the one above: letter `k`
    /// of a row touches letters `k - 1` and `k` of the row below).
    #[schemars(length(min = 1))]
    pub keyboards: Vec<Vec<String>>,
    /// Groups of letters that sound alike (or that people confuse in writing), e.g. `ao`:
    /// every two letters of a group may stand for each other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sound_alike: Vec<String>,
}

impl Typos {
    /// The first letter may be the typo from this many letters when nothing says otherwise.
    pub fn default_first_letter_from() -> usize {
        6
    }
}

/// `matching.transliterate`: how words of another script read.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransliterateTable {
    /// Sequences of the other script and what each reads as, e.g. `{ps: ψ, p: π, s: σ}`;
    /// the longest sequence that fits is read first. A sequence ending in `$` is read only at
    /// the end of a word (`s$: ς`).
    #[schemars(length(min = 1))]
    pub table: std::collections::BTreeMap<String, String>,
    /// Words that stay as written (brand names, English words people type in Latin letters):
    /// a word equal to one, or starting with one of three letters or more. Words the word
    /// lists write in the table's script are kept without being listed here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
    /// Whole words read as other words in every message, also one written in the rules' own
    /// script: loanwords typed in the table's script (an English «generate» or «article» inside
    /// a Russian sentence), each read as the word the lists and the examples use. A word may
    /// also be written in the rules' own script (an English word spelt in Cyrillic letters),
    /// lower-case, as the normalised message has it. A word's other forms are entries of their
    /// own.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub words: std::collections::BTreeMap<String, String>,
}

/// A tool in the registry.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// Unique id, as the model calls it (`a-z`, digits and `_`).
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub id: String,
    /// What the tool does; the model reads this when choosing.
    pub description: String,
    /// The short line the client shows while the tool works.
    pub chip: String,
    /// Consequential action (publishing, sending): the decision marks the call `confirm: true`
    /// and the user confirms it with a button.
    #[serde(default, skip_serializing_if = "is_false")]
    pub confirm: bool,
    /// The tool does something the user cannot take back: it publishes, sends, deletes, shares
    /// or changes settings on the user's behalf. Such a tool must also have `confirm: true`;
    /// the rules are refused otherwise. Write it so the reason for `confirm` is on record and a
    /// later edit cannot quietly drop the confirmation.
    #[serde(default, skip_serializing_if = "is_false")]
    pub consequential: bool,
    /// The tool is offered to the model and accepted from it only while this holds
    /// (e.g. `{integration: google}`). Omitted: always available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_when: Option<Condition>,
    /// JSON Schema of the call's arguments (an object schema). Omitted: no arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Map<String, Value>")]
    pub arguments: Option<Value>,
    /// Example user messages that should lead to this tool (used by the embedded offline router).
    /// For the router's `skill_tool`: messages that leave the active skill (each skill lists the
    /// messages that switch it on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// How the embedded offline router fills arguments from the message, by argument name
    /// (see [`Extraction`]). Each name must be a property of `arguments`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub extract: std::collections::BTreeMap<String, Extraction>,
}

/// A skill: a conversation mode.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Skill {
    /// Unique id, the value of the skill switch tool's argument.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub id: String,
    /// What the skill is for, and why it is (or is not) switched on automatically.
    pub description: String,
    /// The badge the client shows over the input while the skill is active.
    pub badge: String,
    /// Whether the router may switch this skill on by itself. A skill with `auto: false` is only
    /// switched on by the user's button.
    pub auto: bool,
    /// Example user messages that should switch this skill on (used by the embedded offline router).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// A named list of word stems and regex patterns. Matching is case-insensitive and applies the
/// `matching.folds` of the rules.
///
/// A `words` entry is one or more words separated by spaces. Each word is a stem: with
/// `matching.word_endings` it matches its word in its forms (the stem and one of the endings:
/// `mail` matches `mails`, not `mailbox`); without, every word that starts with it. End a word
/// with `*` for any word that starts with it (`mail*` matches `mailbox`), with `$` to make it
/// whole (`post$` matches `post` but not `posts`). Between the words of an
/// entry the message may have any run of spaces, hyphens or dashes (`top 10` matches `top-10`).
/// An entry starting with a letter or digit only matches at the start of a word.
///
/// A `patterns` entry is a regular expression (Rust `regex` syntax) run on the normalised
/// (lower-cased, folded) message; `\b` is Unicode-aware.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("anyOf" = [{"required": ["words"]}, {"required": ["patterns"]}]))]
pub struct WordList {
    /// Unique id, referred to by `mentions`.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub id: String,
    /// What the list catches and which complaint it answers.
    pub description: String,
    /// Word stems and phrases of stems.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1), inner(length(min = 1)))]
    pub words: Vec<String>,
    /// Regular expressions, for what stems cannot say (digits, optional parts); at most 1,000
    /// characters each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1), inner(length(min = 1)))]
    pub patterns: Vec<String>,
    /// How many other words a `…` between two words of an entry allows (default 2):
    /// `how … cost` then matches "how much does it cost".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 6))]
    pub gap: Option<usize>,
    /// `false`: no typo tolerance in this list, whatever `matching.typos` says (short words
    /// whose one-letter neighbours are common words, markers that must not fire by accident).
    /// Omitted: the list follows `matching.typos`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typos: Option<bool>,
    /// Stems with at least this many letters also match a word with one typo (a letter wrong,
    /// missing, extra, or two swapped; the first letter only from
    /// `matching.typos.first_letter_from` letters), instead of `matching.typos.from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4, max = 40))]
    pub typos_from: Option<usize>,
    /// A match right after a word of another list (e.g. "not", "never") does not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negated_by: Option<Negation>,
}

/// Which list negates a match, and how close it must stand.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Negation {
    /// The id of the word list holding the negations.
    pub list: String,
    /// How many words may stand between the negation and the match (default 1: "do not delete",
    /// "not to delete").
    #[serde(default = "default_within")]
    #[schemars(range(max = 5))]
    pub within: usize,
}

fn default_within() -> usize {
    1
}

/// A rule tried before the model.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreRule {
    /// Unique id, shown in the decision's trace.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// Which complaint this rule answers.
    pub description: String,
    /// When the rule fires.
    pub when: Condition,
    /// What the message becomes when it fires.
    pub then: Action,
}

/// What a pre-rule does with the message.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// The reply goes to a skill: `active` (the skill the chat is in) or a skill id.
    Skill(String),
    /// These tool calls, in execution order. String arguments may contain `{message}` (the user's
    /// message) and `{open_file}` (the name of the open file).
    Calls(Vec<CallTemplate>),
}

/// A tool call written in a rule.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallTemplate {
    /// The tool's id.
    pub tool: String,
    /// The call's arguments; string values may contain `{message}` and `{open_file}`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
}

/// The router model call.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Router {
    /// How many of the last messages the model sees.
    #[serde(default = "default_history")]
    #[schemars(range(min = 1))]
    pub history: usize,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: f32,
    /// Longest answer, in tokens.
    #[serde(default = "default_max_tokens")]
    #[schemars(range(min = 1))]
    pub max_tokens: u32,
    /// How long to wait for the model, in milliseconds (1 to 600000); past it the message gets
    /// a plain answer.
    #[serde(default = "default_timeout_ms")]
    #[schemars(range(min = 1, max = 600_000))]
    pub timeout_ms: u64,
    /// Most tool calls accepted from one answer; more and the whole answer is discarded.
    #[serde(default = "default_max_calls")]
    #[schemars(range(min = 1))]
    pub max_calls: usize,
    /// The tool whose call switches a skill on or off (its argument `skill_argument` holds the id).
    pub skill_tool: String,
    /// The argument of `skill_tool` that names the skill.
    pub skill_argument: String,
    /// The value of `skill_argument` that leaves the active skill.
    pub leave_skill_value: String,
    /// General instructions of the router prompt (e.g. the ambiguity rule), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions: Vec<Note>,
    /// Disambiguation notes: "X and Y are different tools".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// The router model used when the command line names none: `embedded` (the default:
    /// offline, no key), `none` (rules only), `openai:MODEL[@BASE_URL]`,
    /// `anthropic:MODEL[@BASE_URL]` or `script:FILE`. `--model` on the command line wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^(none|embedded|script:.+|openai:.+|anthropic:.+)$"))]
    pub model: Option<String>,
    /// Retries of a model call refused for its rate limit (HTTP 429) or failed by the server
    /// (5xx): 0 (the default: the user is waiting) or 1, and only while the timeout leaves time.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(max = 1))]
    pub retries: u32,
    /// The embedded offline router: a classifier over the `examples` of tools and skills (not
    /// a language model). Omitted: the defaults below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded: Option<EmbeddedRouter>,
}

/// A piece of the router prompt.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// Unique id.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// Which confusion or complaint this note answers.
    pub description: String,
    /// The text the model reads.
    pub text: String,
}

/// The web search detector. Its verdict is OR-ed with the model's choice of `tool`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Search {
    /// The tool the model calls to ask for web search; such a call sets `web_search` on the
    /// decision instead of appearing in `calls`.
    pub tool: String,
    /// While this holds, web search is off whatever the toggle, the model or the rules say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_when: Option<Condition>,
    /// Each rule switches web search on when its `when` holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<SearchRule>,
}

/// A rule of the search detector.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRule {
    /// Unique id, shown in the trace.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// Which complaint this rule answers.
    pub description: String,
    /// When web search goes on.
    pub when: Condition,
}

/// A post-guard: vetoes a call the model (or a pre-rule) chose.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Guard {
    /// Unique id, shown in the trace.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub id: String,
    /// The real complaint this guard was added after.
    pub description: String,
    /// The tools it watches. Omitted: every tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The call is dropped when this holds.
    pub drop_when: Condition,
}

/// `folds`: one character to one character, the first not ASCII.
fn folds_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "propertyNames": {"minLength": 1, "maxLength": 1, "pattern": "^[^\\x00-\\x7F]$"},
        "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 1}
    })
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero(n: &u32) -> bool {
    *n == 0
}
fn default_history() -> usize {
    6
}
fn default_max_tokens() -> u32 {
    500
}
fn default_timeout_ms() -> u64 {
    15_000
}
fn default_max_calls() -> usize {
    2
}

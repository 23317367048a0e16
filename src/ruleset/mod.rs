//! The compiled ruleset: ids resolved to indices, word lists built into matchers, argument
//! schemas compiled, rules filed by the lists that gate them (`index`), and the arguments'
//! extraction at request time (`extract`). This is the form the engine and the models read.
//! Only the compiler (`compile::load_dir`) makes one, so holding a `RuleSet` means
//! every check passed; nothing here imports the compiler or the YAML front end.

pub mod extract;
pub(crate) mod index;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::contract::GenerationMode;
use crate::diag::Location;
use crate::text::{ListOptions, Normalizer, Scanner};

/// A ruleset ready to route messages.
#[derive(Debug)]
pub struct RuleSet {
    /// A hash of the rule files' content; it appears in every decision.
    pub version: Arc<str>,
    /// The rule files it was built from, in load order.
    pub files: Vec<PathBuf>,
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) tool_ids: HashMap<String, usize>,
    pub(crate) skills: Vec<SkillDef>,
    pub(crate) skill_ids: HashMap<String, usize>,
    pub(crate) lists: Vec<ListDef>,
    /// Every list, matched in one pass.
    pub(crate) scanner: Scanner,
    pub(crate) pre_rules: Vec<PreRuleDef>,
    pub(crate) router: RouterDef,
    pub(crate) search: Option<SearchDef>,
    pub(crate) guards: Vec<GuardDef>,
    /// For each tool, the guards that watch it, in order.
    pub(crate) guards_by_tool: Vec<Vec<usize>>,
    /// Pre-rules and search rules filed by the lists that gate them.
    pub(crate) pre_index: index::RuleIndex,
    pub(crate) search_index: index::RuleIndex,
    /// For each guard, the lists of which one must match for it to veto (`None`: any message).
    pub(crate) guard_gates: Vec<Option<Box<[usize]>>>,
    /// How messages are normalised before matching.
    pub normalizer: Normalizer,
    /// The integrations the rules declare.
    pub(crate) integrations: Vec<Arc<str>>,
}

impl RuleSet {
    /// Every tool of the registry.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// A tool by id.
    pub fn tool(&self, id: &str) -> Option<&ToolDef> {
        self.tool_ids.get(id).map(|&i| &self.tools[i])
    }

    /// Every skill.
    pub fn skills(&self) -> &[SkillDef] {
        &self.skills
    }

    /// A skill by id.
    pub fn skill(&self, id: &str) -> Option<&SkillDef> {
        self.skill_ids.get(id).map(|&i| &self.skills[i])
    }

    /// The integrations the rules declare (`integrations:`), in order.
    pub fn integrations(&self) -> Vec<&str> {
        self.integrations.iter().map(|i| &**i).collect()
    }

    /// The router settings and prompt notes.
    pub fn router(&self) -> &RouterDef {
        &self.router
    }

    /// Ids of every rule that can appear in a trace (pre-rules, search rules, guards), in order.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        let search = self
            .search
            .iter()
            .flat_map(|s| s.rules.iter().map(|r| &*r.id));
        self.pre_rules
            .iter()
            .map(|r| &*r.id)
            .chain(search)
            .chain(self.guards.iter().map(|g| &*g.id))
    }
}

/// A tool, compiled.
#[derive(Debug)]
pub struct ToolDef {
    /// Its id.
    pub id: Arc<str>,
    /// What it does (the model reads this).
    pub description: String,
    /// The line the client shows while it works.
    pub chip: Arc<str>,
    /// Calls are marked `confirm: true`.
    pub confirm: bool,
    /// JSON Schema of the arguments, as written.
    pub arguments: Value,
    /// Example messages for the embedded router.
    pub examples: Vec<String>,
    /// How the embedded router fills its arguments from the message (`extract`).
    pub extract: Vec<extract::ArgExtract>,
    pub(crate) validator: jsonschema::Validator,
    /// Where the tool is written.
    pub(crate) at: Location,
    pub(crate) available_when: Option<Cond>,
    /// Where its `available_when` is written.
    pub(crate) available_when_at: Option<Location>,
}

/// A skill.
#[derive(Debug)]
pub struct SkillDef {
    /// Its id.
    pub id: Arc<str>,
    /// What it is for.
    pub description: String,
    /// The badge shown while active.
    pub badge: Arc<str>,
    /// Whether the router may switch it on.
    pub auto: bool,
    /// Example messages for the embedded router.
    pub examples: Vec<String>,
}

/// A word list, compiled.
#[derive(Debug)]
pub(crate) struct ListDef {
    pub id: Arc<str>,
    /// Its patterns, compiled (`None` for one that does not compile).
    pub patterns: Vec<Option<crate::text::ListPattern>>,
    pub options: ListOptions,
    /// `words` then `patterns`, as written, for the trace.
    pub entries: Vec<String>,
    /// How many of `entries` are words (the rest are patterns).
    pub words: usize,
    /// Where the list is written (its id), and each entry.
    pub at: Location,
    pub entry_at: Vec<Location>,
}

#[derive(Debug)]
pub(crate) struct PreRuleDef {
    pub id: Arc<str>,
    pub when: Cond,
    pub action: ActionDef,
    pub at: Location,
}

#[derive(Debug)]
pub(crate) enum ActionDef {
    /// `None`: the active skill.
    Skill(Option<usize>),
    Calls(Vec<CallTemplateDef>),
}

#[derive(Debug)]
pub(crate) struct CallTemplateDef {
    pub tool: usize,
    pub arguments: Vec<(String, ArgTemplate)>,
}

#[derive(Debug)]
pub(crate) enum ArgTemplate {
    Value(Value),
    Text(Vec<TemplatePart>),
    /// `"{extract}"`: filled as the tool's `extract` says for this argument.
    Extract,
}

#[derive(Debug)]
pub(crate) enum TemplatePart {
    Literal(String),
    Message,
    OpenFile,
}

/// The router call's settings and prompt, compiled.
#[derive(Debug)]
pub struct RouterDef {
    /// How many of the last messages the model sees.
    pub history: usize,
    /// Sampling temperature.
    pub temperature: f32,
    /// Longest answer, in tokens.
    pub max_tokens: u32,
    /// How long to wait for the model.
    pub timeout: std::time::Duration,
    /// Most calls accepted from one answer.
    pub max_calls: usize,
    /// The tool that switches skills.
    pub skill_tool: Arc<str>,
    /// Its argument naming the skill.
    pub skill_argument: String,
    /// The value that leaves the active skill.
    pub leave_skill_value: String,
    /// General prompt instructions, in order.
    pub instructions: Vec<String>,
    /// Disambiguation notes, in order.
    pub notes: Vec<String>,
    /// The model the rules ask for when the command line names none.
    pub model: Option<crate::contract::ModelSpec>,
    /// Where `model` is written, for findings about it.
    pub model_at: Option<crate::diag::Location>,
    /// Retries on HTTP 429 or 5xx within the timeout: 0 or 1.
    pub retries: u32,
    /// The embedded router's settings.
    pub embedded: EmbeddedDef,
    pub(crate) skill_tool_idx: usize,
}

/// The embedded offline router's settings (see [`crate::rules::EmbeddedRouter`]).
#[derive(Debug, Clone)]
pub struct EmbeddedDef {
    /// The lowest score at which a tool is called.
    pub threshold: f32,
    /// How far the best score must be ahead of the second.
    pub margin: f32,
    /// Messages that need no tool.
    pub chat_examples: Vec<String>,
    /// Context rules, in order.
    pub context: Vec<ContextRuleDef>,
    /// Where a message may be cut into two parts (normalised), longest first.
    pub connectives: Vec<String>,
    /// All `connectives` in one automaton: a message is searched once, not once per
    /// connective (`None` when there are none).
    pub connective_finder: Option<aho_corasick::AhoCorasick>,
    /// Frames (requests in question form, questions about a topic), in order.
    pub frames: Vec<FrameDef>,
    /// The gates of every frame's patterns, in order, in one automaton (`None`: each
    /// pattern's own gate is asked).
    pub(crate) frame_gates: Option<crate::text::Gates>,
    /// Confusable tool pairs, by tool index.
    pub torn: Vec<(usize, usize)>,
    /// The share of the best tool's probability at which its partner makes the router ask
    /// back.
    pub torn_ratio: f32,
    /// `router.embedded.typos_from`: from how many letters an unknown word one slip from a
    /// word of the examples is read as it (`None`: never).
    pub typos_from: Option<usize>,
    /// `router.embedded.sentences_from`: from how many words a message no tool was chosen for
    /// is read sentence by sentence (`None`: never).
    pub sentences_from: Option<usize>,
    /// `router.embedded.sentence_skill_threshold`: how sure one sentence must be to open a
    /// skill (`None`: as any sentence).
    pub sentence_skill_threshold: Option<f32>,
    /// `router.embedded.word_pairs`: the letters of each word in a word-pair feature (`None`:
    /// no pairs).
    pub word_pairs: Option<usize>,
}

/// A frame of the embedded router, compiled (see [`crate::rules::Frame`]).
#[derive(Debug, Clone)]
pub struct FrameDef {
    /// Its id, for the trace.
    pub id: Arc<str>,
    /// Request or question.
    pub kind: crate::rules::FrameKind,
    /// Any of these matching is the frame.
    pub patterns: Vec<regex::Regex>,
    /// Each pattern's gate (see `crate::text::gate`), asked first: where it does not match,
    /// the pattern does not either (`None`: the pattern runs alone). Empty when all the
    /// frames' gates are asked in one pass ([`EmbeddedDef::frame_gates`]).
    pub(crate) gates: Vec<Option<regex_automata::meta::Regex>>,
    /// Any of these matching cancels it.
    pub unless: Vec<regex::Regex>,
    /// Added to the no-tool score (question frames).
    pub boost_chat: f32,
    /// Added to the auto skills' scores (question frames; `boost_chat` with `also_skills`).
    pub boost_skills: f32,
}

/// A context rule of the embedded router, compiled.
#[derive(Debug, Clone)]
pub struct ContextRuleDef {
    /// Its id, for the trace.
    pub id: Arc<str>,
    /// When it applies (evaluated by the engine).
    pub(crate) when: Cond,
    /// Score added to tools, by tool index.
    pub boost: Vec<(usize, f32)>,
    /// Score added to skills, by skill id.
    pub boost_skills: Vec<(Arc<str>, f32)>,
    /// Tools not chosen while it applies, by tool index.
    pub rule_out: Vec<usize>,
    /// When one of `rule_out` would have been the best class, no tool is called.
    pub ask_back: bool,
    /// Score added to the no-tool class.
    pub boost_chat: f32,
    /// Weight of the assistant's previous message's words (0: not read).
    pub previous_message: f32,
    /// Evaluated within each part of a compound request rather than once for the whole.
    pub per_part: bool,
    /// A tool called before the router's choice when that is one of these (tool indices).
    pub first: Option<(usize, Vec<usize>)>,
}

impl ContextRuleDef {
    /// Whether reading the assistant's previous message is all the rule does.
    pub fn only_reads_previous(&self) -> bool {
        self.previous_message > 0.0
            && self.boost.is_empty()
            && self.boost_skills.is_empty()
            && self.rule_out.is_empty()
            && self.boost_chat == 0.0
    }
}

#[derive(Debug)]
pub(crate) struct SearchDef {
    pub tool: usize,
    pub off_when: Option<Cond>,
    pub off_when_at: Option<Location>,
    pub rules: Vec<SearchRuleDef>,
}

#[derive(Debug)]
pub(crate) struct SearchRuleDef {
    pub id: Arc<str>,
    pub when: Cond,
    pub at: Location,
}

#[derive(Debug)]
pub(crate) struct GuardDef {
    pub id: Arc<str>,
    pub drop_when: Cond,
    pub at: Location,
    /// The tools its `tools:` lists, as written, with where.
    pub listed: Vec<(String, Location)>,
}

/// A compiled condition; see [`crate::rules::Condition`] for the meaning of each.
#[derive(Debug, Clone)]
pub(crate) enum Cond {
    All(Vec<Cond>),
    Any(Vec<Cond>),
    Not(Box<Cond>),
    LongerThan(usize),
    ShorterThan(usize),
    FewerWordsThan(usize),
    Mentions(usize),
    SkillActive(SkillIs),
    AssistantAsked(bool),
    DraftShown(bool),
    /// `None`: any mode.
    GenerationMode(Option<GenerationMode>),
    Attachment {
        kind: String,
        face: Option<bool>,
    },
    UiMode(String),
    FileOpen(bool),
    OpenFileNamed(bool),
    Integration(String),
    SearchToggle(bool),
    Argument {
        name: String,
        one_of: Vec<Value>,
    },
    ArgumentInMessage(String),
    RepeatsSuccessfulCall(bool),
    /// Stands in for a condition that failed to compile; the ruleset is never built then.
    Invalid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkillIs {
    Any,
    None,
    Id(usize),
}

impl Cond {
    /// A rough cost, so `all`/`any` try cheap checks before scanning the text.
    pub fn cost(&self) -> u32 {
        match self {
            Cond::All(v) | Cond::Any(v) => v.iter().map(Cond::cost).sum(),
            Cond::Not(c) => c.cost(),
            Cond::Mentions(_) | Cond::OpenFileNamed(_) | Cond::ArgumentInMessage(_) => 20,
            Cond::RepeatsSuccessfulCall(_) | Cond::Argument { .. } => 5,
            _ => 1,
        }
    }

    /// Lists of which at least one must match for the condition to hold; `None` when it can
    /// hold without any (it is then always evaluated). What [`RuleIndex`](index::RuleIndex)
    /// files a rule by.
    pub(crate) fn gate(&self) -> Option<Vec<usize>> {
        match self {
            Cond::Mentions(l) => Some(vec![*l]),
            // Any part that needs a list makes the whole need it; the narrowest is best.
            Cond::All(parts) => parts.iter().filter_map(Cond::gate).min_by_key(Vec::len),
            // Every part must need one; then any of them will do.
            Cond::Any(parts) => {
                let mut lists = Vec::new();
                for p in parts {
                    lists.extend(p.gate()?);
                }
                lists.sort_unstable();
                lists.dedup();
                Some(lists)
            }
            _ => None,
        }
    }
}

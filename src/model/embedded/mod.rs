//! The embedded offline router: the default model, so that `route` and `serve` work with no key
//! and no network. It is not a language model. It is a small text classifier trained, when a
//! ruleset is first seen, on the example messages the rules give: each tool's `examples`, each
//! auto skill's `examples`, the skill tool's `examples` (messages that leave a skill) and
//! `router.embedded.chat_examples` (messages that need no tool). Product managers improve it by
//! adding examples in YAML.
//!
//! - **Features**: the message normalised by the rules (lower case, folds), cut into words;
//!   character 3- to 5-grams of each word with its boundaries (so inflected forms share most
//!   features), each word's first five characters and the whole word; TF-IDF weighted, unit
//!   length.
//! - **Classifier**: multinomial logistic regression trained by SGD, each example visited at a
//!   place keyed by its own text (not its place in the list), so the same rules always give the
//!   same model, and one example more or less barely moves the others' decisions. Served as one
//!   byte per class and feature.
//! - **Decision**: probabilities over the classes possible here (tools offered in this context,
//!   auto skills, leaving the active skill, no tool). The best class is called only when its
//!   probability reaches `router.embedded.threshold` and beats the second by `margin`;
//!   otherwise no tool is called and the chat answer asks back (the ambiguity rule).
//! - **Arguments**: a required argument with a `default` gets it; when a tool's only required
//!   argument is free text (a string without `enum`, `const`, `pattern` or `format`), it gets
//!   the message. Anything else is left missing, and validation turns the call into a chat
//!   answer.
//!
//! The model is trained off the async runtime (`spawn_blocking`) once per ruleset version and
//! cached, so a hot reload gets a new model on its first message; a request then costs a few
//! microseconds.

pub mod calibrate;
mod classifier;
mod features;
mod frames;
mod route;
mod rows;
mod spelling;
mod top;

use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;

use super::{Model, ModelAnswer, ModelError, RouterInput};
use crate::contract::request::assistant_just_before;
use crate::ruleset::{RuleSet, ToolDef};
use crate::text::Normalizer;

pub use classifier::{Classifier, Training};
pub use frames::{Framing, frame};
pub use top::Top;

/// Where a message can go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// Call this tool.
    Tool(Arc<str>),
    /// Switch this skill on.
    Skill(Arc<str>),
    /// Leave the active skill.
    Leave,
    /// No tool: the plain chat answer.
    Chat,
}

/// What the router made of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// The most probable class possible in this context, with its probability.
    pub best: Option<(Target, f32)>,
    /// The second most probable, with its probability.
    pub runner_up: Option<(Target, f32)>,
    /// What the router chose: the best class, or `Chat` when it is not sure enough.
    pub chosen: Target,
    /// The best class's declared confusable partner when it was close enough to ask back
    /// (`router.embedded.confusable`), with its probability.
    pub torn: Option<(Target, f32)>,
    /// A tool that would have been the best but a context rule with `ask_back` rules out, with
    /// that rule's id: no tool, the answer asks for what is missing.
    pub ruled_out: Option<(Target, Arc<str>)>,
}

/// The classes possible for one request ([`Index::allowed`]), once for all its rankings.
struct Allowed {
    /// By class: whether it may be chosen.
    mask: Vec<bool>,
    /// The classes ruled out by a context rule with `ask_back`: when one of them scores above
    /// every allowed class, no tool is called.
    watch: Vec<usize>,
    /// For each of `watch`, the id of the rule that asks back.
    asking: Vec<Arc<str>>,
}

/// How many rulesets' models are kept (the serving one, plus the one before it while requests
/// that started before a reload finish).
const CACHED: usize = 4;

/// A ruleset version and its model, trained once (concurrent first messages wait for it).
type Cached = (Arc<str>, Arc<OnceLock<Arc<Index>>>);

/// The classifier trained last and what it learnt from (the classes, and each example with its
/// class, as written and as read): a reload whose examples are the same (a word list, a guard or
/// a rule edited) takes it instead of training again, which was most of a reload's time.
type Trained = (Vec<Target>, Vec<(usize, String, String)>, Classifier);

/// The embedded router. Cheap to create; it trains when a ruleset is prepared (at load and
/// reload) or, failing that, on the ruleset's first message.
#[derive(Default)]
pub struct EmbeddedModel {
    cache: Mutex<Vec<Cached>>,
    trained: Arc<Mutex<Option<Trained>>>,
    /// How many classifiers were trained ([`EmbeddedModel::classifiers_trained`]).
    trainings: Arc<std::sync::atomic::AtomicUsize>,
}

impl std::fmt::Debug for EmbeddedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedModel").finish_non_exhaustive()
    }
}

impl EmbeddedModel {
    /// A router with nothing trained yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cell holding the index of this ruleset version (empty until trained).
    fn cell(&self, rules: &RuleSet) -> Arc<OnceLock<Arc<Index>>> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match cache.iter().find(|(v, _)| **v == *rules.version) {
            Some((_, cell)) => cell.clone(),
            None => {
                let cell = Arc::new(OnceLock::new());
                cache.insert(0, (rules.version.clone(), cell.clone()));
                cache.truncate(CACHED);
                cell
            }
        }
    }

    /// Trains for these rules now, on this thread, unless already trained. Blocking.
    pub fn train(&self, rules: &RuleSet) {
        let cell = self.cell(rules);
        let last = (&*self.trained, &*self.trainings);
        cell.get_or_init(|| Arc::new(Index::train(TrainingData::from_rules(rules), last)));
    }

    /// How many classifiers this router has trained: a ruleset whose examples are those of the
    /// last one trained (a reload that edited a word list, a guard or a rule) reuses its
    /// classifier and trains none.
    pub fn classifiers_trained(&self) -> usize {
        self.trainings.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the index for these rules is trained.
    pub fn is_trained(&self, rules: &RuleSet) -> bool {
        self.cell(rules).get().is_some()
    }

    /// The trained index for these rules. When it is not trained yet (rules that were never
    /// prepared), training runs on a blocking thread that stores its result whatever happens
    /// to this request: a request cancelled by its timeout does not throw the work away.
    async fn index(&self, rules: &RuleSet) -> Result<Arc<Index>, ModelError> {
        let cell = self.cell(rules);
        if let Some(index) = cell.get() {
            return Ok(index.clone());
        }
        let data = TrainingData::from_rules(rules);
        let (last, count) = (self.trained.clone(), self.trainings.clone());
        tokio::task::spawn_blocking(move || {
            cell.get_or_init(|| Arc::new(Index::train(data, (&last, &count))))
                .clone()
        })
        .await
        .map_err(|e| ModelError::Garbage(format!("the embedded router failed: {e}")))
    }

    /// Ranks the classes possible for this message and says which the router picks.
    pub async fn rank(&self, input: &RouterInput<'_>) -> Result<Ranking, ModelError> {
        Ok(self.index(input.rules).await?.rank(input))
    }
}

#[async_trait]
impl Model for EmbeddedModel {
    fn name(&self) -> &str {
        "embedded"
    }

    fn prepare(&self, rules: &RuleSet) {
        self.train(rules);
    }

    async fn route(&self, input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        let index = self.index(input.rules).await?;
        Ok(route::answer(&index, input))
    }
}

/// What the classifier learns from, taken out of the rules so training can run on another
/// thread.
struct TrainingData {
    normalizer: Normalizer,
    targets: Vec<Target>,
    tool_class: Vec<Option<usize>>,
    examples: Vec<(usize, String)>,
    /// `router.embedded.typos_from`, and the words the lists know (never read as a slip).
    typos_from: Option<usize>,
    known: Option<Arc<crate::text::fuzzy::KnownWords>>,
    /// `router.embedded.word_pairs`, for the classifier's training.
    word_pairs: Option<usize>,
    /// The filler frames: examples are read without their fillers, as messages are.
    fillers: Vec<crate::ruleset::FrameDef>,
}

impl TrainingData {
    /// An example as the classifier reads it: normalised, its fillers blanked.
    fn read(&self, text: &str) -> String {
        frames::without_fillers(&self.fillers, self.normalizer.normalize_message(text))
    }

    fn from_rules(rules: &RuleSet) -> Self {
        let router = rules.router();
        let mut targets = Vec::new();
        let mut examples = Vec::new();
        let mut add = |target: Target, texts: &[String]| {
            if texts.is_empty() {
                return None;
            }
            let t = targets.len();
            targets.push(target);
            examples.extend(texts.iter().map(|e| (t, e.clone())));
            Some(t)
        };
        let mut tool_class = Vec::new();
        for tool in rules.tools() {
            tool_class.push(if *tool.id == *router.skill_tool {
                add(Target::Leave, &tool.examples)
            } else {
                add(Target::Tool(tool.id.clone()), &tool.examples)
            });
        }
        for skill in rules.skills().iter().filter(|s| s.auto) {
            add(Target::Skill(skill.id.clone()), &skill.examples);
        }
        add(Target::Chat, &router.embedded.chat_examples);
        Self {
            normalizer: rules.normalizer.clone(),
            targets,
            tool_class,
            examples,
            typos_from: router.embedded.typos_from,
            word_pairs: router.embedded.word_pairs,
            fillers: (router.embedded.frames.iter())
                .filter(|f| f.kind == crate::rules::FrameKind::Filler)
                .cloned()
                .collect(),
            known: rules.scanner.known_words(),
        }
    }
}

/// One ruleset's trained router.
struct Index {
    targets: Vec<Target>,
    /// The class of each of the ruleset's tools, by position (`None`: no examples).
    tool_class: Vec<Option<usize>>,
    classifier: Classifier,
}

impl Index {
    /// Trains on `data`, or takes the classifier `last` holds when it learnt from the same
    /// classes and examples as read (and keeps this one there for the next reload).
    fn train(
        data: TrainingData,
        (last, count): (&Mutex<Option<Trained>>, &std::sync::atomic::AtomicUsize),
    ) -> Self {
        // Normalised once, for the classifier and for the index of slips.
        let normalized: Vec<String> = (data.examples.iter()).map(|(_, e)| data.read(e)).collect();
        // The optimiser orders the examples by their written text: both texts are the key.
        let read: Vec<(usize, String, String)> = (data.examples.iter())
            .zip(&normalized)
            .map(|((t, e), n)| (*t, e.clone(), n.clone()))
            .collect();
        let reused = {
            let last = last.lock().unwrap_or_else(|e| e.into_inner());
            (last.as_ref())
                // The word pairs are a training setting: a reload that changed them trains.
                .filter(|(targets, examples, classifier)| {
                    *targets == data.targets
                        && *examples == read
                        && classifier.word_pairs() == data.word_pairs
                })
                .map(|(_, _, classifier)| classifier.clone())
        };
        let mut classifier = reused.unwrap_or_else(|| {
            let examples: Vec<(usize, &str)> = (data.examples.iter())
                .map(|(t, e)| (*t, e.as_str()))
                .collect();
            let classes = data.targets.len();
            let training = Training {
                word_pairs: data.word_pairs,
                ..Training::default()
            };
            let trained = Classifier::train_normalized(classes, &examples, &normalized, training);
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            *last.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((data.targets.clone(), read, trained.clone()));
            trained
        });
        if let Some(from) = data.typos_from {
            let words = normalized.iter().map(String::as_str);
            let endings = data.normalizer.endings().cloned();
            let slips = data.normalizer.slips().cloned();
            let spelling = spelling::Spelling::new(words, from, data.known, endings, slips);
            classifier.read_slips(spelling);
        }
        Self {
            targets: data.targets,
            tool_class: data.tool_class,
            classifier,
        }
    }

    /// Which classes are possible here: offered tools, auto skills while the skill tool is
    /// offered, leaving only while a skill is active, and chat always; minus the tools a
    /// context rule that holds rules out, which are watched when that rule asks back.
    fn allowed(&self, input: &RouterInput<'_>) -> Allowed {
        let router = input.router;
        let (mut watch, mut asking) = (Vec::new(), Vec::new());
        let mut allowed: Vec<bool> = self
            .targets
            .iter()
            .map(|t| matches!(t, Target::Chat))
            .collect();
        let all = input.rules.tools();
        let mut skill_tool_offered = false;
        for offered in &input.tools {
            // The offered tools are the ruleset's own: their position is their address's.
            let at = position(all, offered);
            if let Some(class) = at.and_then(|i| self.class_of_tool(i)) {
                allowed[class] = true;
            }
            skill_tool_offered |= *offered.id == *router.skill_tool;
        }
        for (ok, t) in allowed.iter_mut().zip(&self.targets) {
            match t {
                Target::Skill(_) => *ok = skill_tool_offered,
                Target::Leave => *ok = skill_tool_offered && input.skill.is_some(),
                Target::Tool(_) | Target::Chat => {}
            }
        }
        for &rule in &input.context {
            let Some(rule) = router.embedded.context.get(rule) else {
                continue;
            };
            for class in rule.rule_out.iter().filter_map(|&t| self.class_of_tool(t)) {
                allowed[class] = false;
                // Offered or not: a tool available only with a photo is not offered without
                // one, and that is the case the rule is about.
                if rule.ask_back {
                    watch.push(class);
                    asking.push(rule.id.clone());
                }
            }
        }
        Allowed {
            mask: allowed,
            watch,
            asking,
        }
    }

    /// The class of the ruleset's tool at this position.
    fn class_of_tool(&self, tool: usize) -> Option<usize> {
        self.tool_class.get(tool).copied().flatten()
    }

    /// The scores the context rules that hold (and the question frames) add to classes
    /// (empty when none add any).
    fn bias(&self, input: &RouterInput<'_>, framing: &frames::Framing) -> Vec<f32> {
        self.bias_of(input, framing, &input.context)
    }

    /// [`Self::bias`] with the context rules `context` (those that hold for a part).
    fn bias_of(
        &self,
        input: &RouterInput<'_>,
        framing: &frames::Framing,
        context: &[usize],
    ) -> Vec<f32> {
        let rules = &input.router.embedded.context;
        let mut bias = Vec::new();
        let mut previous_weight = 0.0;
        if framing.boost_chat != 0.0 || framing.boost_skills != 0.0 {
            bias = (self.targets.iter())
                .map(|t| match t {
                    Target::Chat => framing.boost_chat,
                    Target::Skill(_) => framing.boost_skills,
                    Target::Tool(_) | Target::Leave => 0.0,
                })
                .collect();
        }
        for rule in context.iter().filter_map(|&r| rules.get(r)) {
            for &(tool, b) in &rule.boost {
                if let Some(class) = self.class_of_tool(tool) {
                    bias.resize(self.targets.len(), 0.0);
                    bias[class] += b;
                }
            }
            for (skill, b) in &rule.boost_skills {
                let wanted = |t: &Target| matches!(t, Target::Skill(s) if s == skill);
                if let Some(class) = self.targets.iter().position(wanted) {
                    bias.resize(self.targets.len(), 0.0);
                    bias[class] += b;
                }
            }
            if rule.boost_chat != 0.0
                && let Some(class) = self.targets.iter().position(|t| *t == Target::Chat)
            {
                bias.resize(self.targets.len(), 0.0);
                bias[class] += rule.boost_chat;
            }
            previous_weight += rule.previous_message.max(0.0);
        }
        // The previous message is read once, at the weights of all the rules that read it.
        if previous_weight > 0.0
            && let Some(previous) = assistant_just_before(input.messages)
        {
            let mut evidence = vec![0.0; self.targets.len()];
            let normalized = input.rules.normalizer.normalize_message(previous);
            self.classifier.evidence(&normalized, &mut evidence);
            bias.resize(self.targets.len(), 0.0);
            for (b, e) in bias.iter_mut().zip(&evidence) {
                *b += previous_weight * e;
            }
        }
        bias
    }

    fn rank(&self, input: &RouterInput<'_>) -> Ranking {
        let allowed = self.allowed(input);
        let normalized = input.normalized_message();
        let framing = frames::frame_message(&input.router.embedded, &normalized);
        let bias = self.bias(input, &framing);
        let reading = frames::blanked(&normalized, &framing.fillers);
        self.rank_text(input, &reading[framing.start..], &allowed, &bias, true)
    }

    /// The confusable pairs as classes.
    fn torn_classes(&self, input: &RouterInput<'_>) -> Vec<(usize, usize)> {
        (input.router.embedded.torn.iter())
            .filter_map(|&(a, b)| Some((self.class_of_tool(a)?, self.class_of_tool(b)?)))
            .collect()
    }

    /// Ranks normalised text (the message or one part of it); `whole`: the whole message, where
    /// a confusable pair asks back (a part of a compound request is read with its other part).
    fn rank_text(
        &self,
        input: &RouterInput<'_>,
        normalized: &str,
        allowed: &Allowed,
        bias: &[f32],
        whole: bool,
    ) -> Ranking {
        let pairs = if whole {
            self.torn_classes(input)
        } else {
            Vec::new()
        };
        let top =
            (self.classifier).top_with(normalized, &allowed.mask, bias, &pairs, &allowed.watch);
        let ruled_out = top.and_then(|(t, _)| t.beaten_by).and_then(|c| {
            let at = allowed.watch.iter().position(|&w| w == c)?;
            Some((self.targets[c].clone(), allowed.asking[at].clone()))
        });
        let best = top.map(|(t, _)| (self.targets[t.best.0].clone(), t.best.1));
        let runner_up = top
            .and_then(|(t, _)| t.runner_up)
            .map(|(c, p)| (self.targets[c].clone(), p));
        let settings = &input.router.embedded;
        let torn = top
            .and_then(|(t, partner)| partner.filter(|p| p.1 >= settings.torn_ratio * t.best.1))
            .map(|(c, p)| (self.targets[c].clone(), p));
        let chosen = match &best {
            Some((target, p1)) => {
                let p2 = runner_up.as_ref().map_or(0.0, |r| r.1);
                let active = input.skill.map(|s| &s.id);
                let stays = matches!(target, Target::Skill(id) if Some(id) == active);
                if *p1 < settings.threshold
                    || p1 - p2 < settings.margin
                    || stays
                    || torn.is_some()
                    || ruled_out.is_some()
                {
                    Target::Chat
                } else {
                    target.clone()
                }
            }
            None => Target::Chat,
        };
        Ranking {
            best,
            runner_up,
            chosen,
            torn,
            ruled_out,
        }
    }
}

/// The position of `tool` in `all`, found from its address (no string comparisons).
fn position(all: &[ToolDef], tool: &ToolDef) -> Option<usize> {
    let size = std::mem::size_of::<ToolDef>().max(1);
    let offset = (tool as *const ToolDef as usize).wrapping_sub(all.as_ptr() as usize);
    let i = offset / size;
    all.get(i).filter(|t| std::ptr::eq(*t, tool)).map(|_| i)
}

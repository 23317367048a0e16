//! The embedded offline router: the default model, so that `route` and `serve` work with no key
//! and no network. It is not a language model. It is a small text classifier trained, when a
//! ruleset is first seen, on the example messages the rules give: each tool's `examples`, each
//! auto skill's `examples`, the skill tool's `examples` (messages that leave a skill) and
//! `router.embedded.chat_examples` (messages that need no tool). Product managers improve it by
//! adding examples in YAML.
//!
//! - **Features**: the message normalised by the rules (lower case, folds), cut into words;
//!   character 3- to 5-grams of each word with its boundaries (so inflected forms share most
//!   features) and each word's first five characters; TF-IDF weighted, unit length.
//! - **Classifier**: multinomial logistic regression trained by SGD in a fixed order, so the same
//!   rules always give the same model and the same answers.
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use super::{Model, ModelAnswer, ModelError, RawCall, RouterInput};
use crate::compile::RuleSet;
use crate::text::Normalizer;

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

/// The classes of one message, best first, with their probabilities.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Every class possible in this context, best first.
    pub scores: Vec<(Target, f32)>,
    /// What the router chose: the best class, or `Chat` when it is not sure enough.
    pub chosen: Target,
}

/// How many rulesets' models are kept (the serving one, plus the one before it while requests
/// that started before a reload finish).
const CACHED: usize = 4;

/// A ruleset version and its model, trained once (concurrent first messages wait for it).
type Cached = (Arc<str>, Arc<OnceCell<Arc<Index>>>);

/// The embedded router. Cheap to create; it trains on the first message of each ruleset.
#[derive(Default)]
pub struct EmbeddedModel {
    cache: Mutex<Vec<Cached>>,
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

    /// The trained index for these rules (trained now, off the runtime, if not cached).
    async fn index(&self, rules: &RuleSet) -> Result<Arc<Index>, ModelError> {
        let cell = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            match cache.iter().find(|(v, _)| **v == *rules.version) {
                Some((_, cell)) => cell.clone(),
                None => {
                    let cell = Arc::new(OnceCell::new());
                    cache.insert(0, (rules.version.clone(), cell.clone()));
                    cache.truncate(CACHED);
                    cell
                }
            }
        };
        let index = cell
            .get_or_try_init(|| {
                let data = TrainingData::from_rules(rules);
                async move {
                    tokio::task::spawn_blocking(move || Arc::new(Index::train(data)))
                        .await
                        .map_err(|e| {
                            ModelError::Garbage(format!("the embedded router failed: {e}"))
                        })
                }
            })
            .await?;
        Ok(index.clone())
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

    async fn route(&self, input: &RouterInput<'_>) -> Result<ModelAnswer, ModelError> {
        let ranking = self.rank(input).await?;
        let router = input.router;
        let skill_call = |value: &str| {
            let mut arguments = Map::new();
            arguments.insert(router.skill_argument.clone(), Value::from(value));
            RawCall {
                tool: router.skill_tool.to_string(),
                arguments: Value::Object(arguments),
            }
        };
        let call = match &ranking.chosen {
            Target::Chat => None,
            Target::Leave => Some(skill_call(&router.leave_skill_value)),
            Target::Skill(id) => Some(skill_call(id)),
            Target::Tool(id) => input.tools.iter().find(|t| *t.id == **id).map(|t| RawCall {
                tool: t.id.to_string(),
                arguments: fill_arguments(&t.arguments, input.message()),
            }),
        };
        Ok(ModelAnswer {
            calls: call.into_iter().collect(),
        })
    }
}

/// The arguments the router can fill by itself (see the module documentation).
fn fill_arguments(schema: &Value, message: &str) -> Value {
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = properties else {
        return Value::Object(arguments);
    };
    let mut free_text = Vec::new();
    for name in &required {
        let Some(p) = properties.get(*name) else {
            continue;
        };
        if let Some(default) = p.get("default") {
            arguments.insert((*name).to_owned(), default.clone());
        } else if p.get("type").and_then(Value::as_str) == Some("string")
            && ["enum", "const", "pattern", "format"]
                .iter()
                .all(|k| p.get(*k).is_none())
        {
            free_text.push(*name);
        }
    }
    let unfilled = required
        .iter()
        .filter(|n| !arguments.contains_key(**n))
        .count();
    if let [name] = free_text[..]
        && unfilled == 1
    {
        arguments.insert(name.to_owned(), Value::from(message.trim()));
    }
    Value::Object(arguments)
}

/// What the classifier learns from, taken out of the rules so training can run on another
/// thread.
struct TrainingData {
    normalizer: Normalizer,
    targets: Vec<Target>,
    examples: Vec<(usize, String)>,
}

impl TrainingData {
    fn from_rules(rules: &RuleSet) -> Self {
        let router = rules.router();
        let mut targets = Vec::new();
        let mut examples = Vec::new();
        let mut add = |target: Target, texts: &[String]| {
            if texts.is_empty() {
                return;
            }
            let t = targets.len();
            targets.push(target);
            examples.extend(texts.iter().map(|e| (t, e.clone())));
        };
        for tool in rules.tools() {
            if *tool.id == *router.skill_tool {
                add(Target::Leave, &tool.examples);
            } else {
                add(Target::Tool(tool.id.clone()), &tool.examples);
            }
        }
        for skill in rules.skills().iter().filter(|s| s.auto) {
            add(Target::Skill(skill.id.clone()), &skill.examples);
        }
        add(Target::Chat, &router.embedded.chat_examples);
        Self {
            normalizer: rules.normalizer.clone(),
            targets,
            examples,
        }
    }
}

/// One ruleset's trained router.
struct Index {
    targets: Vec<Target>,
    classifier: Classifier,
}

impl Index {
    fn train(data: TrainingData) -> Self {
        let examples: Vec<(usize, &str)> = data
            .examples
            .iter()
            .map(|(t, e)| (*t, e.as_str()))
            .collect();
        let classifier = Classifier::train(data.targets.len(), &examples, &data.normalizer);
        Self {
            targets: data.targets,
            classifier,
        }
    }

    fn rank(&self, input: &RouterInput<'_>) -> Ranking {
        let router = input.router;
        let skill_tool_offered = input.tools.iter().any(|t| *t.id == *router.skill_tool);
        let allowed: Vec<bool> = self
            .targets
            .iter()
            .map(|t| match t {
                Target::Tool(id) => input.tools.iter().any(|o| *o.id == **id),
                Target::Skill(_) => skill_tool_offered,
                Target::Leave => skill_tool_offered && input.skill.is_some(),
                Target::Chat => true,
            })
            .collect();
        let probabilities =
            self.classifier
                .probabilities(input.message(), &input.rules.normalizer, &allowed);
        let mut scores: Vec<(Target, f32)> = probabilities
            .into_iter()
            .map(|(t, p)| (self.targets[t].clone(), p))
            .collect();
        scores.sort_by(|a, b| b.1.total_cmp(&a.1));
        let settings = &router.embedded;
        let chosen = match scores.as_slice() {
            [(best, p1), rest @ ..] => {
                let p2 = rest.first().map_or(0.0, |s| s.1);
                let active = input.skill.map(|s| &s.id);
                let stays = matches!(best, Target::Skill(id) if Some(id) == active);
                if *p1 < settings.threshold || p1 - p2 < settings.margin || stays {
                    Target::Chat
                } else {
                    best.clone()
                }
            }
            [] => Target::Chat,
        };
        Ranking { scores, chosen }
    }
}

/// A text classifier: character n-gram TF-IDF features and multinomial logistic regression,
/// trained deterministically. Generic: classes are numbers, texts are any language.
#[derive(Debug, Clone)]
pub struct Classifier {
    classes: usize,
    vocabulary: HashMap<u64, u32>,
    idf: Vec<f32>,
    /// The weight of a feature never seen in training (counts towards the message's length, so
    /// a message of mostly unknown words gets low confidence).
    unseen_idf: f32,
    /// Feature-major: the weights of feature `f` are `weights[f * classes..][..classes]`.
    weights: Vec<f32>,
    bias: Vec<f32>,
}

/// How a [`Classifier`] is trained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Training {
    /// Passes over the examples.
    pub epochs: usize,
    /// The first learning rate; it decays as `rate / (1 + decay * epoch)`.
    pub rate: f32,
    /// How fast the learning rate decays.
    pub decay: f32,
    /// L2 weight decay per step.
    pub l2: f32,
}

impl Default for Training {
    fn default() -> Self {
        // Chosen by 5-fold cross-validation on the shipped pack's examples (tests/models.rs,
        // `tune_the_embedded_router_on_the_examples`); more epochs gained nothing.
        Self {
            epochs: 10,
            rate: 4.0,
            decay: 0.1,
            l2: 1e-5,
        }
    }
}

impl Classifier {
    /// Trains on `(class, text)` pairs; classes are `0..classes`.
    pub fn train(classes: usize, examples: &[(usize, &str)], normalizer: &Normalizer) -> Self {
        Self::train_with(classes, examples, normalizer, Training::default())
    }

    /// Trains with these settings.
    pub fn train_with(
        classes: usize,
        examples: &[(usize, &str)],
        normalizer: &Normalizer,
        training: Training,
    ) -> Self {
        let docs: Vec<Vec<(u64, f32)>> = examples
            .iter()
            .map(|(_, text)| features(&normalizer.normalize(text)))
            .collect();
        let mut vocabulary = HashMap::new();
        let mut df: Vec<u32> = Vec::new();
        for doc in &docs {
            for &(f, _) in doc {
                let next = vocabulary.len() as u32;
                let id = *vocabulary.entry(f).or_insert(next);
                if id as usize == df.len() {
                    df.push(0);
                }
                df[id as usize] += 1;
            }
        }
        let n = examples.len() as f32;
        let idf: Vec<f32> = df
            .iter()
            .map(|&d| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
            .collect();
        let mut model = Self {
            classes,
            vocabulary,
            idf,
            unseen_idf: (1.0 + n).ln() + 1.0,
            weights: Vec::new(),
            bias: vec![0.0; classes],
        };
        model.weights = vec![0.0; model.idf.len() * classes];
        let vectors: Vec<Vec<(usize, f32)>> = docs.iter().map(|d| model.vector(d)).collect();
        let mut order: Vec<usize> = (0..examples.len()).collect();
        let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
        let mut logits = vec![0.0f32; classes];
        let mut step = vec![0.0f32; classes];
        let mut moving: Vec<usize> = Vec::with_capacity(classes);
        let all = vec![true; classes];
        // The weights are averaged over the second half of training, so the answer does not
        // depend on which examples happened to come last (two classes with the same examples
        // end up tied, as they should).
        let mut sum_weights = vec![0.0f32; model.weights.len()];
        let mut sum_bias = vec![0.0f32; classes];
        let mut averaged = 0u32;
        // Plain index loops: this runs in unoptimised test builds too.
        for epoch in 0..training.epochs {
            shuffle(&mut order, &mut rng);
            let rate = training.rate / (1.0 + training.decay * epoch as f32);
            let shrink = rate * training.l2;
            for &i in &order {
                let (class, x) = (examples[i].0, &vectors[i]);
                logits.copy_from_slice(&model.bias);
                for &(f, v) in x {
                    let row = &model.weights[f * classes..(f + 1) * classes];
                    for c in 0..classes {
                        logits[c] += row[c] * v;
                    }
                }
                softmax(&mut logits, &all);
                moving.clear();
                for c in 0..classes {
                    let g = logits[c] - if c == class { 1.0 } else { 0.0 };
                    // Classes already (almost) right for this example are left alone.
                    if g.abs() >= 1e-3 {
                        step[c] = rate * g;
                        model.bias[c] -= step[c];
                        moving.push(c);
                    }
                }
                for &(f, v) in x {
                    let row = &mut model.weights[f * classes..(f + 1) * classes];
                    for &c in &moving {
                        row[c] -= step[c] * v + shrink * row[c];
                    }
                }
            }
            if 2 * epoch >= training.epochs {
                averaged += 1;
                for (s, w) in sum_weights.iter_mut().zip(&model.weights) {
                    *s += w;
                }
                for (s, b) in sum_bias.iter_mut().zip(&model.bias) {
                    *s += b;
                }
            }
        }
        if averaged > 0 {
            let n = averaged as f32;
            model.weights = sum_weights.into_iter().map(|w| w / n).collect();
            model.bias = sum_bias.into_iter().map(|b| b / n).collect();
        }
        model
    }

    /// The probability of each allowed class for `text`, in class order.
    pub fn probabilities(
        &self,
        text: &str,
        normalizer: &Normalizer,
        allowed: &[bool],
    ) -> Vec<(usize, f32)> {
        let x = self.vector(&features(&normalizer.normalize(text)));
        let mut logits = vec![0.0f32; self.classes];
        self.logits(&x, allowed, &mut logits);
        softmax(&mut logits, allowed);
        logits
            .into_iter()
            .enumerate()
            .filter(|(c, _)| allowed.get(*c).copied().unwrap_or(false))
            .collect()
    }

    /// TF-IDF weights of the known features, scaled so the whole message (unseen features
    /// included) has unit length.
    fn vector(&self, doc: &[(u64, f32)]) -> Vec<(usize, f32)> {
        let mut norm = 0.0f32;
        let mut x = Vec::with_capacity(doc.len());
        for &(f, tf) in doc {
            let weight = 1.0 + tf.ln();
            match self.vocabulary.get(&f) {
                Some(&id) => {
                    let v = weight * self.idf[id as usize];
                    norm += v * v;
                    x.push((id as usize, v));
                }
                None => norm += (weight * self.unseen_idf).powi(2),
            }
        }
        let norm = norm.sqrt();
        if norm > 0.0 {
            for (_, v) in &mut x {
                *v /= norm;
            }
        }
        x
    }

    fn logits(&self, x: &[(usize, f32)], allowed: &[bool], out: &mut [f32]) {
        out.copy_from_slice(&self.bias);
        for &(f, v) in x {
            let row = &self.weights[f * self.classes..][..self.classes];
            for ((o, w), ok) in out.iter_mut().zip(row).zip(allowed) {
                if *ok {
                    *o += w * v;
                }
            }
        }
    }
}

/// Turns logits into probabilities over the allowed classes (the others get 0).
fn softmax(z: &mut [f32], allowed: &[bool]) {
    let max = z
        .iter()
        .zip(allowed)
        .filter(|(_, ok)| **ok)
        .map(|(v, _)| *v)
        .fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for (v, ok) in z.iter_mut().zip(allowed) {
        *v = if *ok { (*v - max).exp() } else { 0.0 };
        sum += *v;
    }
    if sum > 0.0 {
        for v in z.iter_mut() {
            *v /= sum;
        }
    }
}

/// Fisher-Yates with a fixed xorshift generator: the same order on every machine.
fn shuffle(order: &mut [usize], state: &mut u64) {
    for i in (1..order.len()).rev() {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let j = (*state % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
}

/// Hashed features of normalised text with their counts: character 3- to 5-grams of each word
/// padded with a boundary mark, and each word's first five characters.
fn features(text: &str) -> Vec<(u64, f32)> {
    let mut counts: HashMap<u64, f32> = HashMap::new();
    let mut padded: Vec<char> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        padded.clear();
        padded.push(' ');
        padded.extend(word.chars());
        padded.push(' ');
        for n in 3..=5 {
            for gram in padded.windows(n) {
                *counts.entry(hash(b'c', gram)).or_default() += 1.0;
            }
        }
        let stem: Vec<char> = word.chars().take(5).collect();
        *counts.entry(hash(b'w', &stem)).or_default() += 1.0;
    }
    let mut features: Vec<(u64, f32)> = counts.into_iter().collect();
    // Hash-map order varies between runs; training must see the same order every time.
    features.sort_unstable_by_key(|&(f, _)| f);
    features
}

/// FNV-1a over a tag and the characters.
fn hash(tag: u8, chars: &[char]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    eat(tag);
    for c in chars {
        for b in (*c as u32).to_le_bytes() {
            eat(b);
        }
    }
    h
}

//! The text classifier under the embedded router: character n-gram TF-IDF features and
//! multinomial logistic regression, trained deterministically. Generic: classes are numbers,
//! texts are any language.
//!
//! The hot path (one message) allocates nothing once its thread has classified a message (the
//! buffers are per thread) and hashes each feature once: features are FNV-1a hashes of the
//! n-gram's characters, resolved to dense ids through an open-addressing table built at
//! training time (the hash is the key, so looking one up is a multiply and a probe or two, no
//! `HashMap` hashing). The dot product walks the known features' rows of one byte per class,
//! all at once or sixteen at a time (`rows.rs`, in AVX2 steps where the processor has them);
//! the best class and the runner-up are tracked, never sorted.

use std::collections::HashMap;

use super::features::{
    BASIS, FeatureTable, Meant, Reading, counted, features, features_into, step, whole_word, words,
};
use super::rows;
use super::spelling::Spelling;
use super::top::{Top, best_two};
use crate::text::Normalizer;

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
    /// Neighbouring words as features too, each cut to its first this many letters
    /// (`router.embedded.word_pairs`); `None`: each word alone.
    pub word_pairs: Option<usize>,
}

impl Default for Training {
    fn default() -> Self {
        // Chosen by 5-fold cross-validation on the shipped pack's examples (tests/it/models.rs,
        // `tune_the_embedded_router_on_the_examples`). Since the pack's examples doubled (2,421),
        // 6 epochs route as many held-out examples as 10 (76.2 against 76.0 %; chat left alone
        // 88.4 against 89.4 %) and the same share of every evaluation set, in 40 % less
        // training: the same number of steps as 10 epochs over the old examples.
        Self {
            epochs: 6,
            rate: 4.0,
            decay: 0.1,
            l2: 1e-5,
            word_pairs: None,
        }
    }
}

/// A trained classifier.
#[derive(Debug, Clone)]
pub struct Classifier {
    classes: usize,
    vocabulary: FeatureTable,
    idf: Vec<f32>,
    /// The weight of a feature never seen in training (counts towards the message's length, so
    /// a message of mostly unknown words gets low confidence).
    unseen_idf: f32,
    /// Feature-major, while training: the weights of feature `f` are
    /// `weights[f * classes..][..classes]`. Emptied once trained (see `rows`).
    weights: Vec<f32>,
    /// The trained weights as served: one byte per class and feature, `rows[f * stride..]`,
    /// times the feature's `scales[f]` (`stride` is `classes` rounded up to 16, zeros after
    /// the last class, so the inner loop is whole vector steps with no scalar tail). A quarter of the memory of `f32` weights, so a message
    /// touches a quarter of the cache lines (the weights of ~150 features are the hot path's
    /// memory traffic); the rounding moves a probability by well under 1 %.
    rows: Vec<i8>,
    stride: usize,
    scales: Vec<f32>,
    bias: Vec<f32>,
    /// How slips of typing are read (`router.embedded.typos_from`); `None`: as written.
    spelling: Option<Spelling>,
    /// The letters of each word in a word-pair feature, as trained ([`Training::word_pairs`]).
    word_pairs: Option<usize>,
}

/// Per-thread buffers of the hot path, so classifying a message allocates nothing once a
/// thread has classified one.
#[derive(Default)]
struct Scratch {
    hashes: Vec<u64>,
    padded: Vec<char>,
    known: Vec<u32>,
    unseen: Vec<u64>,
    /// Each known feature's row and the number it is multiplied by.
    terms: Vec<(usize, f32)>,
    logits: Vec<f32>,
    /// Whether a word was read as a slip since [`Classifier::take_slipped`] last looked.
    slipped: bool,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
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
        let normalized: Vec<String> = (examples.iter())
            .map(|(_, text)| normalizer.normalize_message(text))
            .collect();
        Self::train_normalized(classes, examples, &normalized, training)
    }

    /// [`Self::train_with`] with each example's text normalised already (`normalized`, in the
    /// same order): the normalised text gives the features, the text as written the order in
    /// which training visits it.
    pub(super) fn train_normalized(
        classes: usize,
        examples: &[(usize, &str)],
        normalized: &[String],
        training: Training,
    ) -> Self {
        let docs: Vec<Vec<(u64, f32)>> = normalized
            .iter()
            .map(|text| counted(features(text, training.word_pairs)))
            .collect();
        let mut ids: HashMap<u64, u32> = HashMap::new();
        let mut df: Vec<u32> = Vec::new();
        for doc in &docs {
            for &(f, _) in doc {
                let next = ids.len() as u32;
                let id = *ids.entry(f).or_insert(next);
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
            vocabulary: FeatureTable::new(&ids),
            idf,
            unseen_idf: (1.0 + n).ln() + 1.0,
            weights: Vec::new(),
            rows: Vec::new(),
            stride: classes.next_multiple_of(16),
            scales: Vec::new(),
            bias: vec![0.0; classes],
            spelling: None,
            word_pairs: training.word_pairs,
        };
        model.weights = vec![0.0; model.idf.len() * classes];
        let vectors: Vec<Vec<(usize, f32)>> = docs.iter().map(|d| model.vector(d)).collect();
        sgd(&mut model, examples, &vectors, training);
        model.quantize();
        model
    }

    /// Turns the training weights into the served bytes and scales.
    fn quantize(&mut self) {
        let classes = self.classes.max(1);
        let features = self.weights.len() / classes;
        self.rows = vec![0; features * self.stride];
        self.scales = vec![0.0; features];
        rows::quantize(
            &self.weights,
            classes,
            self.stride,
            &mut self.rows,
            &mut self.scales,
        );
        self.weights = Vec::new();
    }

    /// Reads slips of typing with `spelling` from now on.
    pub(super) fn read_slips(&mut self, spelling: Spelling) {
        self.spelling = Some(spelling);
    }

    /// Whether this thread read a word as a slip since it last asked (so that the trace looks
    /// for them only then).
    pub(super) fn take_slipped(&self) -> bool {
        SCRATCH.with(|s| std::mem::take(&mut s.borrow_mut().slipped))
    }

    /// Each word of normalised `text` read as another word ([`Spelling`]) or as two words
    /// typed without a space, with what it was read as.
    pub(super) fn slips<'t>(&self, text: &'t str) -> Vec<(&'t str, String)> {
        let Some(spelling) = &self.spelling else {
            return Vec::new();
        };
        words(text)
            .filter(|w| self.vocabulary.get(whole_word(w)).is_none())
            .filter_map(|w| match spelling.meant(w)? {
                Meant::Slip(meant) => Some((w, meant.to_owned())),
                Meant::Glued(at) => Some((w, [&w[..at], " ", &w[at..]].concat())),
            })
            .collect()
    }

    /// The letters of each word in a word-pair feature it was trained with (`None`: none).
    pub(super) fn word_pairs(&self) -> Option<usize> {
        self.word_pairs
    }

    /// How many classes it tells apart.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The probability of each allowed class for `text`, in class order.
    pub fn probabilities(
        &self,
        text: &str,
        normalizer: &Normalizer,
        allowed: &[bool],
    ) -> Vec<(usize, f32)> {
        let mut logits = vec![0.0f32; self.classes];
        self.logits(&normalizer.normalize_message(text), &[], &mut logits);
        softmax(&mut logits, allowed);
        logits
            .into_iter()
            .enumerate()
            .filter(|(c, _)| allowed.get(*c).copied().unwrap_or(false))
            .collect()
    }

    /// The best allowed class and the runner-up for normalised `text`; `bias` (one number per
    /// class, or empty) is added to the scores before they become probabilities.
    pub fn top(&self, normalized: &str, allowed: &[bool], bias: &[f32]) -> Option<Top> {
        self.top_with(normalized, allowed, bias, &[], &[])
            .map(|(top, _)| top)
    }

    /// [`Self::top`], and of the classes paired with the best in `pairs` (allowed ones only),
    /// the most probable with its probability. `watch`: classes (not allowed) whose scores are
    /// compared with the best allowed one's ([`Top::beaten_by`]).
    pub fn top_with(
        &self,
        normalized: &str,
        allowed: &[bool],
        bias: &[f32],
        pairs: &[(usize, usize)],
        watch: &[usize],
    ) -> Option<(Top, Option<(usize, f32)>)> {
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let mut logits = std::mem::take(&mut scratch.logits);
            logits.resize(self.stride, 0.0);
            self.scores(normalized, bias, &mut scratch, &mut logits);
            let top = best_two(&logits[..self.classes], allowed).map(|mut top| {
                let (b, pb) = top.best;
                top.beaten_by = (watch.iter().copied())
                    .filter(|&c| logits.get(c).is_some_and(|&z| z > logits[b]))
                    .max_by(|&x, &y| logits[x].total_cmp(&logits[y]));
                let partner = pairs
                    .iter()
                    .filter_map(|&(x, y)| match (x == b, y == b) {
                        (true, _) => Some(y),
                        (_, true) => Some(x),
                        _ => None,
                    })
                    .filter(|&c| allowed.get(c).copied().unwrap_or(false))
                    .map(|c| (c, pb * (logits[c] - logits[b]).exp()))
                    .max_by(|a, b| a.1.total_cmp(&b.1));
                (top, partner)
            });
            scratch.logits = logits;
            top
        })
    }

    /// What the words of normalised `text` say for each class, into `out` (one place per
    /// class): the scores without the classes' own bias, so that another text's evidence can be
    /// added to a message's scores as a bias.
    pub(super) fn evidence(&self, normalized: &str, out: &mut [f32]) {
        self.logits(normalized, &[], out);
        for (o, b) in out.iter_mut().zip(&self.bias) {
            *o -= b;
        }
    }

    /// The scores of every class for normalised text; `bias` (one number per class, or empty)
    /// is added.
    fn logits(&self, normalized: &str, bias: &[f32], out: &mut [f32]) {
        let mut padded = vec![0.0; self.stride];
        SCRATCH
            .with(|scratch| self.scores(normalized, bias, &mut scratch.borrow_mut(), &mut padded));
        out.copy_from_slice(&padded[..self.classes]);
    }

    /// The hot path: features hashed into the scratch buffers, looked up, counted (a sort of a
    /// few hundred ids), then each known feature's row of bytes added to the scores. The
    /// message's length (unseen features included) divides at the end, once per class.
    /// `out` has `stride` places; the ones past the last class stay 0.
    fn scores(&self, normalized: &str, bias: &[f32], s: &mut Scratch, out: &mut [f32]) {
        let Scratch {
            hashes,
            padded,
            known,
            unseen,
            terms,
            slipped,
            ..
        } = s;
        hashes.clear();
        let read = |w: &str| self.spelling.as_ref().and_then(|s| s.meant(w));
        let reading = self.spelling.is_some().then_some(Reading {
            seen: &self.vocabulary,
            read: &read,
        });
        *slipped |= features_into(
            normalized,
            hashes,
            padded,
            reading.as_ref(),
            self.word_pairs,
        );
        known.clear();
        unseen.clear();
        for &h in hashes.iter() {
            match self.vocabulary.get(h) {
                Some(id) => known.push(id),
                None => unseen.push(h),
            }
        }
        known.sort_unstable();
        unseen.sort_unstable();
        let sublinear = |n: usize| if n == 1 { 1.0 } else { 1.0 + (n as f32).ln() };
        let mut norm = 0.0f32;
        for run in unseen.chunk_by(|a, b| a == b) {
            norm += (sublinear(run.len()) * self.unseen_idf).powi(2);
        }
        let stride = self.stride;
        terms.clear();
        for run in known.chunk_by(|a, b| a == b) {
            let f = run[0] as usize;
            let v = sublinear(run.len()) * self.idf[f];
            norm += v * v;
            terms.push((f * stride, v * self.scales[f]));
        }
        let out = &mut out[..stride];
        rows::add_rows(&self.rows, terms, out);
        let inv = if norm > 0.0 { 1.0 / norm.sqrt() } else { 0.0 };
        for (c, o) in out[..self.classes].iter_mut().enumerate() {
            *o = *o * inv + self.bias[c] + bias.get(c).copied().unwrap_or(0.0);
        }
    }
}

impl Classifier {
    /// TF-IDF weights of the known features, scaled so the whole message (unseen features
    /// included) has unit length.
    fn vector(&self, doc: &[(u64, f32)]) -> Vec<(usize, f32)> {
        let mut norm = 0.0f32;
        let mut x = Vec::with_capacity(doc.len());
        for &(f, tf) in doc {
            let weight = 1.0 + tf.ln();
            match self.vocabulary.get(f) {
                Some(id) => {
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
}

/// Plain SGD over the examples in an order keyed by each example's text (see `keys`), the
/// weights averaged over the second half of training, so the answer does not depend on which
/// examples happened to come last (two classes with the same examples end up tied, as they
/// should).
fn sgd(
    model: &mut Classifier,
    examples: &[(usize, &str)],
    vectors: &[Vec<(usize, f32)>],
    training: Training,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        unsafe { sgd_avx2(model, examples, vectors, training) };
        return;
    }
    sgd_steps(model, examples, vectors, training);
}

/// [`sgd_steps`] compiled for AVX2: the row loops take eight classes a step instead of four.
/// No fused multiply-add (a separate feature, not enabled), so every weight is what the
/// baseline's steps make of it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sgd_avx2(
    model: &mut Classifier,
    examples: &[(usize, &str)],
    vectors: &[Vec<(usize, f32)>],
    training: Training,
) {
    sgd_steps(model, examples, vectors, training);
}

/// [`sgd`]'s body.
#[inline(always)]
fn sgd_steps(
    model: &mut Classifier,
    examples: &[(usize, &str)],
    vectors: &[Vec<(usize, f32)>],
    training: Training,
) {
    let classes = model.classes;
    // One training point per distinct text: a text given to several classes is one point whose
    // target is shared among them, so those classes get the same updates and stay tied (the
    // router then asks back rather than guess).
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut points: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, (class, text)) in examples.iter().enumerate() {
        let next = points.len();
        let p = *first.entry(*text).or_insert(next);
        if p == next {
            points.push((i, Vec::new()));
        }
        if !points[p].1.contains(class) {
            points[p].1.push(*class);
        }
    }
    // Each point's place in an epoch comes from its own text, never from its position in the
    // list: adding or removing one example leaves the others in the same relative order, so
    // the model (and unrelated decisions) barely move.
    let keys: Vec<u64> = points
        .iter()
        .map(|(i, _)| {
            examples[*i]
                .1
                .bytes()
                .fold(BASIS, |h, b| step(h, u32::from(b)))
        })
        .collect();
    let mut order: Vec<usize> = (0..points.len()).collect();
    let mut logits = vec![0.0f32; classes];
    let mut target = vec![0.0f32; classes];
    let mut step = vec![0.0f32; classes];
    let mut moving: Vec<usize> = Vec::with_capacity(classes);
    let all = vec![true; classes];
    let mut sum_weights = vec![0.0f32; model.weights.len()];
    let mut sum_bias = vec![0.0f32; classes];
    let mut averaged = 0u32;
    // The scores walk whole rows in step with `logits` (zipped, not indexed), so the optimiser
    // makes vector steps of them: training is in the start-up of every process that routes.
    // The update touches only the classes that move, usually a few.
    for epoch in 0..training.epochs {
        let salt = mix(epoch as u64 + 1);
        order.sort_unstable_by_key(|&p| (mix(keys[p] ^ salt), p));
        let rate = training.rate / (1.0 + training.decay * epoch as f32);
        let shrink = rate * training.l2;
        for &p in &order {
            let (i, ref labels) = points[p];
            let x = &vectors[i];
            for &c in labels {
                target[c] = 1.0 / labels.len() as f32;
            }
            logits.copy_from_slice(&model.bias);
            for &(f, v) in x {
                let row = &model.weights[f * classes..][..classes];
                for (z, w) in logits.iter_mut().zip(row) {
                    *z += w * v;
                }
            }
            softmax(&mut logits, &all);
            moving.clear();
            for c in 0..classes {
                let g = logits[c] - target[c];
                // Classes already (almost) right for this example are left alone.
                if g.abs() >= 1e-3 {
                    step[c] = rate * g;
                    model.bias[c] -= step[c];
                    moving.push(c);
                }
            }
            for &c in labels {
                target[c] = 0.0;
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

/// A 64-bit mixer (splitmix64's finaliser): nearby inputs give unrelated outputs.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feature_table_finds_every_key_and_nothing_else() {
        let ids: HashMap<u64, u32> = (0..1000u64).map(|k| (k * 7919, k as u32)).collect();
        let table = FeatureTable::new(&ids);
        for (k, id) in &ids {
            assert_eq!(table.get(*k), Some(*id));
        }
        assert_eq!(table.get(13), None);
    }

    #[test]
    fn slips_name_each_word_read_as_another_and_leave_the_examples_words_alone() {
        let examples = [
            (0, "remind me tomorrow"),
            (1, "a hoist"),
            (1, "a heist"),
            (1, "hoist again"),
        ];
        let norm = Normalizer::default();
        let mut c = Classifier::train(2, &examples, &norm);
        let texts = examples.iter().map(|(_, t)| *t);
        c.read_slips(Spelling::new(texts, 5, None, None, None));
        assert_eq!(
            c.slips("remnid me tomorow"),
            vec![("remnid", "remind".into()), ("tomorow", "tomorrow".into())]
        );
        // Two words side by side in an example, typed without the space, are read as both.
        assert_eq!(
            c.slips("hoistagain tomorrow"),
            vec![("hoistagain", String::from("hoist again"))]
        );
        // A word of the examples is read as written, even one slip from another of them.
        assert!(c.slips("remind me a hoist or a heist").is_empty());
    }

    #[test]
    fn top_agrees_with_the_full_probabilities() {
        let norm = Normalizer::default();
        let examples = [
            (0, "weather in paris"),
            (0, "will it rain"),
            (1, "set an alarm"),
            (1, "wake me up at seven"),
            (2, "hello there"),
        ];
        let c = Classifier::train(3, &examples, &norm);
        let allowed = [true, true, true];
        let mut p = c.probabilities("rain in paris", &norm, &allowed);
        p.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top = c.top("rain in paris", &allowed, &[]).expect("a class");
        assert_eq!(top.best.0, p[0].0);
        assert!((top.best.1 - p[0].1).abs() < 1e-5);
        assert_eq!(top.runner_up.map(|r| r.0), Some(p[1].0));
    }

    #[test]
    fn word_pairs_tell_the_same_words_in_another_order_apart() {
        // Both classes have the same words; only their order differs.
        let things = ["thought", "look", "try", "visit", "read", "call"];
        let first: Vec<String> = things
            .iter()
            .map(|t| format!("worth a {t} it is"))
            .collect();
        let second: Vec<String> = things
            .iter()
            .map(|t| format!("it is worth a {t}"))
            .collect();
        let examples: Vec<(usize, &str)> = (first.iter().map(|t| (0, t.as_str())))
            .chain(second.iter().map(|t| (1, t.as_str())))
            .collect();
        let norm = Normalizer::default();
        let allowed = [true, true];
        let best = |training: Training, text: &str| {
            let c = Classifier::train_with(2, &examples, &norm, training);
            let top = c.top(&norm.normalize_message(text), &allowed, &[]);
            top.map(|t| t.best).expect("a class")
        };
        let pairs = Training {
            word_pairs: Some(5),
            ..Training::default()
        };
        // The pairs survive the words' endings.
        assert_eq!(best(pairs, "it is worthy a walk").0, 1);
        assert_eq!(best(pairs, "worthy a walk it is").0, 0);
        // Words alone cannot tell them apart: both orders get the same answer.
        let alone = Training::default();
        assert_eq!(
            best(alone, "it is worthy a walk"),
            best(alone, "worthy a walk it is")
        );
    }
}

//! Calibration of the embedded router by k-fold cross-validation on the pack's own examples
//! (`turnout calibrate`): the examples (tools', auto skills', the skill tool's and
//! `router.embedded.chat_examples`) are split into folds, the classifier is trained on all
//! folds but one and decides the one held out, as the router decides a message (frames
//! applied, confusable pairs checked, every class allowed), and a grid of `threshold`, `margin`
//! and `confusable.ratio` is scored on those decisions.
//!
//! The figures are about the examples, not about real traffic: an example held out still
//! resembles its siblings, and a class with one example has nothing left to learn from when it
//! is held out. They say which way the numbers should move, not how well the router does; an
//! evaluation set written apart from the examples says that.

use serde::{Serialize, Serializer};

use super::{Classifier, Target, Training, TrainingData, frames};
use crate::ruleset::RuleSet;

/// The decision numbers of `router.embedded` a calibration tries.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    /// `router.embedded.threshold`: the best class's probability needed to act.
    #[serde(serialize_with = "decimal")]
    pub threshold: f32,
    /// `router.embedded.margin`: how far the best must lead the runner-up.
    #[serde(serialize_with = "decimal")]
    pub margin: f32,
    /// `router.embedded.confusable.ratio` (`None`: the rules declare no confusable pairs).
    #[serde(serialize_with = "decimal_opt")]
    pub ratio: Option<f32>,
}

impl Settings {
    /// The values now in the rules.
    pub fn of(rs: &RuleSet) -> Self {
        let e = &rs.router().embedded;
        Self {
            threshold: e.threshold,
            margin: e.margin,
            ratio: (!e.torn.is_empty()).then_some(e.torn_ratio),
        }
    }

    /// The lines of `router.yaml` that set these values.
    pub fn yaml(&self) -> String {
        let mut out = format!(
            "router:\n  embedded:\n    threshold: {}\n    margin: {}\n",
            round(self.threshold),
            round(self.margin)
        );
        if let Some(ratio) = self.ratio {
            out.push_str(&format!("    confusable:\n      ratio: {}\n", round(ratio)));
        }
        out
    }

    /// How far from `other` (the sum of the differences), to prefer small changes.
    fn distance(&self, other: &Self) -> f32 {
        let ratio = match (self.ratio, other.ratio) {
            (Some(a), Some(b)) => (a - b).abs(),
            _ => 0.0,
        };
        (self.threshold - other.threshold).abs() + (self.margin - other.margin).abs() + ratio
    }
}

/// A number as written in YAML: at most three decimals, no float noise.
fn round(x: f32) -> f64 {
    (f64::from(x) * 1000.0).round() / 1000.0
}

/// Serialises a setting as [`round`] writes it (an `f32` would otherwise come out as its `f64`
/// widening, 0.30000001192092896).
fn decimal<S: Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round(*x))
}

fn decimal_opt<S: Serializer>(x: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
    x.map(round).serialize(s)
}

fn decimals<S: Serializer>(xs: &[f32], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(xs.iter().map(|x| round(*x)))
}

/// What one set of values did with held-out examples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    /// Tool, skill and leave-the-skill examples routed to their own class.
    pub routed: usize,
    /// Tool, skill and leave-the-skill examples.
    pub actions: usize,
    /// Chat examples left without a tool.
    pub left_alone: usize,
    /// Chat examples.
    pub chat: usize,
}

impl Score {
    /// The share of action examples routed to their class (`None`: there were none).
    pub fn routed_share(&self) -> Option<f64> {
        share(self.routed, self.actions)
    }

    /// The share of chat examples left without a tool (`None`: there were none).
    pub fn left_alone_share(&self) -> Option<f64> {
        share(self.left_alone, self.chat)
    }

    fn add(&mut self, other: &Score) {
        self.routed += other.routed;
        self.actions += other.actions;
        self.left_alone += other.left_alone;
        self.chat += other.chat;
    }
}

fn share(n: usize, of: usize) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

/// One set of values with its figures, per fold and over all folds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The values.
    pub settings: Settings,
    /// Over all folds (every example held out once).
    pub overall: Score,
    /// Fold by fold.
    pub per_fold: Vec<Score>,
}

/// The values tried.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// Thresholds tried.
    #[serde(serialize_with = "decimals")]
    pub thresholds: Vec<f32>,
    /// Margins tried.
    #[serde(serialize_with = "decimals")]
    pub margins: Vec<f32>,
    /// Confusable ratios tried (empty: no pairs declared).
    #[serde(serialize_with = "decimals")]
    pub ratios: Vec<f32>,
}

/// The result of [`calibrate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// How many folds.
    pub folds: usize,
    /// How many examples (each held out once).
    pub examples: usize,
    /// How many classes the classifier tells apart.
    pub classes: usize,
    /// The values now in the rules.
    pub current: Outcome,
    /// The best values of the grid (see [`CHOSEN_BY`]).
    pub best: Outcome,
    /// How the best values were chosen.
    pub chosen_by: &'static str,
    /// The values tried.
    pub grid: Grid,
}

/// How [`calibrate`] chooses the best values.
pub const CHOSEN_BY: &str = "the most tool/skill examples routed to their class among the values that leave at least as many chat examples without a tool as the current ones; ties: more chat left alone, then the values closest to the current ones";

/// Why a calibration cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalibrateError {
    /// Fewer than two folds.
    #[error("--folds must be at least 2 (got {0}): one fold is trained on, another held out")]
    TooFewFolds(usize),
    /// More folds than examples.
    #[error(
        "the rules have {examples} examples, fewer than the {folds} folds asked for: every fold needs one"
    )]
    TooFewExamples {
        /// The folds asked for.
        folds: usize,
        /// The examples the rules give.
        examples: usize,
    },
}

/// The classes the router learns and its examples as `(class, text)`, as it trains on them:
/// tools (the skill tool's class is [`Target::Leave`]), auto skills and [`Target::Chat`], each
/// only when it has examples.
pub fn labelled(rs: &RuleSet) -> (Vec<Target>, Vec<(usize, String)>) {
    let data = TrainingData::from_rules(rs);
    (data.targets, data.examples)
}

/// How the router decided one held-out example: what the thresholds are then applied to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldOut {
    /// The fold it was held out in.
    pub fold: usize,
    /// Whether it is a chat example (else a tool, skill or leave example).
    pub chat: bool,
    /// Whether the best class is the example's own.
    pub best_is_own: bool,
    /// Whether the best class is no tool.
    pub best_is_chat: bool,
    /// The best class's probability.
    pub best: f32,
    /// The runner-up's (0 when none).
    pub runner_up: f32,
    /// The best class's confusable partner's probability, if the best has one.
    pub partner: Option<f32>,
}

impl HeldOut {
    /// What these values make of it: `true` when the decision is right (its own class for an
    /// action example, no tool for a chat example).
    pub fn right(&self, s: &Settings) -> bool {
        let torn = match (self.partner, s.ratio) {
            (Some(p), Some(ratio)) => p >= ratio * self.best,
            _ => false,
        };
        let acts = !self.best_is_chat
            && self.best >= s.threshold
            && self.best - self.runner_up >= s.margin
            && !torn;
        if self.chat {
            !acts
        } else {
            acts && self.best_is_own
        }
    }
}

/// The fold of each example: within each class the examples are dealt round the folds in the
/// order written, each class starting one fold further on (so every fold gets a share of every
/// class, and the classes with one example do not all land in the first fold).
fn folds_of(examples: &[(usize, String)], folds: usize) -> Vec<usize> {
    let mut seen: Vec<usize> = Vec::new();
    examples
        .iter()
        .map(|&(class, _)| {
            if seen.len() <= class {
                seen.resize(class + 1, 0);
            }
            let fold = (seen[class] + class) % folds;
            seen[class] += 1;
            fold
        })
        .collect()
}

/// Trains on all folds but one, for each fold, and decides the held-out examples as the router
/// does (frames applied, confusable pairs checked), every class allowed. The word pairs are
/// the rules' own (`router.embedded.word_pairs`), whatever `training` says.
pub fn hold_out(
    rs: &RuleSet,
    folds: usize,
    training: Training,
) -> Result<Vec<HeldOut>, CalibrateError> {
    let data = TrainingData::from_rules(rs);
    let training = Training {
        word_pairs: data.word_pairs,
        ..training
    };
    if folds < 2 {
        return Err(CalibrateError::TooFewFolds(folds));
    }
    if data.examples.len() < folds {
        return Err(CalibrateError::TooFewExamples {
            folds,
            examples: data.examples.len(),
        });
    }
    let classes = data.targets.len();
    let chat = data.targets.iter().position(|t| *t == Target::Chat);
    let embedded = &rs.router().embedded;
    let class_of = |tool: usize| data.tool_class.get(tool).copied().flatten();
    let pairs: Vec<(usize, usize)> = (embedded.torn.iter())
        .filter_map(|&(a, b)| Some((class_of(a)?, class_of(b)?)))
        .collect();
    let fold_of = folds_of(&data.examples, folds);
    let all = vec![true; classes];
    let mut held = Vec::with_capacity(data.examples.len());
    for fold in 0..folds {
        let train: Vec<(usize, &str)> = (data.examples.iter().zip(&fold_of))
            .filter(|(_, f)| **f != fold)
            .map(|((c, t), _)| (*c, t.as_str()))
            .collect();
        let read: Vec<String> = train.iter().map(|(_, t)| data.read(t)).collect();
        let classifier = Classifier::train_normalized(classes, &train, &read, training);
        for ((class, text), _) in (data.examples.iter().zip(&fold_of)).filter(|(_, f)| **f == fold)
        {
            let normalized = data.normalizer.normalize_message(text);
            let framing = frames::frame_message(embedded, &normalized);
            let bias: Vec<f32> = if framing.boost_chat != 0.0 || framing.boost_skills != 0.0 {
                (data.targets.iter())
                    .map(|t| match t {
                        Target::Chat => framing.boost_chat,
                        Target::Skill(_) => framing.boost_skills,
                        Target::Tool(_) | Target::Leave => 0.0,
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let reading = frames::blanked(&normalized, &framing.fillers);
            let text = reading.get(framing.start..).unwrap_or(&reading);
            let Some((top, partner)) = classifier.top_with(text, &all, &bias, &pairs, &[]) else {
                continue;
            };
            held.push(HeldOut {
                fold,
                chat: Some(*class) == chat,
                best_is_own: top.best.0 == *class,
                best_is_chat: Some(top.best.0) == chat,
                best: top.best.1,
                runner_up: top.runner_up.map_or(0.0, |r| r.1),
                partner: partner.map(|p| p.1),
            });
        }
    }
    Ok(held)
}

/// The figures of these values on held-out decisions, per fold and overall.
pub fn score(held: &[HeldOut], folds: usize, settings: Settings) -> Outcome {
    let mut per_fold = vec![Score::default(); folds];
    for h in held {
        let Some(s) = per_fold.get_mut(h.fold) else {
            continue;
        };
        let right = usize::from(h.right(&settings));
        if h.chat {
            s.chat += 1;
            s.left_alone += right;
        } else {
            s.actions += 1;
            s.routed += right;
        }
    }
    let mut overall = Score::default();
    per_fold.iter().for_each(|s| overall.add(s));
    Outcome {
        settings,
        overall,
        per_fold,
    }
}

/// k-fold cross-validation of these values with this training: [`hold_out`] then [`score`].
pub fn cross_validate(
    rs: &RuleSet,
    folds: usize,
    training: Training,
    settings: Settings,
) -> Result<Outcome, CalibrateError> {
    Ok(score(&hold_out(rs, folds, training)?, folds, settings))
}

/// `count` steps of `step` from 0 (each the `f32` nearest its decimal, so it prints as
/// written), the current value added if it is not one of them.
fn steps(count: usize, step: f64, current: f32) -> Vec<f32> {
    let mut out: Vec<f32> = (0..count)
        .map(|i| ((i as f64 * step * 1000.0).round() / 1000.0) as f32)
        .collect();
    if !out.iter().any(|v| (v - current).abs() < 1e-6) {
        out.push(current);
        out.sort_by(f32::total_cmp);
    }
    out
}

/// Cross-validates the rules' router on its own examples in `folds` folds and finds the best
/// `threshold`, `margin` and `confusable.ratio` of a grid (see [`CHOSEN_BY`]).
pub fn calibrate(rs: &RuleSet, folds: usize) -> Result<Calibration, CalibrateError> {
    let held = hold_out(rs, folds, Training::default())?;
    let current = Settings::of(rs);
    let grid = Grid {
        thresholds: steps(19, 0.05, current.threshold),
        margins: steps(11, 0.025, current.margin),
        ratios: current.ratio.map_or_else(Vec::new, |r| steps(11, 0.1, r)),
    };
    let ratios: Vec<Option<f32>> = if grid.ratios.is_empty() {
        vec![None]
    } else {
        grid.ratios.iter().copied().map(Some).collect()
    };
    let now = score(&held, folds, current);
    let mut best = now.clone();
    for &threshold in &grid.thresholds {
        for &margin in &grid.margins {
            for &ratio in &ratios {
                let settings = Settings {
                    threshold,
                    margin,
                    ratio,
                };
                let tried = score(&held, folds, settings);
                if better(&tried, &best, &current)
                    && tried.overall.left_alone >= now.overall.left_alone
                {
                    best = tried;
                }
            }
        }
    }
    Ok(Calibration {
        folds,
        examples: held.len(),
        classes: TrainingData::from_rules(rs).targets.len(),
        current: now,
        best,
        chosen_by: CHOSEN_BY,
        grid,
    })
}

/// Whether `a` beats `b`: more routed, then more left alone, then closer to `current`.
fn better(a: &Outcome, b: &Outcome, current: &Settings) -> bool {
    let key = |o: &Outcome| (o.overall.routed, o.overall.left_alone);
    match key(a).cmp(&key(b)) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => {
            a.settings.distance(current) < b.settings.distance(current) - 1e-6
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(chat: bool, own: bool, best: f32, runner_up: f32) -> HeldOut {
        HeldOut {
            fold: 0,
            chat,
            best_is_own: own,
            best_is_chat: false,
            best,
            runner_up,
            partner: None,
        }
    }

    const AT: Settings = Settings {
        threshold: 0.3,
        margin: 0.05,
        ratio: Some(0.5),
    };

    #[test]
    fn an_action_example_is_right_only_when_its_own_class_acts() {
        assert!(held(false, true, 0.6, 0.2).right(&AT));
        assert!(
            !held(false, true, 0.25, 0.2).right(&AT),
            "under the threshold"
        );
        assert!(
            !held(false, true, 0.4, 0.38).right(&AT),
            "inside the margin"
        );
        assert!(!held(false, false, 0.9, 0.05).right(&AT), "another class");
        let torn = HeldOut {
            partner: Some(0.3),
            ..held(false, true, 0.5, 0.3)
        };
        assert!(!torn.right(&AT), "its confusable partner is close");
        assert!(torn.right(&Settings {
            ratio: Some(0.7),
            ..AT
        }));
    }

    #[test]
    fn a_chat_example_is_right_when_nothing_acts() {
        assert!(held(true, false, 0.25, 0.2).right(&AT));
        assert!(!held(true, false, 0.6, 0.1).right(&AT));
        let chat_best = HeldOut {
            best_is_chat: true,
            ..held(true, true, 0.9, 0.05)
        };
        assert!(chat_best.right(&AT));
    }

    #[test]
    fn every_class_is_dealt_round_the_folds() {
        let ex: Vec<(usize, String)> = [0, 0, 0, 1, 1, 2]
            .iter()
            .map(|&c| (c, String::new()))
            .collect();
        assert_eq!(folds_of(&ex, 3), vec![0, 1, 2, 1, 2, 2]);
    }

    #[test]
    fn the_yaml_lines_carry_rounded_values() {
        let s = Settings {
            threshold: 0.1 + 0.2,
            margin: 0.025,
            ratio: None,
        };
        assert_eq!(
            s.yaml(),
            "router:\n  embedded:\n    threshold: 0.3\n    margin: 0.025\n"
        );
    }
}

//! The classifier's answer for one message: the best allowed class, the runner-up, and a
//! watched class that would have beaten them, from the scores of every class.

/// The best class of one message and the runner-up, with their probabilities over the allowed
/// classes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Top {
    /// The most probable allowed class and its probability.
    pub best: (usize, f32),
    /// The second, if two classes are allowed.
    pub runner_up: Option<(usize, f32)>,
    /// The highest-scoring of the watched classes (see [`super::Classifier::top_with`]), when it scores
    /// above the best allowed one.
    pub beaten_by: Option<usize>,
}

/// The best allowed class and the runner-up, with their probabilities (a softmax over the
/// allowed classes, relative to the best score; nothing sorted).
pub(super) fn best_two(logits: &[f32], allowed: &[bool]) -> Option<Top> {
    let mut best: Option<(usize, f32)> = None;
    let mut second: Option<(usize, f32)> = None;
    for (c, &z) in logits.iter().enumerate() {
        if !allowed.get(c).copied().unwrap_or(false) {
            continue;
        }
        if best.is_none_or(|b| z > b.1) {
            second = best;
            best = Some((c, z));
        } else if second.is_none_or(|s| z > s.1) {
            second = Some((c, z));
        }
    }
    let (b, zb) = best?;
    // Softmax relative to the best logit: exp(0) for the best, the rest smaller.
    let sum: f32 = logits
        .iter()
        .zip(allowed)
        .filter(|(_, ok)| **ok)
        .map(|(z, _)| (z - zb).exp())
        .sum();
    Some(Top {
        best: (b, 1.0 / sum),
        runner_up: second.map(|(c, z)| (c, (z - zb).exp() / sum)),
        beaten_by: None,
    })
}

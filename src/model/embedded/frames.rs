//! The frames of the embedded router (`router.embedded.frames`): a request in question form
//! has its frame words taken out before the classifier reads it (the ability words otherwise
//! pull towards a plain answer); a question about a topic adds to the no-tool class; a quote
//! frame marks the words the user dictates, which the router may read the message without.
//! Each frame adds its `boost_chat` to the no-tool class: a question's above 0, a request's 0
//! or below it. All are said in the trace. Patterns come from the rules; nothing here knows a
//! language.

use crate::contract::EffectKind;
use crate::model::ModelNote;
use crate::rules::FrameKind;
use crate::ruleset::FrameDef;

/// What the frames made of one normalised message.
#[derive(Debug, Default)]
pub struct Framing {
    /// Where the classified text starts (after a request frame's words; 0 when none).
    pub start: usize,
    /// Added to the no-tool score by the question frames that hold.
    pub boost_chat: f32,
    /// Added to the auto skills' scores by the question frames that hold.
    pub boost_skills: f32,
    /// The trace lines.
    pub notes: Vec<ModelNote>,
    /// The first quote frame that holds: its id, the pattern that matched and the dictated
    /// words' byte span.
    pub quote: Option<(std::sync::Arc<str>, String, usize, usize)>,
}

/// Applies the frames, in order: the first request frame that matches at the start, every
/// question frame that matches with none of its `unless`, and the first quote frame that
/// matches with none of its `unless`.
pub fn frame(frames: &[FrameDef], normalized: &str) -> Framing {
    let mut out = Framing::default();
    for f in frames {
        // A group named `frame` is the part taken out (the rest of the match only has to be
        // there, e.g. the verb after «could you»); otherwise the whole match.
        // The gate first (a lazy DFA, see `crate::text::gate`): most messages match no frame,
        // and the pattern itself, with its Unicode word boundaries and capture groups, runs the
        // slow engines on non-ASCII text. The groups are asked for only once the gate matched.
        let Some((m, entry)) = f.patterns.iter().zip(&f.gates).find_map(|(p, gate)| {
            if gate.as_ref().is_some_and(|g| !g.is_match(normalized)) {
                return None;
            }
            let c = p.captures(normalized)?;
            let part = c.name("frame").or_else(|| c.name("quote"));
            Some((part.or_else(|| c.get(0))?, p.as_str().to_owned()))
        }) else {
            continue;
        };
        if f.unless.iter().any(|u| u.is_match(normalized)) {
            continue;
        }
        let why = format!("matched '{}' at {}..{}", m.as_str(), m.start(), m.end());
        match f.kind {
            FrameKind::Request
                if out.start == 0 && m.start() == 0 && m.end() < normalized.len() =>
            {
                out.start = m.end();
                // A request frame's `boost_chat` (0, or below it) leans away from no tool: the
                // message asks for something to be done.
                out.boost_chat += f.boost_chat;
                let effect = if f.boost_chat == 0.0 {
                    format!("frame {} reads the rest as a request", f.id)
                } else {
                    format!(
                        "frame {} reads the rest as a request ({:+.1} to no tool)",
                        f.id, f.boost_chat
                    )
                };
                let mut note = ModelNote::new(effect, why)
                    .kind(EffectKind::FrameRequest)
                    .rule(f.id.clone());
                note.matched = Some((entry, m.start(), m.end()));
                out.notes.push(note);
            }
            FrameKind::Request => {}
            FrameKind::Quote => {
                if out.quote.is_none() {
                    out.quote = Some((f.id.clone(), entry, m.start(), m.end()));
                }
            }
            FrameKind::Question => {
                out.boost_chat += f.boost_chat;
                out.boost_skills += f.boost_skills;
                let mut note = ModelNote::new(
                    format!(
                        "frame {} leans to no tool (+{:.1}): a question about the topic",
                        f.id, f.boost_chat
                    ),
                    why,
                )
                .kind(EffectKind::FrameQuestion)
                .rule(f.id.clone());
                note.matched = Some((entry, m.start(), m.end()));
                out.notes.push(note);
            }
        }
    }
    out
}

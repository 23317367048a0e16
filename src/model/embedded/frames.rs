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
use crate::ruleset::{EmbeddedDef, FrameDef};
use crate::text::Gates;
use regex_automata::PatternID;

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
    /// The byte spans of every filler frame's matches, in no order.
    pub fillers: Vec<(usize, usize)>,
}

/// `normalized` with the `spans` blanked, byte for byte, so that every offset still points at
/// the same place: what the classifier reads when fillers are left out.
pub fn blanked<'t>(normalized: &'t str, spans: &[(usize, usize)]) -> std::borrow::Cow<'t, str> {
    if spans.is_empty() {
        return std::borrow::Cow::Borrowed(normalized);
    }
    let mut bytes = normalized.as_bytes().to_vec();
    for &(s, e) in spans {
        if let Some(span) = bytes.get_mut(s..e) {
            span.fill(b' ');
        }
    }
    // Spans are character boundaries of `normalized`, and a space is one byte: still UTF-8.
    String::from_utf8(bytes).map_or(
        std::borrow::Cow::Borrowed(normalized),
        std::borrow::Cow::Owned,
    )
}

/// A message read through a ruleset's frames, their gates asked in one pass ([`frame`]).
pub fn frame_message(embedded: &EmbeddedDef, normalized: &str) -> Framing {
    frame(&embedded.frames, embedded.frame_gates.as_ref(), normalized)
}

/// Applies the frames, in order: the first request frame that matches at the start, every
/// question frame that matches with none of its `unless`, and the first quote frame that
/// matches with none of its `unless`.
/// `gates`, when given, holds the gates of every frame's patterns in order, asked in one pass.
pub fn frame(frames: &[FrameDef], gates: Option<&Gates>, normalized: &str) -> Framing {
    let mut out = Framing::default();
    let passed = gates.map(|g| g.which(normalized));
    let mut first = 0;
    for f in frames {
        // Whether pattern `j` of this frame may match: its gate, from the one pass or alone.
        let at = first;
        first += f.patterns.len();
        let may = |j: usize| match &passed {
            Some(set) => PatternID::new(at + j).is_ok_and(|id| set.contains(id)),
            None => {
                (f.gates.get(j).and_then(Option::as_ref)).is_none_or(|g| g.is_match(normalized))
            }
        };
        if f.kind == FrameKind::Filler {
            fillers(f, &may, normalized, &mut out);
            continue;
        }
        // A group named `frame` is the part taken out (the rest of the match only has to be
        // there, e.g. the verb after «could you»); otherwise the whole match.
        // The gate first (a lazy DFA, see `crate::text::gate`): most messages match no frame,
        // and the pattern itself, with its Unicode word boundaries and capture groups, runs the
        // slow engines on non-ASCII text. The groups are asked for only once the gate matched.
        let Some((m, entry)) = f.patterns.iter().enumerate().find_map(|(j, p)| {
            if !may(j) {
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
            FrameKind::Filler => {}
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

/// `normalized` with the matches of these filler frames blanked (an example read as a message
/// is: the classifier never learns from words it never reads). `frames` are the filler
/// frames (others would be applied too, to no effect on the text).
pub fn without_fillers(frames: &[FrameDef], normalized: String) -> String {
    let spans = frame(frames, None, &normalized).fillers;
    if spans.is_empty() {
        return normalized;
    }
    blanked(&normalized, &spans).into_owned()
}

/// Every match of filler frame `f` in `normalized` (none when one of its `unless` matches),
/// with a trace line naming the words left out.
fn fillers(f: &FrameDef, may: &dyn Fn(usize) -> bool, normalized: &str, out: &mut Framing) {
    let before = out.fillers.len();
    for (j, p) in f.patterns.iter().enumerate() {
        if !may(j) {
            continue;
        }
        for c in p.captures_iter(normalized) {
            if let Some(m) = c.name("filler").or_else(|| c.get(0))
                && m.start() < m.end()
            {
                out.fillers.push((m.start(), m.end()));
            }
        }
    }
    if out.fillers.len() == before {
        return;
    }
    if f.unless.iter().any(|u| u.is_match(normalized)) {
        out.fillers.truncate(before);
        return;
    }
    let words: Vec<&str> = out.fillers[before..]
        .iter()
        .filter_map(|&(s, e)| normalized.get(s..e))
        .collect();
    out.notes.push(
        ModelNote::new(
            format!("frame {} leaves out '{}'", f.id, words.join("', '")),
            "fillers say nothing about the request",
        )
        .kind(EffectKind::Note)
        .rule(f.id.clone()),
    );
}

#[cfg(test)]
mod tests {
    use super::blanked;

    #[test]
    fn blanking_keeps_every_offset() {
        // A two-byte letter in the span: blanked byte for byte, the text stays valid.
        let text = "book, you knöw, a table";
        let start = text.find("you").expect("in the text");
        let end = start + "you knöw".len();
        let out = blanked(text, &[(start, end)]);
        assert_eq!(out.len(), text.len());
        assert_eq!(&out[..start], &text[..start]);
        assert_eq!(&out[end..], &text[end..]);
        assert!(out[start..end].bytes().all(|b| b == b' '));
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            ["book,", ",", "a", "table"]
        );
        // No span: the text itself, not a copy.
        assert!(matches!(blanked(text, &[]), std::borrow::Cow::Borrowed(_)));
    }
}

//! From rankings to the router's answer: one call, or two for a message with two independent
//! parts (cut at `router.embedded.split.connectives`, each part classified alone); arguments
//! filled by the tools' `extract`; and the notes the trace shows (the chosen class, its
//! probability and the runner-up; which words filled which argument; the context rules that
//! applied).

use serde_json::{Map, Value};

use super::{Index, Ranking, Target};
use crate::contract::{EffectKind, Fact, FactKind};
use crate::model::{ModelAnswer, ModelNote, RawCall, RouterInput};
use crate::ruleset::extract::{ExtractInput, fill_arguments, original_slice};

/// The embedded router's answer for this input.
pub(super) fn answer(index: &Index, input: &RouterInput<'_>) -> ModelAnswer {
    let allowed = index.allowed(input);
    let original = input.message();
    let normalized = input.normalized_message();
    let mut framing = super::frames::frame_message(&input.router.embedded, &normalized);
    let bias = index.bias(input, &framing);
    let mut notes = std::mem::take(&mut framing.notes);
    let from = framing.start;
    // What the classifier reads: the message with its fillers blanked (same offsets, so the
    // arguments are still filled from `normalized`).
    let reading = super::frames::blanked(&normalized, &framing.fillers);
    for rule in input
        .context
        .iter()
        .filter_map(|&r| input.router.embedded.context.get(r))
    {
        let effect = if rule.previous_message > 0.0
            && crate::contract::request::assistant_just_before(input.messages).is_some()
        {
            format!(
                "context rule {} applies: the words of the assistant's message before this one \
                 count {}×",
                rule.id, rule.previous_message
            )
        } else {
            format!("context rule {} applies", rule.id)
        };
        notes.push(
            ModelNote::new(effect, "its condition holds for this request")
                .kind(EffectKind::ContextRule)
                .rule(rule.id.clone()),
        );
    }
    index.classifier.take_slipped();
    let asks_whole = framing.boost_chat > 0.0;
    // A part of a compound request reads the context rules that hold within it (its own
    // words), when the engine says which; `None` when they are the whole message's.
    let part_bias = |span: (usize, usize)| -> std::borrow::Cow<'_, [f32]> {
        match input.part_context.map(|holds| holds(span)) {
            Some(rules) if rules != input.context => {
                std::borrow::Cow::Owned(index.bias_of(input, &framing, &rules))
            }
            _ => std::borrow::Cow::Borrowed(&bias),
        }
    };
    let mut plan = split(
        index, input, &reading, from, &allowed, &part_bias, asks_whole,
    )
    .unwrap_or_else(|| {
        let whole = index.rank_text(input, &reading[from..], &allowed, &bias, true);
        vec![(whole, (from, normalized.len()))]
    });
    if let [(whole, span)] = plan.as_slice()
        && matches!(whole.chosen, Target::Chat)
        && whole.torn.is_none()
        && whole.ruled_out.is_none()
        && !asks_whole
        && let Some((id, pattern, start, end)) = framing.quote.take()
        && start >= from
        && let Some(ranking) =
            without_quote(index, input, &reading, from, (start, end), &allowed, &bias)
    {
        let mut note = ModelNote::new(
            [
                "read the message without the dictated words '",
                &normalized[start..end],
                "'",
            ]
            .concat(),
            [
                "no tool for the whole; without them it is sure on its own (frame ",
                &id,
                ")",
            ]
            .concat(),
        )
        .kind(EffectKind::FrameRequest)
        .rule(id.to_string());
        note.matched = Some((pattern, start, end));
        notes.push(note);
        plan = vec![(ranking, *span)];
    }
    if let [(whole, _)] = plan.as_slice()
        && matches!(whole.chosen, Target::Chat)
        && whole.torn.is_none()
        && whole.ruled_out.is_none()
        && let Some(min) = input.router.embedded.sentences_from
        && normalized[from..].split_whitespace().count() >= min
        && let Some((ranking, span)) =
            surest_sentence(index, input, &reading, from, &allowed, &bias)
    {
        notes.push(ModelNote::new(
            "read the long message sentence by sentence",
            [
                "no tool for the whole; the sentence '",
                &normalized[span.0..span.1],
                "' is sure on its own (router.embedded.sentences_from)",
            ]
            .concat(),
        ));
        plan = vec![(ranking, span)];
    }
    // The words read as slips, looked for only when the classifier read one.
    if index.classifier.take_slipped() {
        for (written, meant) in index.classifier.slips(&normalized[from..]) {
            let why = if meant.contains(' ') {
                "no example has it and no list knows it; it is two words of the examples typed without the space between them"
            } else {
                "no example has it and no list knows it; it is one slip from a word of the examples (router.embedded.typos_from)"
            };
            notes.push(ModelNote::new(
                ["read '", written, "' as '", &meant, "'"].concat(),
                why,
            ));
        }
    }
    let two = plan.len() > 1;
    let open_file = (input.ui)
        .and_then(|u| u.open_file.as_ref())
        .map(|f| f.name.as_str());
    let mut calls = Vec::new();
    for (ranking, (start, end)) in plan {
        notes.push(confidence(&ranking, two.then(|| &normalized[start..end])));
        // Where a word was read through the transliteration table (two Latin letters such as
        // `sh` read as one letter), a part's original cannot be cut out by counting
        // characters: the whole message is the original of its last part, and an earlier
        // part's arguments read its normalised words (as `original_of` does).
        let part_original = original_slice(original, &normalized, start, end).unwrap_or(
            if end == normalized.len() {
                original
            } else {
                &normalized[start..end]
            },
        );
        let part = ExtractInput {
            original: part_original,
            normalized: &normalized[start..end],
            open_file,
        };
        if let Some(call) = call_for(&ranking.chosen, input, &part, &mut notes) {
            calls.push(call);
        }
    }
    if let [only] = calls.as_slice()
        && input.router.max_calls >= 2
        && let Some((rule, tool)) = first_call(input, &only.tool)
    {
        let whole = ExtractInput {
            original,
            normalized: &normalized,
            open_file,
        };
        let target = Target::Tool(tool.id.clone());
        if let Some(call) = call_for(&target, input, &whole, &mut notes) {
            let why = ["it asks for it before ", &only.tool, " (its `first`)"].concat();
            let effect = ["context rule ", &rule.id, " calls ", &tool.id, " first"].concat();
            notes.push(
                ModelNote::new(effect, why)
                    .kind(EffectKind::ContextRule)
                    .rule(rule.id.clone()),
            );
            calls.insert(0, call);
        }
    }
    ModelAnswer { calls, notes }
}

/// The first context rule that holds and calls a tool before `chosen` (its `first`), with that
/// tool: one the rule names, not `chosen` itself.
fn first_call<'r>(
    input: &RouterInput<'r>,
    chosen: &str,
) -> Option<(
    &'r crate::ruleset::ContextRuleDef,
    &'r crate::ruleset::ToolDef,
)> {
    let tools = input.rules.tools();
    (input.context.iter())
        .filter_map(|&r| input.router.embedded.context.get(r))
        .find_map(|rule| {
            let (first, before) = rule.first.as_ref()?;
            let comes_before =
                (before.iter()).any(|&b| tools.get(b).is_some_and(|t| *t.id == *chosen));
            let tool = tools.get(*first)?;
            (comes_before && *tool.id != *chosen).then_some((rule, tool))
        })
}

/// The call for a chosen class (none for chat, or a tool not offered).
fn call_for(
    chosen: &Target,
    input: &RouterInput<'_>,
    part: &ExtractInput<'_>,
    notes: &mut Vec<ModelNote>,
) -> Option<RawCall> {
    let router = input.router;
    let skill_call = |value: &str| {
        let mut arguments = Map::new();
        arguments.insert(router.skill_argument.clone(), Value::from(value));
        RawCall {
            tool: router.skill_tool.to_string(),
            arguments: Value::Object(arguments),
        }
    };
    match chosen {
        Target::Chat => None,
        Target::Leave => Some(skill_call(&router.leave_skill_value)),
        Target::Skill(id) => Some(skill_call(id)),
        Target::Tool(id) => {
            let tool = input.tools.iter().find(|t| *t.id == **id)?;
            let (arguments, why) = fill_arguments(&tool.arguments, &tool.extract, part);
            for (name, why) in why {
                // `Value`'s `Display` output, written without the formatting machinery.
                let value = arguments
                    .get(&name)
                    .and_then(|v| serde_json::to_string(v).ok())
                    .unwrap_or_default();
                let subject = [&**id, ".", &name].concat();
                notes.push(
                    ModelNote::new(["filled ", &subject, " = ", &value].concat(), why)
                        .kind(EffectKind::Filled)
                        .subject(subject)
                        .fact(Fact::of(FactKind::FilledValue).value(value)),
                );
            }
            Some(RawCall {
                tool: tool.id.to_string(),
                arguments: Value::Object(arguments),
            })
        }
    }
}

/// Two parts, each sure of a different tool, cut at the first connective (in message order)
/// where that holds, or the one part that is sure of a tool when the other only asks a
/// question; `None` keeps the message whole. `bias` gives a part's scores added by context
/// rules (its own when a `per_part` rule reads differently there).
fn split<'b>(
    index: &Index,
    input: &RouterInput<'_>,
    normalized: &str,
    from: usize,
    allowed: &super::Allowed,
    bias: &dyn Fn((usize, usize)) -> std::borrow::Cow<'b, [f32]>,
    asks_whole: bool,
) -> Option<Vec<(Ranking, (usize, usize))>> {
    let connectives = &input.router.embedded.connectives;
    if input.router.max_calls < 2 || connectives.is_empty() {
        return None;
    }
    let mut cuts: Vec<(usize, usize)> = match &input.router.embedded.connective_finder {
        Some(finder) => finder
            .find_overlapping_iter(normalized)
            .map(|m| (m.start(), m.end()))
            .collect(),
        None => connectives
            .iter()
            .flat_map(|c| {
                normalized
                    .match_indices(c.as_str())
                    .map(|(i, m)| (i, i + m.len()))
            })
            .collect(),
    };
    if cuts.is_empty() {
        return None;
    }
    cuts.retain(|c| c.0 >= from);
    cuts.sort_unstable();
    cuts.dedup_by_key(|c| c.0);
    for (at, after) in cuts {
        let (left, right) = ((from, at), (after, normalized.len()));
        let words = |(s, e): (usize, usize)| normalized[s..e].split_whitespace().count();
        if words(left) < 2 || words(right) < 2 {
            continue;
        }
        let rank = |(s, e): (usize, usize)| {
            index.rank_text(input, &normalized[s..e], allowed, &bias((s, e)), false)
        };
        let (first, second) = (rank(left), rank(right));
        if let (Target::Tool(a), Target::Tool(b)) = (&first.chosen, &second.chosen)
            && a != b
        {
            return Some(vec![(first, left), (second, right)]);
        }
        // A request and a question in one message («remind me at 9 about the interview, and
        // how should I prepare?»): the question is for the chat answer, and it does not
        // cancel the request. The part that asks (it ends with `?`) and is no tool's is left
        // to the answer; the other is called; each has three words or more (the two words
        // after an idiom's «and» are no question of their own). Not when a question
        // frame holds for the whole message («X and Y: what is the difference?»): then both
        // parts are the question.
        let asks = |(s, e): (usize, usize)| normalized[s..e].trim_end().ends_with('?');
        if !asks_whole && words(left) >= 3 && words(right) >= 3 {
            match (&first.chosen, &second.chosen) {
                (Target::Tool(_), Target::Chat) if asks(right) => return Some(vec![(first, left)]),
                (Target::Chat, Target::Tool(_)) if asks(left) => {
                    return Some(vec![(second, right)]);
                }
                _ => {}
            }
        }
    }
    None
}

/// Of the sentences of `normalized[from..]` (cut at `.`, `!`, `?`, `;` and line breaks) of
/// three words or more, the one surest of a tool or skill on its own, with its byte span.
fn surest_sentence(
    index: &Index,
    input: &RouterInput<'_>,
    normalized: &str,
    from: usize,
    allowed: &super::Allowed,
    bias: &[f32],
) -> Option<(Ranking, (usize, usize))> {
    let mut best: Option<(Ranking, (usize, usize), f32)> = None;
    // A skill opened by one sentence of a story must be surer than the router's threshold when
    // the rules ask (`sentence_skill_threshold`): a complaint inside venting is part of the
    // story.
    let skill_at = (input.router.embedded.sentence_skill_threshold).unwrap_or(0.0);
    let mut start = from;
    let ends = normalized[from..]
        .match_indices(['.', '!', '?', ';', '\n'])
        .map(|(i, _)| from + i)
        .chain(std::iter::once(normalized.len()));
    for end in ends {
        let (s, e) = (start, end);
        start = end + 1;
        let text = normalized[s..e].trim();
        if text.split_whitespace().count() < 3 {
            continue;
        }
        let at = s + (normalized[s..e].len() - normalized[s..e].trim_start().len());
        let ranking = index.rank_text(input, text, allowed, bias, true);
        let sure = match (&ranking.chosen, &ranking.best) {
            (Target::Tool(_), Some((_, p))) => *p,
            (Target::Skill(_), Some((_, p))) if *p >= skill_at => *p,
            _ => continue,
        };
        if best.as_ref().is_none_or(|b| sure > b.2) {
            best = Some((ranking, (at, at + text.len()), sure));
        }
    }
    best.map(|(r, span, _)| (r, span))
}

/// The ranking of `reading` (the message as the classifier reads it) from `from` without the
/// dictated words at `quote` (a quote frame's span, at `from` or after it), when it is sure of a
/// tool or skill; `None` when fewer than two words are left.
fn without_quote(
    index: &Index,
    input: &RouterInput<'_>,
    reading: &str,
    from: usize,
    quote: (usize, usize),
    allowed: &super::Allowed,
    bias: &[f32],
) -> Option<Ranking> {
    let (start, end) = quote;
    let before = reading.get(from..start)?;
    let after = reading.get(end..)?;
    let rest = [before.trim_end(), " ", after.trim_start()].concat();
    if rest.split_whitespace().count() < 2 {
        return None;
    }
    let ranking = index.rank_text(input, rest.trim(), allowed, bias, true);
    matches!(ranking.chosen, Target::Tool(_) | Target::Skill(_)).then_some(ranking)
}

/// The trace line of one ranking: the chosen class, its probability and the runner-up. Its
/// strings are joined with `concat` rather than `format!`: this runs on every embedded call,
/// and the formatting machinery was a seventh of one.
fn confidence(ranking: &Ranking, part: Option<&str>) -> ModelNote {
    let name = |t: &Target| match t {
        Target::Tool(id) => String::from(&**id),
        Target::Skill(id) => ["skill ", id].concat(),
        Target::Leave => "leaving the skill".into(),
        Target::Chat => "no tool".into(),
    };
    // Each probability written once, for the prose and for its fact: a float's `{:.2}` is the
    // dearest part of this note.
    let best_p = ranking.best.as_ref().map(|(t, p)| (t, format!("{p:.2}")));
    let runner_up_p = ranking
        .runner_up
        .as_ref()
        .map(|(t, p)| (t, format!("{p:.2}")));
    let best = best_p.as_ref().map_or("nothing".into(), |(t, p)| {
        [&name(t), " (p=", p, ")"].concat()
    });
    let runner_up = runner_up_p
        .as_ref()
        .map_or("none".into(), |(t, p)| [&name(t), " (p=", p, ")"].concat());
    let chose = name(&ranking.chosen);
    let effect = match part {
        Some(text) => ["embedded chose ", &chose, " for the part '", text, "'"].concat(),
        None => ["embedded chose ", &chose].concat(),
    };
    let mut facts = Vec::new();
    if let Some((t, p)) = best_p {
        facts.push(Fact::of(FactKind::Best).name(code(t)).value(p));
    }
    let why = if let Some((missing, rule)) = &ranking.ruled_out {
        facts.push(
            Fact::of(FactKind::RuledOut)
                .name(code(missing))
                .value(rule.to_string()),
        );
        format!(
            "{} would have been the best, but context rule {rule} rules it out (ask_back): no tool, the answer asks for what is missing; best allowed {best}",
            name(missing)
        )
    } else if let Some((partner, p)) = &ranking.torn {
        facts.push(
            Fact::of(FactKind::Confusable)
                .name(code(partner))
                .value(format!("{p:.2}")),
        );
        format!(
            "best {best} and {} (p={p:.2}) are a confusable pair (router.embedded.confusable): no tool, the answer asks back",
            name(partner)
        )
    } else if ranking
        .best
        .as_ref()
        .is_some_and(|(t, _)| *t == ranking.chosen)
    {
        ["best ", &best, ", runner-up ", &runner_up].concat()
    } else {
        facts.push(Fact::of(FactKind::NotSure));
        [
            "best ",
            &best,
            " was not sure enough (threshold, margin), runner-up ",
            &runner_up,
        ]
        .concat()
    };
    if let Some((t, p)) = runner_up_p {
        facts.push(Fact::of(FactKind::RunnerUp).name(code(t)).value(p));
    }
    let mut note = ModelNote::new(effect, why)
        .kind(EffectKind::Chose)
        .subject(code(&ranking.chosen));
    note.facts = facts;
    note
}

/// A class as a value: `tool:ID`, `skill:ID`, `leave` or `chat`.
fn code(t: &Target) -> String {
    match t {
        Target::Tool(id) => ["tool:", id].concat(),
        Target::Skill(id) => ["skill:", id].concat(),
        Target::Leave => "leave".into(),
        Target::Chat => "chat".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::original_slice;

    #[test]
    fn a_part_of_the_original_is_cut_where_the_normalised_one_is() {
        let original = "Zeigen Sie die STATISTIK und Schreiben Sie Über";
        let normalized = original.to_lowercase();
        let at = normalized.find(" und ").expect("connective");
        assert_eq!(
            original_slice(original, &normalized, 0, at).unwrap_or_default(),
            "Zeigen Sie die STATISTIK"
        );
        let after = at + " und ".len();
        assert_eq!(
            original_slice(original, &normalized, after, normalized.len()).unwrap_or_default(),
            "Schreiben Sie Über"
        );
    }
}

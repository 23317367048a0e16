//! Text matching. The user's message is normalised once per request (lower case, the character
//! folds the rules define, e.g. a letter written two ways, and what `matching` asks for:
//! composition, invisible characters dropped, look-alike letters, transliteration), and all word
//! lists of a ruleset are matched in one pass by a [`Scanner`]. Normalising may remove, join or
//! replace characters, so [`Normalized`] keeps where each character came from and spans in the
//! trace point into what the user wrote.
//!
//! The files below `mod.rs` form no circle: `words` (what a word is), `entry`, `endings` and
//! `normalized` are leaves; the matchers are built on them, and `mod.rs` only names the face.
//!
//! Why not one regex with `\b`: Unicode `\b` makes `RegexSet` fall back to a slow engine on
//! Cyrillic text (hundreds of microseconds for sixty patterns); the scanner's automata cost
//! well under one, and run a pattern only where one of its literal prefixes occurs.

mod alphabet;
mod endings;
mod entry;
pub(crate) mod fuzzy;
mod gate;
mod names;
mod normalize;
mod normalized;
mod pattern;
mod phrase;
mod scan;
mod slips;
mod stems;
mod translit;
mod word_matcher;
mod words;

pub use endings::Endings;
pub use entry::{DEFAULT_GAP, EntryError, Hit, MAX_PATTERN_LEN, REGEX_SIZE_LIMIT, compile_pattern};
pub(crate) use gate::{Gates, gate};
pub use names::{NameForms, base_name, find_name, name_words};
pub use normalize::{Normalizer, NormalizerOptions};
pub use normalized::Normalized;
pub use pattern::{ListPattern, compile_list_pattern, compile_list_patterns};
pub(crate) use phrase::TypoLengths;
pub use phrase::{GAP, find_phrase};
pub use scan::{Hits, ListHit, ListOptions, ListSpec, Negated, Scanner};
pub use slips::Slips;
pub use translit::Transliteration;
pub use word_matcher::WordMatcher;
pub(crate) use words::{char_len, is_alphanumeric, is_word, word_spans};

//! A normalised message: its text, and where each character came from.

/// A normalised message: the text the rules match, and where its characters came from.
#[derive(Debug, Clone, Default)]
pub struct Normalized {
    pub text: String,
    /// For each character of `text`, its index among the original's characters, then the
    /// original's length; `None` when the two line up one to one.
    pub(super) origin: Option<Vec<u32>>,
    /// Byte offsets in `text` of letters read through a look-alike of another script.
    pub(super) folded: Vec<usize>,
    /// Byte spans in `text` of words read through the transliteration table.
    pub(super) read: Vec<(usize, usize)>,
    /// The byte span of every word of `text`, in order (found while normalising, so the
    /// scanner does not look for word boundaries again).
    pub(super) words: Vec<(u32, u32)>,
}

impl Normalized {
    /// The span `start..end` (bytes of `text`) in characters of the original message.
    pub fn char_span(&self, start: usize, end: usize) -> (usize, usize) {
        let s = self.text[..start].chars().count();
        let e = s + self.text[start..end].chars().count();
        match &self.origin {
            None => (s, e),
            Some(o) => {
                let at = |k: usize| o.get(k).map_or(k, |&v| v as usize);
                (at(s), at(e))
            }
        }
    }

    /// The byte span (start, end) of every word of `text`, in order.
    pub fn words(&self) -> &[(u32, u32)] {
        &self.words
    }

    /// Whether a letter in `start..end` was read through a look-alike of another script.
    pub fn folded_within(&self, start: usize, end: usize) -> bool {
        self.folded.iter().any(|&b| (start..end).contains(&b))
    }

    /// Whether a word in `start..end` was read through the transliteration table.
    pub fn read_within(&self, start: usize, end: usize) -> bool {
        self.read.iter().any(|&(a, b)| a < end && start < b)
    }
}

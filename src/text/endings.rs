//! A language's word endings (`matching.word_endings`).

/// The endings a language allows after a word's stem (`matching.word_endings`): with them, an
/// entry `book` matches "book", "books", "booked" — the word in its forms — and not
/// "bookkeeper". Normalised like the entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endings {
    set: rustc_hash::FxHashSet<String>,
    longest: usize,
}

impl Endings {
    /// The endings, already normalised as the entries are (an empty one is implied).
    pub fn new(normalized: impl IntoIterator<Item = String>) -> Self {
        let set: rustc_hash::FxHashSet<String> =
            normalized.into_iter().filter(|e| !e.is_empty()).collect();
        let longest = set.iter().map(String::len).max().unwrap_or(0);
        Self { set, longest }
    }

    /// Whether `rest` (what follows a stem up to the end of its word) is an allowed ending.
    pub fn allows(&self, rest: &str) -> bool {
        rest.is_empty() || (rest.len() <= self.longest && self.set.contains(rest))
    }

    /// The length in bytes of the longest ending.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// How many endings there are.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether there are none (then a stem's word must be the stem itself).
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

//! Which letter a slip of typing may put in place of another (`matching.typos.slips`): a
//! neighbour on the keyboard (beside it on its row, or touching it on the row above or below)
//! or a letter that sounds alike. A word one *substitution* from a known word is read as that
//! word only when the two letters are such a pair: a real word one letter from another
//! ("drivers" and "divers" differ by an extra letter; "mouse" and "house" by a letter far from
//! it) is then not taken for a slip of it. A letter missing, extra, or two neighbours swapped
//! is a slip whatever the letters.

use rustc_hash::FxHashSet;

/// The letter pairs a slip may swap, both ways round.
#[derive(Debug, Clone, Default)]
pub struct Slips {
    pairs: FxHashSet<(char, char)>,
}

impl Slips {
    /// `keyboards`: each keyboard's letter rows, top to bottom, each written left to right (a
    /// row starts half a key to the right of the one above, as on a typewriter keyboard: the
    /// key below letter `k` of a row touches letters `k` and `k + 1` of that row). `alike`:
    /// groups of letters that sound alike, every two letters of a group a pair. Both lower
    /// case, as the normalised message has them.
    pub fn new(keyboards: &[Vec<String>], alike: &[String]) -> Self {
        let mut pairs = FxHashSet::default();
        let mut add = |a: char, b: char| {
            if a != b {
                pairs.insert((a, b));
                pairs.insert((b, a));
            }
        };
        for keyboard in keyboards {
            let rows: Vec<Vec<char>> = keyboard.iter().map(|r| r.chars().collect()).collect();
            for (r, row) in rows.iter().enumerate() {
                for (k, &c) in row.iter().enumerate() {
                    if let Some(&next) = row.get(k + 1) {
                        add(c, next);
                    }
                    let below = rows.get(r + 1).map_or(&[][..], Vec::as_slice);
                    for i in [k.checked_sub(1), Some(k)].into_iter().flatten() {
                        if let Some(&b) = below.get(i) {
                            add(c, b);
                        }
                    }
                }
            }
        }
        for group in alike {
            let letters: Vec<char> = group.chars().collect();
            for (i, &a) in letters.iter().enumerate() {
                for &b in &letters[i + 1..] {
                    add(a, b);
                }
            }
        }
        Self { pairs }
    }

    /// Whether a slip may type `typed` for `meant`.
    pub fn swaps(&self, meant: char, typed: char) -> bool {
        meant == typed || self.pairs.contains(&(meant, typed))
    }

    /// Whether `typed`, one edit from `meant`, may be a slip of it: always, unless the edit is
    /// one letter put for another that is no pair of [`Slips::swaps`].
    pub fn may_be_slip(&self, meant: &str, typed: &str) -> bool {
        let mut a = meant.chars();
        let mut b = typed.chars();
        let mut wrong = None;
        loop {
            match (a.next(), b.next()) {
                (Some(x), Some(y)) if x == y => {}
                (Some(x), Some(y)) if wrong.is_none() => wrong = Some((x, y)),
                // Two letters differ (two neighbours swapped), or the lengths do: no
                // substitution.
                (Some(_), Some(_)) | (Some(_), None) | (None, Some(_)) => return true,
                (None, None) => break,
            }
        }
        wrong.is_none_or(|(x, y)| self.swaps(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::Slips;

    fn owned(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    fn qwerty() -> Slips {
        let rows = owned(&["qwertyuiop", "asdfghjkl", "zxcvbnm"]);
        Slips::new(&[rows], &owned(&["sz", "dt"]))
    }

    #[test]
    fn neighbours_on_the_keyboard_and_letters_alike_are_slips_others_are_not() {
        let s = qwerty();
        // Beside on the row, and touching across rows (d touches e, r, x, c).
        for (a, b) in [
            ('e', 'r'),
            ('d', 'e'),
            ('d', 'r'),
            ('d', 'x'),
            ('d', 'c'),
            ('s', 'z'),
        ] {
            assert!(s.swaps(a, b) && s.swaps(b, a), "{a}{b}");
        }
        // Far apart: no slip. `d`/`t` are far, but declared alike.
        for (a, b) in [('d', 'y'), ('m', 'h'), ('q', 'p'), ('d', 'z')] {
            assert!(!s.swaps(a, b), "{a}{b}");
        }
        assert!(s.swaps('d', 't'));
    }

    #[test]
    fn only_a_letter_put_for_another_needs_a_pair() {
        let s = qwerty();
        assert!(s.may_be_slip("house", "hoise"), "u and i are neighbours");
        assert!(!s.may_be_slip("house", "mouse"), "h and m are not");
        assert!(s.may_be_slip("house", "hose"), "a letter missing");
        assert!(s.may_be_slip("house", "housse"), "a letter extra");
        assert!(s.may_be_slip("house", "hosue"), "two neighbours swapped");
        assert!(s.may_be_slip("house", "house"));
    }
}

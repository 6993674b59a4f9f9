//! Edit distance between names: "did you mean" suggestions and fuzzy name search.
//!
//! Plain Levenshtein (insert, delete, substitute; a transposition costs two) over
//! `char`s, not bytes: identifiers and paths may be non-ASCII, and `café` is one
//! edit from `cafe`, not two. Case is the caller's business (they lowercase).
//!
//! Written here rather than taken from `strsim` (which clap already builds):
//! the name retriever compares every distinct name of a project with every query
//! term and needs the bounded form, which stops as soon as a row of the table
//! exceeds the bound; `strsim` computes the whole table.

/// The number of single-`char` insertions, deletions and substitutions that turn
/// `a` into `b`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    edit_distance_within(a, b, usize::MAX).expect("every distance is within usize::MAX")
}

/// [`edit_distance`] when it is at most `max`, else `None`, usually long before
/// the whole table is computed: strings whose lengths differ by more than `max`
/// are refused before any allocation, and the computation stops at the first row
/// whose every cell exceeds `max` (cells never decrease down a column path).
pub fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let (na, nb) = (a.chars().count(), b.chars().count());
    if na.abs_diff(nb) > max {
        return None;
    }
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=nb).collect();
    let mut cur = vec![0; nb + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j + 1] + 1).min(cur[j] + 1).min(prev[j] + cost);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[nb] <= max).then_some(prev[nb])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        // (a, b, distance). The copies this replaced (edit's and engine's
        // `levenshtein`, code-graph's `edit_distance`, retrieval's
        // `bounded_levenshtein`) agreed on all of these; they differed only in
        // prefilters that compared byte lengths (engine's `locate`, code-graph's
        // `target`), which the bounded form now does in chars.
        let check = |a: &str, b: &str, want: usize| {
            assert_eq!(edit_distance(a, b), want, "{a:?} {b:?}");
            assert_eq!(edit_distance(b, a), want, "{b:?} {a:?} (symmetric)");
            assert_eq!(edit_distance_within(a, b, want), Some(want), "{a:?} {b:?} at {want}");
            if want > 0 {
                assert_eq!(edit_distance_within(a, b, want - 1), None, "{a:?} {b:?} below");
            }
        };
        check("", "", 0);
        check("", "abc", 3);
        check("abc", "abc", 0);
        check("kitten", "sitting", 3);
        check("flaw", "lawn", 2);
        // A transposition is two edits (Levenshtein, not Damerau).
        check("ab", "ba", 2);
        check("get_user", "get_usre", 2);
        // Case counts: callers lowercase first.
        check("Foo", "foo", 1);
        // Chars, not bytes: é is two bytes, one edit.
        check("café", "cafe", 1);
        check("한국", "한글", 1);
        check("naïve", "naive", 1);
    }

    #[test]
    fn bounded_stops_early() {
        // Lengths too far apart: refused on the counts alone.
        assert_eq!(edit_distance_within("abcd", "ab", 1), None);
        // In chars: "éé" is two chars (four bytes) and "e" one; a byte-length
        // prefilter would refuse the pair at 2, though it is two edits apart.
        assert_eq!(edit_distance_within("éé", "e", 1), None);
        assert_eq!(edit_distance_within("éé", "e", 2), Some(2));
        assert_eq!(edit_distance_within("é", "e", 1), Some(1));
        // Same length, every char different.
        assert_eq!(edit_distance_within("abcdef", "uvwxyz", 2), None);
        assert_eq!(edit_distance_within("abcdef", "uvwxyz", 6), Some(6));
    }
}

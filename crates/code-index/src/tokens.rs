//! Token counts with a real tokenizer.
//!
//! `o200k_base` (the GPT-4o / o-series vocabulary) ships inside the `tiktoken-rs`
//! crate, so counting needs no download. Other models' tokenizers differ by a few
//! percent; budgets are about fitting a context window, so one well-known vocabulary
//! is the honest choice over a characters-divided-by-four guess.

/// Builds the tokenizer's tables on a background thread (about a tenth of a second),
/// so that a command which will count tokens later overlaps that with its other work
/// (loading a snapshot). Counting before it is done simply waits for it.
pub fn warm_up_tokenizer() {
    std::thread::spawn(|| {
        tiktoken_rs::o200k_base_singleton();
    });
}

/// Number of tokens `text` takes in the `o200k_base` vocabulary.
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_like_tiktoken() {
        // Reference values from Python `tiktoken.get_encoding("o200k_base")`.
        assert_eq!(super::count_tokens(""), 0);
        assert_eq!(super::count_tokens("hello world"), 2);
    }
}

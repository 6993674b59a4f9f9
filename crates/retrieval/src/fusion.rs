//! Reciprocal-rank fusion, the one formula both rankings of this crate use: each
//! ranking votes `weight / (k + rank)` for every item it ranks (rank 1-based) and
//! the votes add up. Only ranks count, so retrievers whose scores are on
//! different scales (BM25, edit distance, PageRank) combine without calibration.
//!
//! The two users differ in `k` and in what a ranking is, on purpose:
//!
//! - `hybrid_search`: `k = 60` (Cormack et al.'s constant). Five or six
//!   retrievers rank up to 100 definitions each; a flat curve lets agreement
//!   between retrievers outweigh one retriever's first place. A retriever's
//!   weight is also scaled per item by its confidence (an exact name against a
//!   fuzzy one), and ranks are list positions.
//! - `localize`: `k = 10`, measured (`scripts/bench_localize.py`). A dozen
//!   per-file signals, most of which reach few files; a steep curve lets a
//!   signal's first files dominate. Ranks are competition ranks (files a signal
//!   scores equally share the better rank). Its second stage, the extra
//!   retriever's whole-ranking vote against the signals' ranking, uses the same
//!   `k`.

/// One ranking's vote for the item it ranks at `rank` (1-based).
pub(crate) fn vote(k: f64, rank: u32, weight: f64) -> f64 {
    weight / (k + f64::from(rank))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn votes() {
        // (k, rank, weight, vote)
        let table = [
            (60.0, 1, 1.0, 1.0 / 61.0),
            (60.0, 100, 1.0, 1.0 / 160.0),
            (60.0, 1, 0.5, 0.5 / 61.0),
            (10.0, 1, 1.0, 1.0 / 11.0),
            (10.0, 2, 2.0, 2.0 / 12.0),
            (10.0, 20, 1.0, 1.0 / 30.0),
            (0.0, 4, 1.0, 0.25),
        ];
        for (k, rank, weight, want) in table {
            assert_eq!(vote(k, rank, weight), want, "k {k} rank {rank} weight {weight}");
        }
        // The steeper curve: localize's first place is worth 2.5 of its fourth
        // ranks, hybrid search's only 1.05.
        assert!(vote(10.0, 1, 1.0) / vote(10.0, 4, 1.0) > 1.2);
        assert!(vote(60.0, 1, 1.0) / vote(60.0, 4, 1.0) < 1.06);
    }
}

//! Weighted, personalized PageRank.
//!
//! `petgraph`'s PageRank takes neither edge weights nor a personalization vector;
//! both matter here (a file that imports another and calls twenty of its functions
//! is closer than one that mentions a name once; a query's files are where the
//! random walk restarts), so this is the plain power iteration, written out.

/// Scores that sum to 1. `out[i]` holds the weighted edges leaving node `i`;
/// `restart`, when given, is where the walk jumps back to (it need not be
/// normalized; all zeros means uniform). Dangling nodes hand their mass to the
/// restart distribution. Stops when an iteration moves less than `1e-9` in total,
/// or after 100 iterations.
pub fn pagerank(out: &[Vec<(u32, f64)>], restart: Option<&[f64]>, damping: f64) -> Vec<f64> {
    let n = out.len();
    if n == 0 {
        return Vec::new();
    }
    let uniform = 1.0 / n as f64;
    let restart: Vec<f64> = match restart {
        Some(r) if r.iter().any(|&x| x > 0.0) => {
            let total: f64 = r.iter().filter(|x| **x > 0.0).sum();
            r.iter().map(|&x| x.max(0.0) / total).collect()
        }
        _ => vec![uniform; n],
    };
    // Flattened, with each edge's share of its node's out-weight computed once:
    // the loop below runs up to 100 times over every edge, and on a symbol graph of
    // a large repository (~40k nodes, ~300k edges) a `Vec` per node and a division
    // per edge were most of the time.
    let mut offsets = Vec::with_capacity(n + 1);
    let mut targets = Vec::new();
    let mut shares = Vec::new();
    offsets.push(0);
    for edges in out {
        let total: f64 = edges.iter().map(|e| e.1.max(0.0)).sum();
        if total > 0.0 {
            for &(j, w) in edges {
                targets.push(j);
                shares.push(w.max(0.0) / total);
            }
        }
        offsets.push(targets.len());
    }
    let mut rank = restart.clone();
    let mut next = vec![0.0; n];
    for _ in 0..100 {
        let mut dangling = 0.0;
        next.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..n {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if a == b {
                dangling += rank[i];
                continue;
            }
            let mass = damping * rank[i];
            for (&j, &share) in targets[a..b].iter().zip(&shares[a..b]) {
                next[j as usize] += mass * share;
            }
        }
        let jump = 1.0 - damping + damping * dangling;
        for (x, r) in next.iter_mut().zip(&restart) {
            *x += jump * r;
        }
        let delta: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut rank, &mut next);
        if delta < 1e-9 {
            break;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::pagerank;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn table() {
        struct Case {
            name: &'static str,
            out: Vec<Vec<(u32, f64)>>,
            restart: Option<Vec<f64>>,
            check: fn(&[f64]) -> bool,
        }
        let cases = vec![
            Case {
                name: "a cycle is uniform",
                out: vec![vec![(1, 1.0)], vec![(2, 1.0)], vec![(0, 1.0)]],
                restart: None,
                check: |r| close(r, &[1.0 / 3.0; 3]),
            },
            Case {
                name: "a star's center ranks first",
                out: vec![vec![], vec![(0, 1.0)], vec![(0, 1.0)], vec![(0, 1.0)]],
                restart: None,
                check: |r| {
                    r[0] > r[1] && (r[1] - r[2]).abs() < 1e-12 && (r[2] - r[3]).abs() < 1e-12
                },
            },
            Case {
                name: "heavier edges carry more rank",
                out: vec![vec![(1, 9.0), (2, 1.0)], vec![(0, 1.0)], vec![(0, 1.0)]],
                restart: None,
                check: |r| r[1] > 2.0 * r[2],
            },
            Case {
                name: "restart favors the seed and its neighbours",
                out: vec![vec![(1, 1.0)], vec![], vec![(3, 1.0)], vec![]],
                restart: Some(vec![1.0, 0.0, 0.0, 0.0]),
                check: |r| r[0] > r[2] && r[1] > r[3] && r[2] < 1e-12,
            },
            Case {
                name: "all-zero restart means uniform",
                out: vec![vec![(1, 1.0)], vec![(0, 1.0)]],
                restart: Some(vec![0.0, 0.0]),
                check: |r| close(r, &[0.5, 0.5]),
            },
        ];
        for case in cases {
            let r = pagerank(&case.out, case.restart.as_deref(), 0.85);
            let total: f64 = r.iter().sum();
            assert!((total - 1.0).abs() < 1e-9, "{}: mass {total}", case.name);
            assert!((case.check)(&r), "{}: {r:?}", case.name);
        }
        assert!(pagerank(&[], None, 0.85).is_empty());
    }
}

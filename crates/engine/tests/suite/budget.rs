//! `understand` answers fit the caller's token budget, however large the target.

use protocol::UnderstandRequest;
use serde_json::json;
use test_support::TempProject;

use super::{call, open};

/// A module big enough that its full answer is tens of thousands of tokens.
fn big_project() -> TempProject {
    let p = TempProject::new();
    let mut src = String::from("\"\"\"A large module.\"\"\"\n\n");
    for i in 0..900 {
        src.push_str(&format!(
            "def handler_{i}(request, session, retries={i}):\n    \"\"\"Handle request kind {i} with its session.\"\"\"\n    return helper_{j}(request) + {i}\n\n\n",
            j = (i + 1) % 900
        ));
        src.push_str(&format!("def helper_{i}(request):\n    return len(request) * {i}\n\n\n"));
    }
    p.write("src/big.py", &src);
    for k in 0..20 {
        p.write(
            &format!("src/user_{k}.py"),
            format!("from src.big import handler_{k}\n\n\ndef use_{k}(r):\n    return handler_{k}(r, None)\n"),
        );
    }
    p
}

fn understand(budget: u32) -> (u32, bool, Vec<String>, usize) {
    let p = big_project();
    let ws = open(&p);
    let req: UnderstandRequest =
        serde_json::from_value(json!({"target": "src/big.py", "budget": budget})).unwrap();
    let resp = call(|c| ws.understand(&req, c)).unwrap();
    let text = serde_json::to_string(&resp).unwrap();
    let codes = resp.guidance.warnings.iter().map(|w| w.code.clone()).collect();
    (resp.tokens, resp.truncated, codes, code_index_tokens(&text))
}

fn code_index_tokens(text: &str) -> usize {
    code_index::count_tokens(text)
}

#[test]
fn a_small_budget_is_respected_and_the_cut_is_announced() {
    for budget in [1500u32, 4000, 8000] {
        let (tokens, truncated, codes, counted) = understand(budget);
        assert!(truncated, "budget {budget}: expected a cut");
        assert!(tokens <= budget, "budget {budget}: answer of {tokens} tokens");
        // The reported count is the real one, the TRUNCATED warning included (the
        // `tokens` field's own digits aside).
        assert!(
            counted.abs_diff(tokens as usize) <= 2,
            "budget {budget}: {tokens} said, {counted} counted"
        );
        assert!(counted <= budget as usize + 2, "budget {budget}: {counted} tokens counted");
        assert!(codes.iter().any(|c| c == "TRUNCATED"), "{codes:?}");
    }
}

#[test]
fn a_large_budget_keeps_the_whole_answer() {
    let (tokens, truncated, codes, _) = understand(1_000_000);
    assert!(!truncated);
    assert!(tokens > 8000, "the full answer is big: {tokens}");
    assert!(!codes.iter().any(|c| c == "TRUNCATED"), "{codes:?}");
}

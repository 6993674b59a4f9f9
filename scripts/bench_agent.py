#!/usr/bin/env python3
"""Agent mode's orchestration overhead: what `ironbees run` costs on top of the
model and the sandbox, for a whole run and per workflow transition.

The model is a Python server on 127.0.0.1 speaking the Anthropic Messages API
(JSON and SSE) that answers at once, as a function of the request, like
`calculator_model` in crates/cli/tests/suite/agent.rs: the planner gets a plan,
the coder's first turn a `change` tool call, its turn after a tool result a
summary, the validator a diagnosis. So nearly all of a run's time that is not
the model's `latencyMs` nor a sandboxed command's `durationMs` is ironbees'
own: process start, configuration, the session (index open and update), the
planner's repository context, checkpoints and events in SQLite, the overlay
edits, the run's workspace copy and its sync, and the final apply.

Variants, each a fixture project made here, run N times (files restored between
runs, `.ironbees/` kept, so the index is warm after the first run and the runs
pile up in `workflow.db` as they do for a user):

- `pytest`: calc.py + test_calc.py; the first fix is right (1 round).
- `pytest-retry`: the first fix returns None, pytest fails, the validator
  diagnoses, the second fix is right (2 rounds).
- `no-tests`: calc.py alone; validation finds nothing to run, so the run waits for
  a review, which the bench approves at once (`runs approve`, timed with the run).

    cargo build --release --bin ironbees
    python3 scripts/bench_agent.py --bin target/release/ironbees --n 10

Per run, from the JSON Lines (`timeMs` of every event, `latencyMs` of
`modelCall`, `durationMs` of `command`): wall = process start to exit as seen
here; model = sum of latencyMs; sandboxed = VALIDATE's wall time from its
`workspace` event (the copy synced) to its last `command` event: detecting the
build and test commands, the sandbox's set-up, the command, parsing its output
(the `command` event's own durationMs is shown beside it: for pytest it is the
time pytest prints, without the interpreter's start); overhead = wall - model -
sandboxed, split into start-up (process start to the run's first event), the
run (first to last event) and exit. Per transition: the time between two
consecutive `checkpoint` events less the model and sandboxed time between them,
i.e. the checkpoint plus whatever the node did besides waiting; its engine's
part is checkpoint to `nodeStarted` plus the node's last event to the next
checkpoint (state serialization and the SQLite commit). `timeMs` has millisecond
resolution, so per-transition numbers are +-1 ms each.
"""

import argparse
import hashlib
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CALC = (
    "def calculate(a, b, op):\n"
    '    if op == "+":\n'
    "        return a + b\n"
    '    if op == "/":\n'
    "        return a / b\n"
    "    raise ValueError(op)\n"
)
TEST_CALC = (
    "import pytest\n"
    "from calc import calculate\n\n\n"
    "def test_add():\n"
    '    assert calculate(1, 2, "+") == 3\n\n\n'
    "def test_divide_by_zero():\n"
    "    with pytest.raises(ValueError):\n"
    '        calculate(1, 0, "/")\n'
)
DIVISION = "        return a / b"
GUARDED = '        if b == 0:\n            raise ValueError("division by zero")\n        return a / b'
WRONG = "        if b == 0:\n            return None\n        return a / b"
REQUEST = "Fix the division by zero bug in calculate()"
STEPS = "steps"
EXTRA_TEST = '\n\ndef test_divide():\n    assert calculate(4, 2, "/") == 2\n'

VARIANTS = {
    # name: (files, the coder's first replacement)
    "pytest": ({"calc.py": CALC, "test_calc.py": TEST_CALC}, GUARDED),
    "pytest-retry": ({"calc.py": CALC, "test_calc.py": TEST_CALC}, WRONG),
    "no-tests": ({"calc.py": CALC}, GUARDED),
    # A three-step plan (the guard, a new module, a test), coded in the task
    # graph's two rounds: steps 1 and 2, then step 3 after them.
    "steps": ({"calc.py": CALC, "test_calc.py": TEST_CALC}, STEPS),
}


def sha256(s):
    return hashlib.sha256(s.encode()).hexdigest()


def plan_json(path, what):
    return json.dumps(
        {
            "spec": f"{what}; everything else unchanged.",
            "plan": {
                "summary": what,
                "steps": [
                    {
                        "number": 1,
                        "description": what,
                        "actionType": "MODIFY",
                        "filePath": path,
                        "rationale": "the failing test expects it",
                    }
                ],
                "affectedFiles": [path],
                "complexity": "LOW",
            },
        }
    )


def replace_args(path, base, old, new):
    return {
        "edits": [{"path": path, "targetString": old, "replacementString": new, "expectedHash": sha256(base)}],
        "options": {"dryRun": False},
    }


# --- the model ------------------------------------------------------------------------


def agent_of(body):
    system = json.dumps(body.get("system", ""))
    for a in ("Planner", "Coder", "Validator"):
        if f"# {a}" in system:
            return a
    return "unknown"


def after_tool(body):
    msgs = body.get("messages") or []
    return bool(msgs) and "tool_result" in json.dumps(msgs[-1].get("content", ""))


def steps_reply(body):
    """The `steps` variant: a three-step plan, each round's edits in one tool call."""
    agent = agent_of(body)
    conv = json.dumps(body.get("messages", []))
    if agent == "Planner":
        plan = json.loads(plan_json("calc.py", "Raise ValueError when calculate() divides by zero"))
        plan["plan"]["steps"] += [
            {"number": 2, "description": "the error message as a constant", "actionType": "CREATE", "filePath": "errors.py"},
            {"number": 3, "description": "test a division", "actionType": "MODIFY", "filePath": "test_calc.py"},
        ]
        plan["plan"]["affectedFiles"] = ["calc.py", "errors.py", "test_calc.py"]
        return json.dumps(plan), []
    if agent == "Coder" and after_tool(body):
        return "Done.", []
    if agent == "Coder" and "round 1 of 2" in conv:
        return "", [
            ("change", replace_args("calc.py", CALC, DIVISION, GUARDED)),
            ("write", {"path": "errors.py", "content": 'ZERO = "division by zero"\n'}),
        ]
    if agent == "Coder" and "round 2 of 2" in conv:
        old = 'calculate(1, 0, "/")\n'
        return "", [("change", replace_args("test_calc.py", TEST_CALC, old, old + EXTRA_TEST))]
    return None


def calculator_reply(body, first):
    """(text, [(tool name, input)]) for this request, as `calculator_model` answers."""
    if first == STEPS:
        return steps_reply(body)
    agent = agent_of(body)
    if agent == "Planner":
        return plan_json("calc.py", "Raise ValueError when calculate() divides by zero"), []
    if agent == "Validator":
        return (
            "Cause: calculate() returns None for b == 0 instead of raising.\n"
            'Fix: calc.py:6 raise ValueError("division by zero").',
            [],
        )
    if agent == "Coder" and after_tool(body):
        return "Guarded the division in calculate().", []
    if agent == "Coder" and "Validation failed" in json.dumps(body.get("messages", [])):
        wrong = CALC.replace(DIVISION, WRONG)
        return "", [("change", replace_args("calc.py", wrong, WRONG, GUARDED))]
    if agent == "Coder":
        return "", [("change", replace_args("calc.py", CALC, DIVISION, first))]
    return None


def chunks(s, n):
    return [s[i : i + n] for i in range(0, len(s), n)]


class Model:
    """The Anthropic Messages API on 127.0.0.1, answering at once."""

    def __init__(self):
        self.first = GUARDED
        self.calls = 0
        self.unknown = 0
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/messages":
                    return self.send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"no such path"}}')
                model.calls += 1
                reply = calculator_reply(body, model.first)
                if reply is None:
                    model.unknown += 1
                    err = {"type": "error", "error": {"type": "invalid_request_error", "message": "unknown agent"}}
                    return self.send(400, "application/json", json.dumps(err).encode())
                text, calls = reply
                mid = f"msg_bench_{model.calls}"
                name = body.get("model", "claude")
                if body.get("stream"):
                    self.send(200, "text/event-stream", "".join(sse(mid, name, text, calls)).encode())
                else:
                    self.send(200, "application/json", json.dumps(message(mid, name, text, calls)).encode())

            def send(self, status, ctype, data):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()


USAGE = {"input_tokens": 1000, "output_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def message(mid, model, text, calls):
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{mid}_{i}", "name": n, "input": a} for i, (n, a) in enumerate(calls)]
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": USAGE,
    }


def sse(mid, model, text, calls):
    """The event shapes of crates/test-support/src/mock_llm.rs (`sse_events`)."""

    def ev(name, data):
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    start = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": dict(USAGE, output_tokens=1)}
    yield ev("message_start", {"type": "message_start", "message": start})
    index = 0
    if text:
        yield ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        yield ev("ping", {"type": "ping"})
        # A real model streams a token (~4 characters) at a time.
        for piece in chunks(text, 4):
            yield ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
        yield ev("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    for i, (name, args) in enumerate(calls):
        block = {"type": "tool_use", "id": f"toolu_{mid}_{i}", "name": name, "input": {}}
        yield ev("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        for piece in [""] + chunks(json.dumps(args), 5):
            yield ev("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})
        yield ev("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    yield ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 100}})
    yield ev("message_stop", {"type": "message_stop"})


# --- a run ----------------------------------------------------------------------------


def environment(home, model_url):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRONBEES_", "ANTHROPIC_", "OPENAI_"))}
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".no-user-config")
    env["ANTHROPIC_API_KEY"] = "sk-ant-bench"
    env["ANTHROPIC_BASE_URL"] = model_url
    return env


def execute(args, env):
    p = subprocess.run(args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if p.returncode not in (0, 10) or not lines or "outcome" not in lines[-1]:
        sys.exit(f"run failed (exit {p.returncode}):\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return lines[:-1], lines[-1]["outcome"], p.stderr


def run_once(binary, root, env):
    t0 = time.time()
    events, outcome, stderr = execute([binary, "-C", root, "run", "--yes", "--json", REQUEST], env)
    # A change no build or test checked waits for a human's review even with --yes
    # (the no-tests variant): approve it at once, as part of the same run.
    if outcome.get("status", {}).get("node") == "WAIT_REVIEW":
        more, outcome, stderr = execute(
            [binary, "-C", root, "--json", "runs", "approve", outcome["runId"]], env
        )
        events += more
    t1 = time.time()
    if outcome.get("status", {}).get("type") != "succeeded":
        sys.exit(f"run did not succeed: {json.dumps(outcome.get('status'))}\nstderr:\n{stderr[-3000:]}")
    return analyse(events, t0 * 1000, t1 * 1000)


def custom(e, kind=None):
    """Whether `e` is a `kind` event: a typed one (`{"type": "modelCall", ...}`),
    or, in runs recorded before events were typed, a custom one."""
    k = e.get("kind", {})
    if k.get("type") == "custom":
        return kind is None or k.get("kind") == kind
    return kind is not None and k.get("type") == kind


def data(e):
    """A `custom` event's fields: the typed event itself, or an old one's `data`."""
    k = e["kind"]
    return k.get("data", {}) if k.get("type") == "custom" else k


def analyse(events, start_ms, end_ms):
    model = sum(data(e).get("latencyMs") or 0 for e in events if custom(e, "modelCall"))
    reported = sum(data(e).get("durationMs") or 0 for e in events if custom(e, "command"))
    # A `command` event's durationMs is the test tool's own figure when it prints
    # one (pytest's "in 0.02s"), without the interpreter's start, the collection
    # and the sandbox's set-up. The sandboxed segment as a wall time is from the
    # `workspace` event (the copy is synced) to the node's last `command` event.
    segments = []  # (start index, end index, ms)
    for i, e in enumerate(events):
        if custom(e, "workspace"):
            last = None
            for j in range(i + 1, len(events)):
                if events[j]["kind"].get("type") == "checkpoint":
                    break
                if custom(events[j], "command"):
                    last = j
            if last is not None:
                segments.append((i, last, events[last]["timeMs"] - e["timeMs"]))
    sandbox = sum(ms for _, _, ms in segments)
    wall = end_ms - start_ms
    # Tool calls (the coder's `change` against the overlay) are ironbees' own work.
    tools, pending = 0, {}
    for e in events:
        if custom(e, "toolCall"):
            pending[data(e)["id"]] = e["timeMs"]
        elif custom(e, "toolResult"):
            tools += e["timeMs"] - pending.pop(data(e)["id"], e["timeMs"])
    cps = [i for i, e in enumerate(events) if e["kind"].get("type") == "checkpoint"]
    transitions = []  # (node that ran, overhead ms, engine ms)
    for a, b in zip(cps, cps[1:]):
        waited = sum(data(e).get("latencyMs") or 0 for e in events[a + 1 : b] if custom(e, "modelCall"))
        waited += sum(ms for s, _, ms in segments if a < s < b)
        node = events[a]["kind"].get("node", "?")
        # The engine's own part: checkpoint to `nodeStarted`, and the node's last
        # event to the next checkpoint (serializing the state, the SQLite commit).
        started = next((i for i in range(a + 1, b) if events[i]["kind"].get("type") == "nodeStarted"), a)
        engine = events[started]["timeMs"] - events[a]["timeMs"] + events[b]["timeMs"] - events[b - 1]["timeMs"]
        transitions.append((node, events[b]["timeMs"] - events[a]["timeMs"] - waited, engine))
    return {
        "wall": wall,
        "model": model,
        "sandbox": sandbox,
        "reported": reported,
        "overhead": wall - model - sandbox,
        "startup": events[0]["timeMs"] - start_ms,  # process start to the run's first event
        "engine": events[-1]["timeMs"] - events[0]["timeMs"] - model - sandbox,
        "exit": end_ms - events[-1]["timeMs"],
        "tools": tools,
        "checkpoints": len(cps),
        "events": len(events),
        "model_calls": sum(1 for e in events if custom(e, "modelCall")),
        "commands": sum(1 for e in events if custom(e, "command")),
        "transitions": transitions,
    }


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def make_project(base, files):
    root = tempfile.mkdtemp(prefix="bench-agent-", dir=base)
    for name, text in files.items():
        with open(os.path.join(root, name), "w") as f:
            f.write(text)
    return root


def restore(root, files):
    for name, text in files.items():
        with open(os.path.join(root, name), "w") as f:
            f.write(text)
    # What a run created (the steps variant's module) goes too.
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if name not in files and not name.startswith(".") and os.path.isfile(path):
            os.remove(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "ironbees"))
    ap.add_argument("--n", type=int, default=10, help="measured runs per variant (default 10)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS))
    ap.add_argument("--dir", default=None, help="where the fixture projects go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the fixture projects")
    ap.add_argument("--target-ms", type=float, default=5.0, help="p50 per transition to meet (default 5)")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON too")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"no ironbees binary at {binary}: cargo build --release --bin ironbees")
    base = a.dir or tempfile.mkdtemp(prefix="bench-agent-")
    os.makedirs(base, exist_ok=True)
    model = Model()
    env = environment(base, model.url)
    results = {}
    try:
        for name in a.variants.split(","):
            files, first = VARIANTS[name]
            model.first = first
            root = make_project(base, files)
            runs = []
            for i in range(a.n):
                restore(root, files)
                r = run_once(binary, root, env)
                runs.append(r)
                print(
                    f"{name} #{i + 1}: wall {r['wall']:.0f} ms, model {r['model']} ms, sandbox {r['sandbox']} ms, "
                    f"overhead {r['overhead']:.0f} ms, {r['checkpoints']} checkpoints",
                    file=sys.stderr,
                )
            db = os.path.join(root, ".ironbees", "runs", "workflow.db")
            size = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
            results[name] = {"runs": runs, "db_bytes": size, "root": root}
    finally:
        model.close()
    report(results, a)
    if not a.keep and not a.dir:
        shutil.rmtree(base, ignore_errors=True)
    misses = [n for n, r in results.items() if pct([t for x in r["runs"] for _, t, _ in x["transitions"]], 50) >= a.target_ms]
    sys.exit(1 if misses else 0)


def report(results, a):
    print(f"\n{a.n} runs per variant; ms; p50 / p95\n")
    print("| variant | wall | model | sandboxed (tool's own) | overhead | of which: start-up | run | exit | checkpoints | events | workflow.db after the runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r in results.items():
        runs = r["runs"]

        def cell(key):
            xs = [x[key] for x in runs]
            return f"{pct(xs, 50):.0f} / {pct(xs, 95):.0f}"

        cps = sorted({x["checkpoints"] for x in runs})
        evs = statistics.median(x["events"] for x in runs)
        print(
            f"| {name} | {cell('wall')} | {cell('model')} | {cell('sandbox')} ({cell('reported')}) | {cell('overhead')} | {cell('startup')} "
            f"| {cell('engine')} | {cell('exit')} | {'/'.join(map(str, cps))} | {evs:.0f} | {r['db_bytes'] / 1024:.0f} KiB |"
        )
    print(f"\nPer transition: checkpoint to checkpoint, less the model and sandbox time between them (target p50 < {a.target_ms:g} ms)\n")
    print("| variant | transitions | p50 | p95 | max | met | engine's part p50 / p95 / max |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for name, r in results.items():
        ts = [t for x in r["runs"] for _, t, _ in x["transitions"]]
        es = [t for x in r["runs"] for _, _, t in x["transitions"]]
        p50 = pct(ts, 50)
        print(
            f"| {name} | {len(ts)} | {p50:.0f} | {pct(ts, 95):.0f} | {max(ts):.0f} | {'yes' if p50 < a.target_ms else 'no'} "
            f"| {pct(es, 50):.0f} / {pct(es, 95):.0f} / {max(es):.0f} |"
        )
    print("\nPer node (the transition out of it, less model and sandbox), p50 / p95 / max\n")
    print("| node | " + " | ".join(results) + " |")
    print("| --- |" + " ---: |" * len(results))
    nodes = []
    for r in results.values():
        for x in r["runs"]:
            nodes += [n for n, _, _ in x["transitions"] if n not in nodes]
    for node in nodes:
        cells = []
        for r in results.values():
            ts = [t for x in r["runs"] for n, t, _ in x["transitions"] if n == node]
            cells.append(f"{pct(ts, 50):.0f} / {pct(ts, 95):.0f} / {max(ts):.0f}" if ts else "-")
        print(f"| {node} | " + " | ".join(cells) + " |")
    tools = [x["tools"] for r in results.values() for x in r["runs"]]
    print(f"\ncoder's `change` calls against the overlay, per run: p50 {pct(tools, 50):.0f} ms")
    if a.json:
        print(json.dumps({n: {k: v for k, v in r.items() if k != "root"} for n, r in results.items()}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A question answered by agent mode (seed 002: explain and look-up requests skip
the plan/code loop): ironbees' own latency and the tokens it sends, on real
repositories.

`ironbees run --json "QUESTION"` against the model server of bench_agent.py
(the Anthropic Messages API on 127.0.0.1), whose answerer answers at once with a
fixed paragraph. So the wall time is ironbees' own: process start, the session
(the index opened and brought up to date), the route, the answerer's Layer 0
(repository map around the question, `localize`'s files and their outlines),
the checkpoints and events. The tokens are what the one model request carried
(its JSON body's characters / 4, the usual estimate; the system prompt and the
tool schemas included), against the seed's target of under 10,000 for "Explain
how user login works".

Each repository is indexed once first (`ironbees index`), so the runs measure a
warm project as a user has it after the first command. Seed 002's latency
targets: a simple question under 3 s, a complex one under 10 s (with a model;
here without its time).

    cargo build --release --bin ironbees
    python3 scripts/bench_answer.py --bin target/release/ironbees \\
        --repo flask=/path/to/flask --repo sympy=/path/to/sympy --n 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_agent  # noqa: E402  (the model server and its wire format)

QUESTIONS = [
    ("simple", "Where is {symbol} defined?"),
    ("explain", "Explain how {topic} works"),
    ("flow", "How does {flow}?"),
]

# Per repository: what the questions are about (they must name real code).
TOPICS = {
    "flask": {"symbol": "url_for", "topic": "the application context", "flow": "Flask dispatch a request to a view function"},
    "sympy": {"symbol": "simplify", "topic": "expression simplification", "flow": "sympify turn a string into an expression"},
    "pylint": {"symbol": "PyLinter", "topic": "message filtering by confidence", "flow": "pylint load its configuration file"},
    "pytest": {"symbol": "fixture", "topic": "fixture scoping", "flow": "pytest collect test functions from a module"},
}

ANSWER = "The answer: `path.py:1` defines it; it is called from the request handling."


class Recorder:
    """Wraps bench_agent's replies: the answerer gets ANSWER; the body's size is kept."""

    def __init__(self):
        self.sizes = []

    def reply(self, body, first):
        system = json.dumps(body.get("system", ""))
        if "# Answerer" in system:
            self.sizes.append(len(json.dumps(body)))
            return ANSWER, []
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--repo", action="append", required=True, help="NAME=PATH (NAME one of %s)" % ", ".join(TOPICS))
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--json-out")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    rec = Recorder()
    bench_agent.calculator_reply = rec.reply
    model = bench_agent.Model()
    home = tempfile.mkdtemp(prefix="bench-answer-")
    os.makedirs(os.path.join(home, ".no-user-config"), exist_ok=True)
    env = bench_agent.environment(home, model.url)
    rows = []
    for spec in a.repo:
        name, path = spec.split("=", 1)
        t0 = time.time()
        subprocess.run([binary, "-C", path, "index"], env=env, check=True, capture_output=True)
        index_s = time.time() - t0
        for kind, template in QUESTIONS:
            q = template.format(**TOPICS[name])
            walls, firsts, tokens, failure = [], [], [], None
            for _ in range(a.n):
                before = len(rec.sizes)
                t0 = time.time()
                p = subprocess.run([binary, "-C", path, "run", "--json", q], env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True)
                wall = time.time() - t0
                lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
                outcome = lines[-1].get("outcome", {}) if lines else {}
                if p.returncode != 0 or outcome.get("state", {}).get("answer") != ANSWER:
                    # Not answered (routed as a change, or failed): said in the table.
                    route = outcome.get("state", {}).get("route") or {}
                    failure = f"not answered: exit {p.returncode}, routed as {route.get('intent')} by {route.get('cues')}"
                    break
                start = lines[0]["timeMs"]
                call = next(l for l in lines if l.get("kind", {}).get("type") == "modelCall")
                walls.append(wall)
                # From the run's first event to the model call's end, less the model's own latency.
                firsts.append((call["timeMs"] - start - call["kind"].get("latencyMs", 0)) / 1000)
                tokens.extend(s // 4 for s in rec.sizes[before:])
            if failure:
                row = {"repo": name, "kind": kind, "question": q, "n": a.n, "failure": failure}
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            row = {
                "repo": name, "kind": kind, "question": q, "n": a.n,
                "wall_p50_s": round(statistics.median(walls), 3), "wall_max_s": round(max(walls), 3),
                "to_model_p50_s": round(statistics.median(firsts), 3),
                "tokens_p50": int(statistics.median(tokens)), "tokens_max": max(tokens),
                "index_s": round(index_s, 2),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    model.close()
    print()
    print("| repo | question | wall p50 (max) | run start → model call p50 | tokens sent p50 (max) |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        if "failure" in r:
            print(f"| {r['repo']} | {r['question']} | {r['failure']} | | |")
            continue
        print(f"| {r['repo']} | {r['question']} | {r['wall_p50_s']} s ({r['wall_max_s']} s) | "
              f"{r['to_model_p50_s']} s | {r['tokens_p50']:,} ({r['tokens_max']:,}) |")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"rows": rows, "binary": binary, "nproc": os.cpu_count(), "n": a.n}, f, indent=1)


if __name__ == "__main__":
    main()

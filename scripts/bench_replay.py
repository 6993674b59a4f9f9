#!/usr/bin/env python3
"""The replay benchmark (issue 39): each SWE-bench Lite gold patch replayed through
`ironbees run` on the instances scripts/replay_setup.py built, with a wire-level
mock model, and checked outside ironbees.

Per kept instance of OUT/manifest.json (and per variant), a mock model server on
127.0.0.1 speaking the Anthropic Messages API (JSON and SSE, the shapes of
scripts/bench_agent.py) answers by the agent that asks:

- the planner: a plan naming the gold patch's files;
- the coder: one `change` tool call whose edits write the gold patch's result
  (`create` with `overwrite` and the file's whole new content, `create` for a new
  file, `delete` for a removed one), then, after the tool result, a short summary;
- the validator: a diagnosis.

Variants: `gold` (the coder's first round is the gold patch) and `noop-first`
(its first round only appends a comment to one of the gold patch's files, which
VALIDATE must reject; every later round is the gold patch).

`ironbees run --yes --json "<problem statement>"` runs in the instance directory
with only the mock's variables set (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY; no
PYTHONPATH, no virtualenv activated, XDG_CONFIG_HOME pointed at an empty
directory so no user configuration applies), `--timeout` large enough for a whole
suite (`--run-timeout`, default 7200 s: ironbees cuts any execution past it). From
its JSON Lines: the outcome's status, the rounds (CODE iterations), BASELINE (its
`workspace` event and its `command` events, `"scope": "baseline"`: never counted as
a round), per VALIDATE the wall time from its `workspace` event to its last
`command` event, the time to the end of its targeted tests (`"scope": "targeted"`,
which run first), the whole suite's time (`"scope": "full"`) and each `command`
(tool, scope, exit code, wall time, first failures); runs from before BASELINE (no
scope) still read. Then, outside ironbees, `.venv/bin/python -m pytest
-rA` on the test patch's files: FAIL_TO_PASS pass, PASS_TO_PASS (those that pass
here with the gold patch, see replay_setup.py) still pass; a run that applied nothing
left the instance's HEAD, whose tests the setup checked, and is not tested again. Then `ironbees undo`
(when the run applied something) and the tree must equal the instance's HEAD
(`git status --porcelain` empty). A run that waits for a human is cancelled
(`runs cancel`); the tree is reset to HEAD before the next run either way.

    cargo build --release --bin ironbees
    python3 scripts/bench_replay.py --dataset /work/replay-data/swe-bench-lite.json \\
        --instances /work/replay-data/instances --json-out /work/replay-data/replay.json

The results are written to `--json-out` after every run; run the same command again
and the runs already there are kept, the rest run (`--fresh` starts over).

`--suite-time REPO[=INSTANCE],...` also times each named repository's whole test
suite outside ironbees (`.venv/bin/python -m pytest -q -p no:cacheprovider
--continue-on-collection-errors`, once per repository, on the instance named or its
first kept one): the "full" against which a targeted VALIDATE round is compared.
"""

import argparse
import datetime
import http.server
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_agent  # noqa: E402  (the wire shapes: message(), sse())
import replay_setup as rs  # noqa: E402  (dataset, patch files, the pytest check)

NOOP_COMMENT = "\n# replay benchmark: a no-op change\n"


# --- what the gold patch writes ----------------------------------------------------------


def gold_files(root, patch):
    """[(path, kind, new content or None, base content or None)] for the gold patch, read
    from a scratch index: the working tree is not touched."""
    files = rs.patch_files(patch)
    with tempfile.TemporaryDirectory(prefix="replay-index-") as tmp:
        env = dict(rs.clean_env(), GIT_INDEX_FILE=os.path.join(tmp, "index"))
        subprocess.run(["git", "-C", root, "read-tree", "HEAD"], env=env, check=True)
        p = subprocess.run(["git", "-C", root, "apply", "--cached", "--whitespace=nowarn", "-"], env=env, input=patch.encode(),
                           capture_output=True)
        if p.returncode != 0:
            raise RuntimeError(f"the gold patch does not apply: {p.stderr.decode()[-500:]}")

        def show(spec):
            q = subprocess.run(["git", "-C", root, "show", spec], env=env, capture_output=True)
            return q.stdout.decode() if q.returncode == 0 else None

        out = []
        for path, kind in files:
            new = None if kind == "delete" else show(f":{path}")
            base = None if kind == "create" else show(f"HEAD:{path}")
            out.append((path, kind, new, base))
    return out


def gold_edits(files):
    edits = []
    for path, kind, new, _ in files:
        if kind == "delete":
            edits.append({"op": "delete", "path": path})
        elif kind == "create":
            edits.append({"op": "create", "path": path, "content": new})
        else:
            edits.append({"op": "create", "path": path, "content": new, "overwrite": True})
    return {"edits": edits, "options": {"dryRun": False}}


def noop_edits(files):
    """A comment appended to the first file the gold patch modifies: valid Python, changes nothing."""
    path, _, _, base = next(f for f in files if f[1] == "modify" and f[0].endswith(".py"))
    return {"edits": [{"op": "create", "path": path, "content": base.rstrip("\n") + "\n" + NOOP_COMMENT, "overwrite": True}],
            "options": {"dryRun": False}}


def plan_json(files, statement):
    title = statement.strip().splitlines()[0][:150] if statement.strip() else "the issue"
    action = {"modify": "MODIFY", "create": "CREATE", "delete": "DELETE"}
    steps = [
        {"number": i + 1, "description": f"{action[k].title()} {p} to fix: {title}", "actionType": action[k],
         "filePath": p, "rationale": "the issue's behaviour comes from this file"}
        for i, (p, k, _, _) in enumerate(files)
    ]
    return json.dumps({
        "spec": f"Fix: {title}. The tests that reproduce it pass; every other test still passes.",
        "plan": {"summary": f"Fix: {title}", "steps": steps, "affectedFiles": [p for p, _, _, _ in files],
                 "complexity": "MEDIUM" if len(files) > 1 else "LOW"},
    })


# --- the model ------------------------------------------------------------------------


class Model:
    """The Anthropic Messages API on 127.0.0.1 for one instance and variant."""

    def __init__(self, files, statement, variant):
        self.calls = []  # (agent, what was answered)
        self.unknown = 0
        plan = plan_json(files, statement)
        gold = gold_edits(files)
        noop = noop_edits(files) if variant == "noop-first" else None
        model = self

        def reply(body):
            agent = bench_agent.agent_of(body)
            msgs = json.dumps(body.get("messages", []))
            if agent == "Planner":
                return "plan", plan, []
            if agent == "Validator":
                return "diagnosis", ("Cause: the change does not yet fix the issue; the failing tests above show it.\n"
                                     "Fix: make the change the plan describes in the planned files."), []
            if agent == "Coder" and bench_agent.after_tool(body):
                return "summary", "Made the change the plan describes.", []
            if agent == "Coder":
                if noop is not None and "## Validation failed after round" not in msgs:
                    return "noop", "", [("change", noop)]
                return "gold", "", [("change", gold)]
            return None

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"no such path"}}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/messages":
                    return self.send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"no such path"}}')
                r = reply(body)
                if r is None:
                    model.unknown += 1
                    err = {"type": "error", "error": {"type": "invalid_request_error", "message": "unknown agent"}}
                    return self.send(400, "application/json", json.dumps(err).encode())
                what, text, calls = r
                model.calls.append(what)
                mid = f"msg_replay_{len(model.calls)}"
                name = body.get("model", "claude")
                if body.get("stream"):
                    self.send(200, "text/event-stream", "".join(bench_agent.sse(mid, name, text, calls)).encode())
                else:
                    self.send(200, "application/json", json.dumps(bench_agent.message(mid, name, text, calls)).encode())

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
        self.server.server_close()


def environment(home, model_url):
    """The caller's environment with only the mock's variables added: nothing of
    Python's (PYTHONPATH, VIRTUAL_ENV) and no user configuration."""
    env = rs.clean_env()
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".no-user-config")
    env["ANTHROPIC_API_KEY"] = "sk-ant-replay"
    env["ANTHROPIC_BASE_URL"] = model_url
    return env


# --- a run ----------------------------------------------------------------------------


def run_ironbees(binary, root, request, env, args, log):
    argv = [binary, "-C", root, "run", "--yes", "--json", "--timeout", f"{args.run_timeout}s", request]
    t0 = time.time()
    p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=args.wall_timeout)
    wall = time.time() - t0
    with open(log, "w") as f:
        f.write(p.stdout)
    with open(log + ".stderr", "w") as f:
        f.write(p.stderr)
    lines = []
    for line in p.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    outcome = lines[-1]["outcome"] if lines and "outcome" in lines[-1] else None
    events = [e for e in lines if "kind" in e]
    return p.returncode, events, outcome, wall, p.stderr


def event(e):
    """(kind, data) of a run event, in either shape: the typed one (`{"type": "command",
    ...fields}`, protocol::RunEventKind since c89fb3c) or the older custom one (`{"type":
    "custom", "kind": "command", "data": {...}}`)."""
    k = e.get("kind", {})
    if k.get("type") == "custom":
        return k.get("kind"), k.get("data") or {}
    return k.get("type"), k


def custom(e, kind=None):
    name, _ = event(e)
    return kind is None or name == kind


def command_row(c):
    return ({k: c.get(k) for k in ("kind", "scope", "tool", "success", "exitCode", "wallMs", "durationMs", "failures", "failed")}
            | {"command": " ".join(c.get("command") or [])[:300] if isinstance(c.get("command"), list) else c.get("command"),
               "outputTail": (c.get("outputTail") or "")[-1500:]})


def groups(events):
    """Each `workspace` event with the `command` events after it (up to the next
    checkpoint), tagged with the node it ran in (the last `nodeStarted`): BASELINE
    (since 87a1174, once before the first CODE round) or VALIDATE."""
    node, out = None, []
    for i, e in enumerate(events):
        name, data = event(e)
        if name == "nodeStarted":
            node = data.get("node")
        elif name == "workspace":
            cmds, last = [], None
            for j in range(i + 1, len(events)):
                if events[j]["kind"].get("type") == "checkpoint":
                    break
                if custom(events[j], "command"):
                    cmds.append(event(events[j])[1])
                    last = j
            # A group whose commands all say `"scope": "baseline"` is the baseline even
            # without a nodeStarted before it.
            base = bool(cmds) and all(c.get("scope") == "baseline" for c in cmds)
            out.append((i, "BASELINE" if base else node, e, cmds, last))
        elif name == "validationReused":
            out.append((i, "VALIDATE", e, None, None))
    return out


def baseline_of(events):
    """BASELINE (new event shape only): its wall time, its commands, the number of
    tests that failed before any change; None for a run without one."""
    for i, node, e, cmds, last in groups(events):
        if node == "BASELINE" and cmds is not None:
            return {"ms": events[last]["timeMs"] - e["timeMs"] if last is not None else None,
                    "failed": sum(c.get("failed") if c.get("failed") is not None else len(c.get("failures") or [])
                                  for c in cmds),
                    "commands": [command_row(c) for c in cmds]}
    return None


def rounds_of(events):
    """Per VALIDATE (never the BASELINE's `workspace` and `command` events): its wall
    time (the `workspace` event to its last `command`), the time to the end of its
    targeted tests (`"scope": "targeted"`, run first; the sync and the build
    included), the whole suite's commands' time (`"scope": "full"`), its commands, and
    the DECIDE after it; a `validationReused` round has no command. Runs before
    87a1174 have no scope: their rounds have only `validateMs`."""
    out = []
    for i, node, e, cmds, last in groups(events):
        if node == "BASELINE":
            continue
        if cmds is None:
            out.append({"validateMs": None, "targetedMs": None, "fullMs": None, "reused": True, "commands": []})
            continue
        targeted = [j for j in range(i + 1, (last or i) + 1)
                    if custom(events[j], "command") and event(events[j])[1].get("scope") == "targeted"]
        full = [c for c in cmds if c.get("scope") == "full"]
        out.append({
            "validateMs": events[last]["timeMs"] - e["timeMs"] if last is not None else None,
            "targetedMs": events[targeted[-1]]["timeMs"] - e["timeMs"] if targeted else None,
            "fullMs": sum(c.get("wallMs") or 0 for c in full) if full else None,
            "commands": [command_row(c) for c in cmds],
        })
    decisions = [event(e)[1] for e in events if custom(e, "decision")]
    for r, d in zip(out, decisions):
        r["passed"] = d.get("passed")
        r["next"] = d.get("next")
    return out


def key_error(tail):
    """The line of a command's output that says why it failed: pytest's `E   SomeError: ...`
    first, then an `ERROR ...` summary line, then any line naming an error."""
    lines = [l.strip() for l in (tail or "").splitlines() if l.strip()]
    for pick in (lambda l: re.match(r"E\s+\S*(Error|Exception)\b", l),
                 lambda l: l.startswith("ERROR ") or l.startswith("INTERNALERROR>") and "Error" in l,
                 lambda l: re.search(r"(Error|Exception)\b", l)):
        hit = next((l for l in lines if pick(l)), None)
        if hit:
            return re.sub(r"^E\s+", "", hit)[:220]
    return lines[-1][:220] if lines else ""


def first_failure(rounds, baseline=None):
    """`exit N: error` of the first VALIDATE's failing command, if one failed: its
    scope, its first failing test, and how many of its failing tests failed at
    BASELINE too (pre-existing, yet counted against the change)."""
    before = {f for c in (baseline or {}).get("commands", []) for f in (c.get("failures") or [])}
    for r in rounds:
        for c in r["commands"]:
            if not c.get("success"):
                fails = c.get("failures") or []
                out = f"`{c.get('kind')}`{' ' + c['scope'] if c.get('scope') else ''} exit {c.get('exitCode')}: {key_error(c.get('outputTail'))}"
                if fails:
                    out += f"; first: {fails[0]}"
                if before and fails:
                    out += f"; {sum(f in before for f in fails)} of {len(fails)} failing at BASELINE too"
                return out
    return ""


def cause(outcome, rounds, code, stderr):
    """One line: why the run ended where it did."""
    if outcome is None:
        return f"no outcome (exit {code}): {rs.last_lines(stderr, 2)}"
    st = outcome.get("status", {})
    state = outcome.get("state") or {}
    if st.get("type") == "succeeded":
        return "applied"
    what = st.get("reason") or st.get("message") or state.get("pauseReason") or ""
    node = st.get("node") or st.get("code") or ""
    return f"{st.get('type')} {node}: {what[:300]}"


def check_tests(entry, root, args):
    vpy = os.path.join(root, ".venv", "bin", "python")
    files = entry["test_files"]
    status, p, secs = rs.run_tests(vpy, root, files, args._testlog, args.test_timeout, args._test_args)
    f2p_ok, f2p_bad = rs.verdict(status, entry["fail_to_pass"])
    p2p_ok, p2p_bad = rs.verdict(status, entry["pass_to_pass"])
    return {"f2p_pass": not f2p_bad, "f2p_failing": list(f2p_bad)[:5], "p2p_pass": not p2p_bad,
            "p2p_broken": list(p2p_bad)[:5], "seconds": round(secs, 1)}


def git_clean(root, head):
    st = subprocess.run(["git", "-C", root, "status", "--porcelain"], capture_output=True, text=True).stdout
    now = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    return not st.strip() and now == head, st.strip()[:300]


def reset(root):
    subprocess.run(["git", "-C", root, "reset", "-q", "--hard", "HEAD"], check=True)
    subprocess.run(["git", "-C", root, "clean", "-q", "-fd"], check=True)


def one_run(binary, entry, row, variant, args, env_home, logdir):
    root = entry["dir"]
    reset(root)
    files = gold_files(root, row["patch"])
    model = Model(files, row["problem_statement"], variant)
    env = environment(env_home, model.url)
    log = os.path.join(logdir, f"{variant}.jsonl")
    args._testlog = os.path.join(logdir, f"{variant}-tests.log")
    if os.path.exists(args._testlog):
        os.remove(args._testlog)
    load_before = [round(x, 2) for x in os.getloadavg()]
    try:
        code, events, outcome, wall, stderr = run_ironbees(binary, root, row["problem_statement"], env, args, log)
    except subprocess.TimeoutExpired:
        code, events, outcome, wall, stderr = None, [], None, None, "timed out"
    finally:
        model.close()
    rounds = rounds_of(events)
    baseline = baseline_of(events)
    status = (outcome or {}).get("status", {})
    state = (outcome or {}).get("state") or {}
    r = {
        "instance_id": entry["instance_id"],
        "repo": entry["repo"],
        "variant": variant,
        "exit": code,
        "status": status.get("type"),
        "node": status.get("node") or status.get("code"),
        "cause": cause(outcome, rounds, code, stderr),
        "rounds": state.get("iterationCount"),
        "validations": rounds,
        "baseline": baseline,
        "wall_s": round(wall, 1) if wall else None,
        "load_before": load_before,
        "log": log,
        "model_calls": model.calls,
        "unknown_requests": model.unknown,
        "transaction": state.get("transactionId"),
    }
    # The first VALIDATE's verdict on the first change: a no-op must be rejected.
    first = rounds[0] if rounds else None
    r["first_round"] = None if first is None else ("passed" if first.get("passed") else "rejected")
    # Outside ironbees: what the working tree now holds. A run that applied nothing left
    # the instance's HEAD, whose tests replay_setup.py checked: FAIL_TO_PASS fail there.
    unchanged, _ = git_clean(root, entry["head"])
    if unchanged and r["status"] != "succeeded":
        r["tests"] = {"f2p_pass": False, "p2p_pass": None, "not_run": "nothing applied: the tree is the instance's HEAD"}
    else:
        r["tests"] = check_tests(entry, root, args)
    if r["status"] == "waiting" and outcome:
        subprocess.run([binary, "-C", root, "runs", "cancel", outcome["runId"]], env=env, capture_output=True)
    if r["status"] == "succeeded":
        u = subprocess.run([binary, "-C", root, "--json", "undo"], env=env, capture_output=True, text=True)
        r["undo"] = {"exit": u.returncode, "error": rs.last_lines(u.stderr, 2) if u.returncode else None}
    r["clean_after"], r["dirty"] = git_clean(root, entry["head"])
    reset(root)
    return r


# --- the whole-suite reference ----------------------------------------------------------


def suite_time(entry, args, logdir):
    root = entry["dir"]
    vpy = os.path.join(root, ".venv", "bin", "python")
    log = os.path.join(logdir, "suite.log")
    t0 = time.time()
    # Past collection errors (a test module whose import needs what the requirements do
    # not list): the time of every test that can run, not of the first error.
    p = rs.sh([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors"], cwd=root,
              log=log, timeout=args.test_timeout * 4, check=False)
    reset(root)
    return {"instance_id": entry["instance_id"], "seconds": round(time.time() - t0, 1), "exit": p.returncode,
            "summary": rs.last_lines(p.stdout, 1)}


# --- the report -----------------------------------------------------------------------


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(results, suites, manifest):
    kept = [i for i, e in manifest["instances"].items() if e["kept"]]
    gold = [r for r in results if r["variant"] == "gold"]
    noop = [r for r in results if r["variant"] == "noop-first"]
    ok = lambda r: r["status"] == "succeeded"
    s = {
        "instances_kept": len(kept),
        "instances_left_out": len(manifest["instances"]) - len(kept),
        "gold_runs": len(gold),
        "success": sum(map(ok, gold)),
        "success_rate": round(sum(map(ok, gold)) / len(gold), 3) if gold else None,
        "f2p_pass_after": sum(r["tests"]["f2p_pass"] for r in gold),
        "p2p_unbroken_after": sum(r["tests"]["p2p_pass"] is True for r in gold),
        "p2p_checked": sum(r["tests"]["p2p_pass"] is not None for r in gold),
        "undo_restored": sum(bool(r["clean_after"]) for r in gold if ok(r)),
        "noop_runs": len(noop),
        "noop_rejected": sum(r["first_round"] == "rejected" for r in noop),
        "noop_rejected_rate": round(sum(r["first_round"] == "rejected" for r in noop) / len(noop), 3) if noop else None,
        "noop_no_verdict": sum(r["first_round"] is None for r in noop),
        # A rejection says something only where the same environment validates the gold
        # patch: otherwise VALIDATE rejects everything, the no-op with the rest.
        "noop_rejected_where_gold_succeeds": sum(
            r["first_round"] == "rejected" for r in noop
            if any(g["instance_id"] == r["instance_id"] and ok(g) for g in gold)),
        "noop_runs_where_gold_succeeds": sum(
            1 for r in noop if any(g["instance_id"] == r["instance_id"] and ok(g) for g in gold)),
        "per_repo": {},
    }
    sec = lambda ms: round(ms / 1000, 2) if ms is not None else None
    for repo in sorted({r["repo"] for r in results}):
        rr = [r for r in results if r["repo"] == repo]
        ms = [v["validateMs"] for r in rr for v in r["validations"] if v.get("validateMs") is not None]
        # Time per round with the targeted tests first: the sync, the build and the
        # targeted tests of each VALIDATE that ran them; against the whole suite's
        # time, in the same runs (`"scope": "full"`, else the baseline's).
        targeted = [v["targetedMs"] for r in rr for v in r["validations"] if v.get("targetedMs") is not None]
        full = [v["fullMs"] for r in rr for v in r["validations"] if v.get("fullMs") is not None]
        base = [r["baseline"]["ms"] for r in rr if r.get("baseline") and r["baseline"].get("ms") is not None]
        whole = median(full) if full else median(base)
        s["per_repo"][repo] = {
            "gold_runs": sum(r["variant"] == "gold" for r in rr),
            "success": sum(ok(r) for r in rr if r["variant"] == "gold"),
            "validate_rounds": len(ms),
            "median_validate_s": sec(median(ms)) if ms else None,
            "targeted_rounds": len(targeted),
            "median_targeted_s": sec(median(targeted)) if targeted else None,
            "full_runs": len(full),
            "median_full_s": sec(median(full)) if full else None,
            "median_baseline_s": sec(median(base)) if base else None,
            "targeted_over_full": round(median(targeted) / whole, 3) if targeted and whole else None,
            "whole_suite_s": suites.get(repo, {}).get("seconds"),
        }
    return s


def per_round(r, key):
    """A run's rounds' times in seconds: `reused` for a round that reused a failure, `-`
    for one without that part (no targeted test, the whole suite not reached)."""
    return ", ".join("reused" if v.get("reused") else (f"{v[key] / 1000:.1f}" if v.get(key) is not None else "-")
                     for v in r["validations"]) or "-"


def report(results, suites, summary):
    new = any("targetedMs" in v for r in results for v in r["validations"]) or any(r.get("baseline") for r in results)
    if new:
        print("\n| instance | variant | status | rounds | baseline s (failing before) | targeted s per round | full s per round | first round "
              "| F2P pass | P2P unbroken | undo → clean | cause | first failing command |")
        print("| --- | --- | --- | ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    else:
        print("\n| instance | variant | status | rounds | VALIDATE s per round | first round | F2P pass | P2P unbroken | undo → clean | cause | first failing command |")
        print("| --- | --- | --- | ---: | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        undo = "-" if r["status"] != "succeeded" else ("yes" if r["clean_after"] else "NO")
        b = r.get("baseline")
        base = f"{b['ms'] / 1000:.1f} ({b['failed']})" if b and b.get("ms") is not None else "-"
        times = (f"| {base} | {per_round(r, 'targetedMs')} | {per_round(r, 'fullMs')} " if new
                 else f"| {per_round(r, 'validateMs')} ")
        print(f"| {r['instance_id']} | {r['variant']} | {r['status']} | {r['rounds']} {times}| {r['first_round'] or '-'} "
              f"| {'yes' if r['tests']['f2p_pass'] else 'no'} | {({True: 'yes', False: 'no', None: 'not run'})[r['tests']['p2p_pass']]} | {undo} "
              f"| {r['cause'].replace('|', '/')[:160]} | {first_failure(r['validations'], r.get('baseline')).replace('|', '/')} |")
    if new:
        print("\n| repository | gold runs | SUCCESS | VALIDATE rounds (both variants) | median targeted s per round (rounds) "
              "| median full s (runs) | median baseline s | targeted / full | whole suite s (outside) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for repo, p in summary["per_repo"].items():
            print(f"| {repo} | {p['gold_runs']} | {p['success']} | {p['validate_rounds']} | {p['median_targeted_s']} ({p['targeted_rounds']}) "
                  f"| {p['median_full_s']} ({p['full_runs']}) | {p['median_baseline_s']} | {p['targeted_over_full']} | {p['whole_suite_s'] or '-'} |")
    else:
        print("\n| repository | gold runs | SUCCESS | VALIDATE rounds (both variants) | median VALIDATE s | whole suite s (outside) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for repo, p in summary["per_repo"].items():
            print(f"| {repo} | {p['gold_runs']} | {p['success']} | {p['validate_rounds']} | {p['median_validate_s']} | {p['whole_suite_s'] or '-'} |")
    print(f"\nSUCCESS {summary['success']}/{summary['gold_runs']} ({summary['success_rate']}); FAIL_TO_PASS pass after "
          f"{summary['f2p_pass_after']}/{summary['gold_runs']}; PASS_TO_PASS unbroken {summary['p2p_unbroken_after']}/{summary['p2p_checked']} checked; "
          f"undo restored {summary['undo_restored']}/{summary['success']}; no-op first change rejected "
          f"{summary['noop_rejected']}/{summary['noop_runs']} (no verdict: {summary['noop_no_verdict']}; where the gold patch "
          f"succeeds: {summary['noop_rejected_where_gold_succeeds']}/{summary['noop_runs_where_gold_succeeds']})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "ironbees"))
    ap.add_argument("--dataset", help="the SWE-bench Lite file replay_setup.py read")
    ap.add_argument("--instances", action="append",
                    help="replay_setup.py's --out (with manifest.json); may be given more than once")
    ap.add_argument("--only", default="", help="comma-separated instance ids (default: every kept one)")
    ap.add_argument("--variants", default="gold,noop-first", help="gold, noop-first (default both)")
    ap.add_argument("--run-timeout", type=int, default=7200,
                    help="`ironbees run --timeout` seconds, per execution (a model call, a tool call, a test run; "
                         "default 7200: a whole suite must fit, twice on a loaded machine)")
    ap.add_argument("--wall-timeout", type=int, default=4 * 3600,
                    help="seconds one `ironbees run` may take in all before it is killed (default 4 h)")
    ap.add_argument("--test-timeout", type=int, default=1800, help="seconds per pytest check outside ironbees")
    ap.add_argument("--suite-time", default="",
                    help="comma-separated REPO or REPO=INSTANCE whose whole suite is timed outside ironbees")
    ap.add_argument("--runs-dir", default=None,
                    help="where each run's JSON Lines and test logs go (default: OUT/_runs/INSTANCE)")
    ap.add_argument("--json-out", default=None, help="write the results and the summary here as JSON")
    ap.add_argument("--from-json", default=None, help="print the report of a --json-out file again; run nothing")
    ap.add_argument("--fresh", action="store_true",
                    help="start over: without it, the runs (instance, variant) already in --json-out are kept, not run again")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            saved = json.load(f)
        report(saved["results"], saved["suites"], saved["summary"])
        return
    if not a.dataset or not a.instances:
        ap.error("--dataset and --instances are needed to run")
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"no ironbees binary at {binary}: cargo build --release --bin ironbees")
    manifest = {"instances": {}}
    for d in a.instances:
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        for iid, e in m["instances"].items():
            e["out"] = d
            # An instance kept in one directory is not shadowed by a left-out build in another.
            if iid not in manifest["instances"] or e["kept"]:
                manifest["instances"][iid] = e
    data = rs.load_dataset(a.dataset)
    a._test_args = rs.load_pins().get("test_args", ["-rA"])
    ids = [i for i in a.only.split(",") if i] or sorted(i for i, e in manifest["instances"].items() if e["kept"])
    home = tempfile.mkdtemp(prefix="replay-home-")
    os.makedirs(os.path.join(home, ".no-user-config"), exist_ok=True)
    results, suites = [], {}
    # Checkpointed after every run: a stopped benchmark resumes where it was.
    if a.json_out and os.path.exists(a.json_out) and not a.fresh:
        with open(a.json_out) as f:
            saved = json.load(f)
        results, suites = saved.get("results", []), saved.get("suites", {})
        print(f"resuming: {len(results)} runs already in {a.json_out}", file=sys.stderr, flush=True)
    done = {(r["instance_id"], r["variant"]) for r in results}
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")

    def save():
        if not a.json_out:
            return
        tmp = a.json_out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"summary": summarize(results, suites, manifest), "suites": suites, "results": results,
                       "machine": {"nproc": os.cpu_count(), "platform": platform.platform(),
                                   "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
                       "binary": binary, "run_timeout_s": a.run_timeout, "started": started,
                       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}, f, indent=1)
        os.replace(tmp, a.json_out)

    # REPO or REPO=INSTANCE: the whole suite of that repository, on that instance (default
    # its first kept one).
    wanted = {w.split("=")[0]: (w.split("=")[1] if "=" in w else None) for w in a.suite_time.split(",") if w}
    for iid in ids:
        entry = manifest["instances"][iid]
        if not entry["kept"]:
            print(f"{iid}: left out by the setup ({entry['reason']}), skipped", file=sys.stderr)
            continue
        logdir = os.path.join(a.runs_dir, iid) if a.runs_dir else os.path.join(entry["out"], "_runs", iid)
        os.makedirs(logdir, exist_ok=True)
        for variant in [v for v in a.variants.split(",") if v]:
            if (iid, variant) in done:
                continue
            r = one_run(binary, entry, data[iid], variant, a, home, logdir)
            results.append(r)
            save()
            print(f"{iid} {variant}: {r['status']} rounds={r['rounds']} first={r['first_round']} "
                  f"f2p={'pass' if r['tests']['f2p_pass'] else 'FAIL'} clean={r['clean_after']} ({r['wall_s']}s) {r['cause'][:200]}",
                  file=sys.stderr, flush=True)
        if (entry["repo"] in wanted and entry["repo"] not in suites
                and wanted[entry["repo"]] in (None, iid)):
            suites[entry["repo"]] = suite_time(entry, a, logdir)
            print(f"{entry['repo']} whole suite: {suites[entry['repo']]}", file=sys.stderr, flush=True)
            save()
    summary = summarize(results, suites, manifest)
    report(results, suites, summary)
    save()
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Telemetry overhead and tool-call latency (issue 35, "Verify").

1. Whole run, telemetry off against exported. The mock-model agent run of
   scripts/bench_agent.py (its `pytest` variant: the calculator, plan, one
   `change`, pytest in the sandbox, success; the model is the same wire-level
   Anthropic stand-in on loopback that answers at once) run N times per mode,
   the modes interleaved round-robin (so load drift hits all of them alike), in
   one project whose files are restored between runs (`.ironbees/` kept, one
   unmeasured warm-up run first). Modes:
     - off: no OTEL_* variable, no `observability:` section (the default);
     - grpc: OTEL_EXPORTER_OTLP_ENDPOINT + _PROTOCOL=grpc to the Python
       receiver of crates/cli/tests/receivers/otlp_grpc.py (grpcio and the
       official `opentelemetry-proto` servicers), a separate process;
     - http: _PROTOCOL=http/protobuf to a receiver of this script (a separate
       process, `--http-receiver`) that parses every body with
       `opentelemetry-proto`'s ExportTraceServiceRequest /
       ExportMetricsServiceRequest and answers the empty response.
   Wall = process start to exit as seen here; exit = the run's last JSON event
   to process exit (where the exporters flush). After every exported run the
   receiver must have decoded at least one span from it, or the bench fails.

2. Tool-call latency, per call: the time from writing a `tools/call` JSON-RPC
   line to reading the line that answers it (newline-delimited JSON-RPC over
   stdio, the same raw client for every column), after an `initialize`
   handshake and warm-up calls, the columns interleaved call by call:
     (a) built-in: `read` {"target": "src/util.py"} through
         `ironbees mcp --no-watch --reexport` (the registry's built-in tool);
     (b) outside server through ironbees: `memory.read_graph` through the same
         session (the registry's client to `mcp-server-memory`, configured
         under `mcp.servers`);
     (c) direct: `read_graph` sent to a second `mcp-server-memory` process
         (same binary, same memory file) over its own stdio;
     and (a'), (b'): the same two calls through a second
     `ironbees mcp --no-watch --reexport` whose telemetry is exported over
     gRPC to the Python receiver.
   (b) - (c) is what ironbees adds to an outside tool call; (b) / (c) its ratio.

    cargo build --release -p cli
    python3 scripts/bench_telemetry.py --bin target/release/ironbees \
        --deps /path/to/target/test-deps --runs 10 --calls 200

--deps is the directory scripts/test fills (otlp-receiver/,
mcp-servers/node_modules/.bin/mcp-server-memory).
"""

import argparse
import json
import os
import platform
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GRPC_RECEIVER = os.path.join(REPO, "crates", "cli", "tests", "receivers", "otlp_grpc.py")


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


# --- the HTTP/protobuf receiver (run as its own process) -------------------------------


def http_receiver():
    """Prints its port, then one JSON line per export: {"signal", "spans", "names"}."""
    import http.server

    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            if self.headers.get("Content-Encoding") or self.headers.get("Transfer-Encoding"):
                self.send_error(415, "plain bodies only")
                return
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path == "/v1/traces":
                req = trace_service_pb2.ExportTraceServiceRequest()
                req.ParseFromString(body)
                spans = [s.name for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
                line = {"signal": "traces", "spans": len(spans), "names": spans}
                reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            elif self.path == "/v1/metrics":
                req = metrics_service_pb2.ExportMetricsServiceRequest()
                req.ParseFromString(body)
                names = [m.name for rm in req.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
                line = {"signal": "metrics", "spans": 0, "names": names}
                reply = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            with lock:
                sys.stdout.write(json.dumps(line) + "\n")
                sys.stdout.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    sys.stdin.read()
    server.shutdown()


class Receiver:
    """A receiver process; counts the exports and spans it decoded."""

    def __init__(self, kind, deps):
        env = dict(os.environ, PYTHONPATH=os.path.join(deps, "otlp-receiver"))
        args = [sys.executable, GRPC_RECEIVER] if kind == "grpc" else [sys.executable, os.path.abspath(__file__), "--http-receiver"]
        self.p = subprocess.Popen(args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.p.stdout.readline())
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.kind = kind
        self.lock = threading.Lock()
        self.trace_exports = 0
        self.metric_exports = 0
        self.spans = 0
        self.names = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            if not line.strip():
                continue
            d = json.loads(line)
            if "request" in d:  # otlp_grpc.py: the request as protobuf's JSON mapping
                req = d["request"]
                if d["signal"] == "traces":
                    names = [s["name"] for rs in req.get("resource_spans", []) for ss in rs.get("scope_spans", []) for s in ss.get("spans", [])]
                else:
                    names = [m["name"] for rm in req.get("resource_metrics", []) for sm in rm.get("scope_metrics", []) for m in sm.get("metrics", [])]
            else:
                names = d["names"]
            with self.lock:
                if d["signal"] == "traces":
                    self.trace_exports += 1
                    self.spans += len(names)
                    for n in names:
                        key = n.split(" ")[0]
                        self.names[key] = self.names.get(key, 0) + 1
                else:
                    self.metric_exports += 1

    def counts(self):
        with self.lock:
            return self.trace_exports, self.metric_exports, self.spans

    def wait_for_spans(self, before, timeout=3.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.counts()[2] > before:
                return self.counts()[2] - before
            time.sleep(0.02)
        return 0

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def otel_env(env, receiver):
    env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    if receiver is not None:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc" if receiver.kind == "grpc" else "http/protobuf"
    return env


# --- 1. whole run ------------------------------------------------------------------------


def bench_runs(binary, base, deps, n, modes):
    sys.path.insert(0, HERE)
    import bench_agent as ba

    files, first = ba.VARIANTS["pytest"]
    model = ba.Model()
    model.first = first
    receivers = {m: Receiver(m, deps) for m in modes if m != "off"}
    env0 = ba.environment(base, model.url)
    envs = {m: otel_env(env0, receivers.get(m)) for m in modes}
    root = ba.make_project(base, files)
    results = {m: [] for m in modes}
    try:
        ba.restore(root, files)
        ba.run_once(binary, root, envs["off"])  # warm-up: the index, the workspace copy
        for i in range(n):
            order = modes[i % len(modes):] + modes[: i % len(modes)]
            for m in order:
                ba.restore(root, files)
                before = receivers[m].counts()[2] if m in receivers else 0
                r = ba.run_once(binary, root, envs[m])
                got = receivers[m].wait_for_spans(before) if m in receivers else None
                if m in receivers and not got:
                    sys.exit(f"{m}: the receiver decoded no span from run #{i + 1}")
                r["spans"] = got
                results[m].append(r)
                print(f"run {m} #{i + 1}: wall {r['wall']:.0f} ms, exit {r['exit']:.0f} ms, spans {got}", file=sys.stderr)
    finally:
        model.close()
        stats = {m: (r.counts(), dict(r.names)) for m, r in receivers.items()}
        for r in receivers.values():
            r.close()
    return results, stats


# --- 2. tool calls -------------------------------------------------------------------------

UTIL = (
    "def add(a, b):\n    return a + b\n\n\n"
    "def mul(a, b):\n    return a * b\n\n\n"
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n"
    "    def push(self, x):\n        self.items.append(x)\n\n"
    "    def pop(self):\n        return self.items.pop()\n"
)
MEMORY = {
    "entities": [
        {"name": f"entity{i}", "entityType": "module", "observations": [f"observation {j} of entity {i}" for j in range(3)]}
        for i in range(10)
    ],
    "relations": [{"from": f"entity{i}", "to": f"entity{i + 1}", "relationType": "imports"} for i in range(9)],
}


class Stdio:
    """Newline-delimited JSON-RPC to a child's stdin/stdout; times each call."""

    def __init__(self, args, env, cwd=None):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(args, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def request(self, method, params=None, timeout=60):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        data = (json.dumps(msg) + "\n").encode()
        t0 = time.perf_counter()
        try:
            self.p.stdin.write(data)
            self.p.stdin.flush()
        except BrokenPipeError:
            self.err.seek(0)
            raise RuntimeError(f"{method}: the server exited ({self.p.wait()}): {self.err.read()[-2000:].decode(errors='replace')}")
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise RuntimeError(f"{method}: the server exited ({self.p.wait()})")
            d = json.loads(line)
            if d.get("id") == self.next_id:
                return (time.perf_counter() - t0) * 1000, d
            # a notification or a request of the server's: not ours

    def initialize(self):
        _, d = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        if "result" not in d:
            raise RuntimeError(f"initialize: {d}")
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        return d["result"]

    def call(self, name, args):
        ms, d = self.request("tools/call", {"name": name, "arguments": args})
        res = d.get("result")
        if res is None or res.get("isError"):
            raise RuntimeError(f"tools/call {name}: {json.dumps(d)[:500]}")
        return ms, len(json.dumps(res))

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def bench_calls(binary, base, deps, calls, warmup, with_telemetry):
    memory_bin = os.path.join(deps, "mcp-servers", "node_modules", ".bin", "mcp-server-memory")
    if not os.access(memory_bin, os.X_OK):
        sys.exit(f"no mcp-server-memory at {memory_bin} (scripts/test installs it)")
    root = tempfile.mkdtemp(prefix="bench-tools-", dir=base)
    os.makedirs(os.path.join(root, "src"))
    with open(os.path.join(root, "src", "util.py"), "w") as f:
        f.write(UTIL)
    mem_file = os.path.join(root, "memory.jsonl")
    with open(mem_file, "w") as f:  # the server's JSON Lines store
        for e in MEMORY["entities"]:
            f.write(json.dumps(dict(e, type="entity")) + "\n")
        for r in MEMORY["relations"]:
            f.write(json.dumps(dict(r, type="relation")) + "\n")
    os.makedirs(os.path.join(root, ".ironbees"))
    with open(os.path.join(root, ".ironbees", "config.yaml"), "w") as f:
        f.write(f"mcp:\n  servers:\n    memory:\n      command: {memory_bin}\n      env: {{MEMORY_FILE_PATH: \"{mem_file}\"}}\n      read_only: [read_graph]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IRONBEES_", "ANTHROPIC_", "OPENAI_", "OTEL_"))}
    env["XDG_CONFIG_HOME"] = os.path.join(root, ".no-user-config")
    receiver = Receiver("grpc", deps) if with_telemetry else None
    sessions = {}
    try:
        # One at a time: two `ironbees mcp` starting at once in one project race
        # for its index (one of them exited once here).
        sessions["ib"] = Stdio([binary, "-C", root, "mcp", "--no-watch", "--reexport"], env)
        sessions["ib"].initialize()
        sessions["direct"] = Stdio([memory_bin], dict(env, MEMORY_FILE_PATH=mem_file), cwd=root)
        sessions["direct"].initialize()
        if receiver:
            sessions["ib_otel"] = Stdio([binary, "-C", root, "mcp", "--no-watch", "--reexport"], otel_env(env, receiver))
            sessions["ib_otel"].initialize()
        cols = [
            ("a", "ib", "read", {"target": "src/util.py"}),
            ("b", "ib", "memory.read_graph", {}),
            ("c", "direct", "read_graph", {}),
        ]
        if receiver:
            cols += [("a'", "ib_otel", "read", {"target": "src/util.py"}), ("b'", "ib_otel", "memory.read_graph", {})]
        times = {c[0]: [] for c in cols}
        sizes = {}
        for i in range(warmup + calls):
            order = cols[i % len(cols):] + cols[: i % len(cols)]
            for key, sess, name, args in order:
                ms, size = sessions[sess].call(name, args)
                sizes[key] = size
                if i >= warmup:
                    times[key].append(ms)
        for s in sessions.values():
            s.close()
        spans = None
        if receiver:
            time.sleep(1.0)
            spans = receiver.counts(), dict(receiver.names)
    finally:
        for s in sessions.values():
            if s.p.poll() is None:
                s.p.kill()
                s.p.wait()
        if receiver:
            receiver.close()
    return times, sizes, spans


# --- report --------------------------------------------------------------------------------


def report(runs, run_stats, times, sizes, call_spans, a):
    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cores, Linux {platform.release()}; load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if runs:
        off = runs["off"]
        print(f"\n## Whole run (`ironbees run --yes --json`, mock model, pytest variant), {a.runs} runs per mode, ms\n")
        print("| telemetry | wall median | wall p90 | ratio to off (median / p90) | exit (last event to exit) median / p90 | spans decoded per run |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for m, rs in runs.items():
            w = [r["wall"] for r in rs]
            e = [r["exit"] for r in rs]
            wo = [r["wall"] for r in off]
            ratio = "1.00 / 1.00" if m == "off" else f"{pct(w, 50) / pct(wo, 50):.2f} / {pct(w, 90) / pct(wo, 90):.2f}"
            spans = "-" if m == "off" else f"{pct([r['spans'] for r in rs], 50):.0f}"
            label = {"off": "off", "grpc": "exported, OTLP/gRPC", "http": "exported, OTLP/HTTP protobuf"}[m]
            print(f"| {label} | {pct(w, 50):.0f} | {pct(w, 90):.0f} | {ratio} | {pct(e, 50):.0f} / {pct(e, 90):.0f} | {spans} |")
        for m, ((tr, me, sp), names) in run_stats.items():
            print(f"\n{m} receiver: {tr} trace exports, {me} metric exports, {sp} spans; by name: {json.dumps(names, sort_keys=True)}")
    if times:
        labels = {
            "a": "(a) built-in `read` via `ironbees mcp`",
            "b": "(b) `memory.read_graph` via `ironbees mcp --reexport`",
            "c": "(c) `read_graph` direct to mcp-server-memory",
            "a'": "(a') as (a), telemetry exported (gRPC)",
            "b'": "(b') as (b), telemetry exported (gRPC)",
        }
        print(f"\n## Tool-call latency, {a.calls} calls each after {a.warmup} warm-up, interleaved, ms per call\n")
        print("| call | median | p90 | p99 | answer bytes |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for k, xs in times.items():
            print(f"| {labels[k]} | {pct(xs, 50):.2f} | {pct(xs, 90):.2f} | {pct(xs, 99):.2f} | {sizes[k]} |")
        b, c = times["b"], times["c"]
        print(
            f"\n(b)/(c): {pct(b, 50) / pct(c, 50):.2f}x median, {pct(b, 90) / pct(c, 90):.2f}x p90; "
            f"(b)-(c): {pct(b, 50) - pct(c, 50):.2f} ms median, {pct(b, 90) - pct(c, 90):.2f} ms p90"
        )
        if "a'" in times:
            for k in ("a", "b"):
                x, y = times[k], times[k + "'"]
                print(f"({k}')/({k}): {pct(y, 50) / pct(x, 50):.2f}x median, {pct(y, 90) / pct(x, 90):.2f}x p90")
        if call_spans:
            (tr, me, sp), names = call_spans
            print(f"telemetry session's receiver: {tr} trace exports, {me} metric exports, {sp} spans; by name: {json.dumps(names, sort_keys=True)}")
    if a.json:
        print(json.dumps({"runs": {m: [{k: r[k] for k in ("wall", "exit", "startup", "spans")} for r in rs] for m, rs in (runs or {}).items()}, "calls": times}))


def main():
    if "--http-receiver" in sys.argv:
        return http_receiver()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "ironbees"))
    ap.add_argument("--deps", default=os.path.join(REPO, "target", "test-deps"), help="scripts/test's target/test-deps")
    ap.add_argument("--runs", type=int, default=10, help="agent runs per telemetry mode (default 10)")
    ap.add_argument("--modes", default="off,grpc,http", help="of: off, grpc, http (default all; off is required)")
    ap.add_argument("--calls", type=int, default=200, help="measured tool calls per column (default 200)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-call-telemetry", action="store_true", help="leave out the (a') and (b') columns")
    ap.add_argument("--skip-runs", action="store_true")
    ap.add_argument("--skip-calls", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    deps = os.path.abspath(a.deps)
    if not os.access(binary, os.X_OK):
        sys.exit(f"no ironbees binary at {binary}: cargo build --release -p cli")
    if not os.path.isdir(os.path.join(deps, "otlp-receiver")):
        sys.exit(f"no {deps}/otlp-receiver (scripts/test installs grpcio and opentelemetry-proto there)")
    base = tempfile.mkdtemp(prefix="bench-telemetry-")
    runs = run_stats = times = sizes = call_spans = None
    try:
        if not a.skip_runs:
            modes = a.modes.split(",")
            assert modes[0] == "off", "--modes must start with off"
            runs, run_stats = bench_runs(binary, base, deps, a.runs, modes)
            report(runs, run_stats, None, None, None, a)
            sys.stdout.flush()
        if not a.skip_calls:
            times, sizes, call_spans = bench_calls(binary, base, deps, a.calls, a.warmup, not a.no_call_telemetry)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report(None, None, times, sizes, call_spans, a)


if __name__ == "__main__":
    main()

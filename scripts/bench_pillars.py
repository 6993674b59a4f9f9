#!/usr/bin/env python3
"""Pillar latency over MCP: p50/p95 of `understand`, `navigate` and `read` calls
to ONE long-lived `ironbees mcp` process on a warm index, with peers side by side
in the same run (`rg` for navigate, `cat` and a Python read + sha256 for read).

Speaks newline-delimited JSON-RPC 2.0 over the server's stdio directly (no SDK):
the time of a call is from writing the request line to reading the whole answer
line, i.e. what a client waits for. Peers run as a client would run them (one
process per `rg`/`cat`, in-process for the Python read).

    cp -r bench-data/corpora/python/Django-5.1.4 /tmp/bench-django   # the server writes .ironbees/
    cargo build --release -p cli
    python3 scripts/bench_pillars.py --root /tmp/bench-django --n 30

Exit status 1 when a p95 of understand, navigate or read misses --target-ms.
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

# Django 5.1.4: files and symbols the calls cycle through (they all exist there).
FILES = [
    "django/db/models/query.py",
    "django/http/request.py",
    "django/urls/resolvers.py",
    "django/core/handlers/base.py",
    "django/forms/forms.py",
    "django/template/base.py",
    "django/contrib/auth/models.py",
    "django/db/models/fields/related.py",
    "django/views/generic/base.py",
    "django/utils/functional.py",
]
SYMBOLS = [
    "QuerySet.filter",
    "HttpRequest.get_host",
    "URLResolver.resolve",
    "BaseHandler.get_response",
    "BaseForm.is_valid",
    "Template.render",
    "AbstractBaseUser.set_password",
    "ForeignKey.validate",
    "View.as_view",
    "cached_property",
]
NAV_ACTIONS = ["definition", "references", "callers", "callees"]


class Server:
    def __init__(self, binary, root, watch):
        args = [binary, "-C", root, "mcp"] + ([] if watch else ["--no-watch"])
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0

    def request(self, method, params):
        """Returns (seconds, message)."""
        self.next_id += 1
        i = self.next_id
        line = json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n"
        t = time.perf_counter()
        self.p.stdin.write(line.encode())
        self.p.stdin.flush()
        while True:
            raw = self.p.stdout.readline()
            if not raw:
                sys.exit(f"the server closed stdout during {method}")
            dt = time.perf_counter() - t
            m = json.loads(raw)
            if m.get("id") == i:
                return dt, m

    def notify(self, method):
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.p.stdin.flush()

    def tool(self, name, arguments):
        dt, m = self.request("tools/call", {"name": name, "arguments": arguments})
        if "error" in m:
            sys.exit(f"{name} {arguments}: JSON-RPC error {m['error']}")
        r = m["result"]
        if r.get("isError"):
            sys.exit(f"{name} {arguments}: {r['content'][0]['text'][:300]}")
        return dt, r

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]


def ms(x):
    return f"{x * 1000:8.1f}"


def run_peer(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def py_read(path):
    t = time.perf_counter()
    with open(path, "rb") as f:
        b = f.read()
    hashlib.sha256(b).hexdigest()
    b.decode("utf-8", "replace")
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "ironbees"))
    ap.add_argument("--root", required=True, help="the project (a Django 5.1.4 checkout)")
    ap.add_argument("--n", type=int, default=30, help="measured calls per pillar (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="unmeasured calls per pillar first")
    ap.add_argument("--no-watch", action="store_true", help="serve with --no-watch (walk the tree on every call)")
    ap.add_argument("--target-ms", type=float, default=100.0)
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON too")
    ap.add_argument("--change", action="store_true",
                    help="also time `change` dry runs (a comment inserted after line 1 of each file; nothing is written)")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    grep = ["rg", "-n", "-w"] if shutil.which("rg") else ["grep", "-rnw"]

    s = Server(a.bin, root, not a.no_watch)
    _, init = s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench_pillars", "version": "1"}})
    assert init["result"]["serverInfo"]["name"] == "ironbees", init
    s.notify("notifications/initialized")
    cold, status = s.tool("manage", {"command": "status"})
    print(f"server up; first call (opens/refreshes the index): {cold:.2f}s", file=sys.stderr)

    def understand(i):
        # Files and symbols alternate: both are what an agent asks first.
        t = FILES[i % len(FILES)] if i % 2 == 0 else SYMBOLS[i % len(SYMBOLS)]
        return s.tool("understand", {"target": t})[0]

    def navigate(i):
        sym = SYMBOLS[i % len(SYMBOLS)]
        return s.tool("navigate", {"action": NAV_ACTIONS[i % len(NAV_ACTIONS)], "target": sym})[0]

    def read(i):
        return s.tool("read", {"target": FILES[i % len(FILES)]})[0]

    def change(i):
        path = FILES[i % len(FILES)]
        edit = {"op": "insert", "path": path, "position": "after", "line": 1, "text": "# bench_pillars"}
        return s.tool("change", {"description": "bench", "edits": [edit], "options": {"dryRun": True}})[0]

    def rg(i):
        name = SYMBOLS[i % len(SYMBOLS)].split(".")[-1]
        return run_peer(grep + [name, root])

    def cat(i):
        return run_peer(["cat", os.path.join(root, FILES[i % len(FILES)])])

    def pyread(i):
        return py_read(os.path.join(root, FILES[i % len(FILES)]))

    ops = [
        ("understand", understand, None),
        ("navigate", navigate, ("rg -n -w SYMBOL" if grep[0] == "rg" else "grep -rnw SYMBOL", rg)),
        ("read", read, ("cat FILE", cat)),
        ("read", None, ("python open+sha256", pyread)),
    ]
    if a.change:
        ops.append(("change (dry run)", change, None))
    results = {}
    for name, f, peer in ops:
        if f is not None:
            for i in range(a.warmup):
                f(i)
            results[name] = [f(i) for i in range(a.n)]
        if peer is not None:
            pname, pf = peer
            for i in range(min(a.warmup, 2)):
                pf(i)
            results[f"{name}|{pname}"] = [pf(i) for i in range(a.n)]
    rss = None
    try:  # the server's peak resident set (Linux), read before it exits
        with open(f"/proc/{s.p.pid}/status") as f:
            rss = next((int(l.split()[1]) // 1024 for l in f if l.startswith("VmHWM:")), None)
    except OSError:
        pass
    s.close()

    print(f"\n{a.n} calls each after {a.warmup} warm-up calls; one `ironbees mcp` process ({'no watch' if a.no_watch else 'watching'}); root {root}")
    print(f"{'operation':<34}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for key, xs in results.items():
        label = key if "|" not in key else "  peer: " + key.split("|")[1]
        print(f"{label:<34}{ms(pct(xs, 50))} {ms(pct(xs, 95))} {ms(max(xs))}")
    print("\nratios (ironbees / peer):")
    for key, xs in results.items():
        if "|" in key:
            base = results[key.split("|")[0]]
            r50, r95 = pct(base, 50) / pct(xs, 50), pct(base, 95) / pct(xs, 95)
            print(f"  {key.split('|')[0]} vs {key.split('|')[1]}: p50 {r50:.3g}x, p95 {r95:.3g}x" + (f"  (the peer takes {1 / r50:.0f}x as long at p50)" if r50 < 1 else ""))
    if rss is not None:
        print(f"server peak RSS (VmHWM): {rss} MB")
    missed = [k for k in ("understand", "navigate", "read") if pct(results[k], 95) * 1000 >= a.target_ms]
    print(f"\ntarget p95 < {a.target_ms:.0f} ms: " + ("met" if not missed else "MISSED by " + ", ".join(missed)))
    if a.json:
        out = {k: {"p50_ms": pct(v, 50) * 1000, "p95_ms": pct(v, 95) * 1000, "n": len(v)} for k, v in results.items()}
        out["server_peak_rss_mb"] = rss
        print(json.dumps(out))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Issue 36: the commit pipeline's own overhead per stage, and its hub sync against plain git.

Real git, as a user would have it: a bare "remote" (reached by a file:// URL, so git
speaks its pack protocol instead of hard-linking objects), a user clone with
`ironbees pipeline init --exec true --test true --auto-approve` (the execution and
test commands do nothing, no linters, no database, no model: the refactor stage and
the SQL step skip, Slack is not configured), and beside it a peer that does the
same git work by hand:

* hub creation: `ironbees pipeline init` in a fresh user clone (it clones the hub)
  against `git clone file://remote.git`;
* per commit: the user edits three files and runs `git commit` (not timed), then
  `ironbees pipeline start --yes --json` (what the post-commit hook runs, the same
  pipeline `ironbees commit` starts): clone, code, test, refactor, sync (the push),
  notify; against `git pull` in a peer clone of a second bare remote that received
  the same commit (pushed there, not timed), so the peer fetches and checks out
  exactly the one-commit delta the hub's clone stage brings in.

ironbees and the peer alternate (ironbees first on even runs, the peer first on odd
ones), each after a `sync`; one warm-up round of each is not counted. Stage times come from the
pipeline's own events (`--json`): a stage is its `nodeStarted` to its
`stageFinished`; the approvals (answered by `--yes`) and checkpoints between stages
are what the run's total (`runStarted` to `runFinished`) has beyond the stages;
process start and exit are the wall time beyond that. The commands' own time (the
`durationMs` of `true` in the code and test results) is reported beside them.
Peak RSS is /usr/bin/time's maximum resident set (of ironbees or of the largest git
process it waited for). Medians of --runs rounds.

The repository: --git (a git directory, e.g. a fetched mirror) gives the history
(its HEAD), --tree adds a real source tree under --tree-dir in one more commit, so
the tip has about 10,000 files:

    nice python3 scripts/bench_pipeline.py --bin target/release/ironbees \\
        --git /work/.mirror/pylint-dev+pylint/repo \\
        --tree /tmp/cppr/pycorpora/python/Django-5.1.4 --runs 5
"""
import argparse, datetime, json, os, shutil, statistics, subprocess, sys, tempfile, time

STAGES = ["clone", "code", "test", "refactor", "sync", "notify"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_TERMINAL_PROMPT": "0"}


def sh(cmd, cwd=None, check=True):
    env = dict(os.environ, **GIT_ENV)
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} (in {cwd}) exited {p.returncode}: {p.stderr[-1500:]}")
    return p


def timed(cmd, cwd, ok=(0,)):
    """Wall seconds, peak RSS (KiB, /usr/bin/time -f %M), stdout. The disks are synced
    first: without it a timed clone also waited on the writes of the steps before it
    (deleting and writing trees of 10k files), differently from pair to pair."""
    env = dict(os.environ, **GIT_ENV)
    os.sync()
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = ["/usr/bin/time", "-o", tf.name, "-f", "%M"] + cmd
        t = time.perf_counter()
        p = subprocess.run(full, cwd=cwd, env=env, capture_output=True, text=True)
        secs = time.perf_counter() - t
        lines = [l for l in tf.read().splitlines() if l.strip().isdigit()]
    if p.returncode not in ok:
        sys.exit(f"{' '.join(cmd)} (in {cwd}) exited {p.returncode}: {p.stderr[-2000:]}")
    return secs, int(lines[-1]) if lines else 0, p.stdout


def uptime():
    return sh(["uptime"], check=False).stdout.strip()


def head(repo, ref="HEAD"):
    return sh(["git", "rev-parse", ref], cwd=repo).stdout.strip()


def build_repo(a, work):
    """src: the history of --git, plus --tree under --tree-dir as one commit."""
    src = os.path.join(work, "src")
    sh(["git", "clone", "-q", "--no-local", a.git, src])
    if a.tree:
        dst = os.path.join(src, a.tree_dir)
        shutil.copytree(a.tree, dst, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        sh(["git", "add", "-A", "-f", "."], cwd=src)
        sh(["git", "commit", "-q", "-m", f"add {os.path.basename(a.tree.rstrip('/'))} "
            f"under {a.tree_dir}/"], cwd=src)
    files = len(sh(["git", "ls-files"], cwd=src).stdout.splitlines())
    commits = int(sh(["git", "rev-list", "--count", "HEAD"], cwd=src).stdout)
    branch = sh(["git", "symbolic-ref", "--short", "HEAD"], cwd=src).stdout.strip()
    for name in ("remote.git", "peer-remote.git"):
        sh(["git", "clone", "-q", "--bare", "--single-branch", "file://" + src,
            os.path.join(work, name)])
    shutil.rmtree(src)
    return files, commits, branch


def user_clone(work, name, remote="remote.git"):
    path = os.path.join(work, name)
    sh(["git", "clone", "-q", "file://" + os.path.join(work, remote), path])
    return path


def init_cmd(b):
    return [b, "pipeline", "init", "--exec", "true", "--test", "true", "--auto-approve",
            "--json"]


def parse_events(out):
    events, outcome = [], None
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if "outcome" in o:
            outcome = o["outcome"]
        elif "kind" in o:
            events.append(o)
    return events, outcome


def stage_times(events, outcome):
    started, res = {}, {}
    t0 = t1 = None
    for e in events:
        k = e["kind"]
        if k["type"] == "runStarted":
            t0 = e["timeMs"]
        elif k["type"] == "runFinished":
            t1 = e["timeMs"]
        elif k["type"] == "nodeStarted":
            started[k["node"].lower()] = e["timeMs"]
        elif k["type"] == "stageFinished":
            st = k["stage"]
            res[st] = {"ms": e["timeMs"] - started[st], "status": k["status"]}
    res["_run_ms"] = (t1 - t0) if t0 is not None and t1 is not None else None
    r = (outcome or {}).get("state", {}).get("results", {})
    res["_cmd_ms"] = {
        "code": (r.get("code", {}).get("executionResult") or {}).get("durationMs"),
        "test": (r.get("test", {}).get("testResults") or {}).get("durationMs")}
    return res


def git_log_ms(user, pipeline_id):
    """The completion times (epoch ms) of the git commands the pipeline logged."""
    path = os.path.join(user, ".ironbees", "logs", "git", f"{pipeline_id}.log")
    out = []
    try:
        with open(path) as fh:
            for line in fh:
                stamp = line.split(" ", 1)[0]
                try:
                    t = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")
                except ValueError:
                    continue
                out.append(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
    except OSError:
        pass
    return out


def git_share(events, git_done):
    """Per stage: the git commands it ran and the time up to their completions (each
    command's gap since the previous logged git command or the stage's start, an upper
    bound on git's own time: the gap also holds whatever ironbees did in between)."""
    started, res = {}, {}
    for e in events:
        k = e["kind"]
        if k["type"] == "nodeStarted":
            started[k["node"].lower()] = e["timeMs"]
        elif k["type"] == "stageFinished":
            t0, t1 = started[k["stage"]], e["timeMs"]
            prev, n, ms = t0, 0, 0.0
            for t in git_done:
                if t0 <= t <= t1 + 1:
                    ms += max(0.0, t - max(prev, t0))
                    prev, n = t, n + 1
                elif t > t1 + 1:
                    break
                else:
                    prev = t
            res[k["stage"]] = {"git_commands": n, "git_ms": ms}
    return res


def edit(user, files, n):
    for f in files:
        with open(os.path.join(user, f), "a") as fh:
            fh.write(f"# bench-pipeline: {n}\n")
    sh(["git", "commit", "-q", "-a", "-m", f"bench-pipeline step {n}"], cwd=user)
    sh(["git", "push", "-q", "peer-remote", "HEAD"], cwd=user)


def plain(path):
    """A default file to edit: over 20 kB, ASCII and no SQL keyword (the test stage's SQL
    step would look for a database; at f49ac4a it also panics on a non-ASCII character in
    a string literal of a changed file)."""
    with open(path, "rb") as fh:
        d = fh.read()
    return len(d) > 20000 and d.isascii() and not any(
        k in d for k in (b"SELECT", b"INSERT", b"UPDATE ", b"DELETE "))


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the ironbees binary")
    ap.add_argument("--git", required=True, help="a git directory: the history")
    ap.add_argument("--tree", help="a source tree committed on top (to reach ~10k files)")
    ap.add_argument("--tree-dir", default="vendor-tree", help="where --tree goes in the repo")
    ap.add_argument("--file", action="append",
                    help="a tracked file the user edits (default: three .py files)")
    ap.add_argument("--runs", type=int, default=5, help="timed rounds (medians of these)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--work", help="where the repositories go (default: a temp dir)")
    ap.add_argument("--json-out", help="also write every measurement here")
    a = ap.parse_args()
    b = os.path.abspath(a.bin)
    work = a.work or tempfile.mkdtemp(prefix="bench-pipeline-")
    if os.path.exists(work) and os.listdir(work):
        sys.exit(f"{work} is not empty")
    os.makedirs(work, exist_ok=True)

    t = time.perf_counter()
    files, commits, branch = build_repo(a, work)
    print(f"repository: {files} files, {commits} commits on {branch} "
          f"(built in {time.perf_counter() - t:.0f}s) in {work}", file=sys.stderr)
    load_before = uptime()

    # Hub creation: `pipeline init` (the hub's clone) against `git clone`.
    initu = user_clone(work, "init-user")
    hub_init = None
    init_t, init_rss, clone_t = [], [], []
    for i in range(a.warmup + a.runs):
        order = ["ib", "git"] if i % 2 == 0 else ["git", "ib"]
        for who in order:
            if who == "ib":
                if hub_init:
                    shutil.rmtree(hub_init)
                shutil.rmtree(os.path.join(initu, ".ironbees"), ignore_errors=True)
                secs, rss, out = timed(init_cmd(b), initu)
                o = json.loads(out)
                if not o.get("created") or not os.path.isdir(o.get("hub", "")):
                    sys.exit(f"pipeline init created no hub: {out[:400]}")
                hub_init = o["hub"]
                if i >= a.warmup:
                    init_t.append(secs), init_rss.append(rss)
            else:
                dst = os.path.join(work, "peer-clone")
                shutil.rmtree(dst, ignore_errors=True)
                secs, _, _ = timed(["git", "clone", "-q", "file://" + os.path.join(
                    work, "remote.git"), dst], work)
                if i >= a.warmup:
                    clone_t.append(secs)
    print(f"init {med(init_t):.2f}s, git clone {med(clone_t):.2f}s", file=sys.stderr)
    shutil.rmtree(os.path.join(work, "peer-clone"), ignore_errors=True)
    shutil.rmtree(hub_init)
    shutil.rmtree(initu)

    # Per commit: the pipeline against `git pull`.
    user = user_clone(work, "user")
    sh(["git", "remote", "add", "peer-remote", "file://" + os.path.join(work, "peer-remote.git")],
       cwd=user)
    peer = user_clone(work, "peer", "peer-remote.git")
    sh(init_cmd(b), cwd=user)
    edit_files = a.file or [f for f in sh(["git", "ls-files", "-z", "*.py"], cwd=user).stdout
                            .split("\0") if f and plain(os.path.join(user, f))][:3]
    if len(edit_files) < 1:
        sys.exit("no file to edit")
    print(f"editing {', '.join(edit_files)}", file=sys.stderr)
    rounds = []
    for i in range(a.warmup + a.runs):
        edit(user, edit_files, i)
        want = head(user)
        rec = {}
        order = ["ib", "git"] if i % 2 == 0 else ["git", "ib"]
        for who in order:
            if who == "ib":
                secs, rss, out = timed([b, "pipeline", "start", "--yes", "--json"], user)
                events, outcome = parse_events(out)
                status = (outcome or {}).get("status", {}).get("type")
                if status != "succeeded":
                    sys.exit(f"round {i}: pipeline {status}: {out[-1500:]}")
                got = sh(["git", "rev-parse", branch], cwd=os.path.join(work, "remote.git"))
                if got.stdout.strip() != want:
                    sys.exit(f"round {i}: the remote has {got.stdout.strip()}, not {want}")
                pid = (outcome or {}).get("pipelineId")
                rec.update(wall=secs, rss_kib=rss, stages=stage_times(events, outcome),
                           git=git_share(events, git_log_ms(user, pid)), pipeline_id=pid)
            else:
                secs, _, _ = timed(["git", "pull", "-q", "--ff-only"], peer)
                if head(peer) != want:
                    sys.exit(f"round {i}: the peer is at {head(peer)}, not {want}")
                rec["pull"] = secs
        if i >= a.warmup:
            rounds.append(rec)
        print(f"round {i}{' (warm-up)' if i < a.warmup else ''}: pipeline {rec['wall']:.2f}s "
              f"(clone stage {rec['stages']['clone']['ms']} ms), git pull {rec['pull']:.2f}s",
              file=sys.stderr)
    load_after = uptime()

    def m_stage(st):
        return med([r["stages"].get(st, {}).get("ms") for r in rounds])

    stage_m = {st: m_stage(st) for st in STAGES}
    run_m = med([r["stages"]["_run_ms"] for r in rounds])
    between = med([r["stages"]["_run_ms"] - sum(r["stages"].get(st, {}).get("ms", 0)
                                                for st in STAGES) for r in rounds])
    wall_m = 1000 * med([r["wall"] for r in rounds])
    pull_m = 1000 * med([r["pull"] for r in rounds])
    res = {"bin": a.bin, "git": a.git, "tree": a.tree, "files": files, "commits": commits,
           "edited": edit_files, "runs": a.runs, "cores": os.cpu_count(),
           "uptime_before": load_before, "uptime_after": load_after,
           "init_s": init_t, "init_rss_kib": init_rss, "git_clone_s": clone_t, "rounds": rounds,
           "median": {"stages_ms": stage_m, "between_stages_ms": between, "run_ms": run_m,
                      "wall_ms": wall_m, "rss_kib": med([r["rss_kib"] for r in rounds]),
                      "pull_ms": pull_m, "init_ms": 1000 * med(init_t),
                      "git_clone_ms": 1000 * med(clone_t)}}
    if a.json_out:
        with open(a.json_out, "w") as fh:
            json.dump(res, fh, indent=2)

    statuses = {st: sorted({r["stages"].get(st, {}).get("status") for r in rounds}) for st in STAGES}
    cmd = {k: med([r["stages"]["_cmd_ms"][k] for r in rounds]) for k in ("code", "test")}
    print(f"repository: {files} files, {commits} commits; edited {', '.join(edit_files)}")
    print(f"{a.runs} rounds (+{a.warmup} warm-up), alternating; {res['cores']} cores")
    print(f"uptime before: {load_before}\nuptime after:  {load_after}")
    print("\n| stage | status | wall p50 | git commands | up to their completions p50 |")
    print("| --- | --- | ---: | ---: | ---: |")
    for st in STAGES:
        note = f" (`true` itself: {cmd[st]:.0f} ms)" if st in cmd and cmd[st] is not None else ""
        gn = med([r["git"].get(st, {}).get("git_commands") for r in rounds])
        gm = med([r["git"].get(st, {}).get("git_ms") for r in rounds])
        print(f"| {st} | {'/'.join(map(str, statuses[st]))} | {stage_m[st]:.0f} ms{note} "
              f"| {gn:.0f} | {gm:.0f} ms |")
    print(f"| approvals and checkpoints between stages | | {between:.0f} ms | | |")
    print(f"| pipeline (runStarted to runFinished) | | {run_m:.0f} ms | | |")
    print(f"| process wall (`pipeline start`) | | {wall_m:.0f} ms | | |")
    print(f"\npeak RSS p50: pipeline start {res['median']['rss_kib'] / 1024:.0f} MiB, "
          f"pipeline init {med(init_rss) / 1024:.0f} MiB")
    print("\n| | ironbees | git | ratio |\n| --- | ---: | ---: | ---: |")
    im, cm = res["median"]["init_ms"], res["median"]["git_clone_ms"]
    print(f"| hub creation: `pipeline init` / `git clone` | {im:.0f} ms | {cm:.0f} ms "
          f"| {im / cm:.2f} |")
    cs = stage_m["clone"]
    print(f"| per commit: clone stage / `git pull` | {cs:.0f} ms | {pull_m:.0f} ms "
          f"| {cs / pull_m:.2f} |")
    print(f"| per commit: whole pipeline / `git pull` | {wall_m:.0f} ms | {pull_m:.0f} ms "
          f"| {wall_m / pull_m:.2f} |")


if __name__ == "__main__":
    main()

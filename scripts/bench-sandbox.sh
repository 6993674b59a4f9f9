#!/usr/bin/env bash
# Sandbox overhead: `ironbees exec -- CMD` against the bare CMD, per backend, with
# hyperfine (apt-get install hyperfine). Prints a markdown table of medians (p50)
# and the ratio to the bare command. Usage:
#   cargo build --release --bin ironbees && scripts/bench-sandbox.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-100}"
bin="$(realpath "${IRONBEES:-target/release/ironbees}")"
command -v hyperfine >/dev/null || { echo "hyperfine not found (apt-get install hyperfine)" >&2; exit 1; }
[ -x "$bin" ] || { echo "$bin not found (cargo build --release --bin ironbees)" >&2; exit 1; }
ws="$(mktemp -d)"
out="$(mktemp -d)"
trap 'rm -rf "$ws" "$out"' EXIT
cd "$ws"

commands=(
  "true"
  "python3 -c pass"
  "sh -c 'for i in 1 2 3 4 5 6 7 8; do cat /etc/os-release > /dev/null; done'"
)
backends=(namespaces bubblewrap none)

median() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['median'])" "$1"; }

echo "| command | bare p50 (ms) | backend | sandboxed p50 (ms) | overhead (ms) | ratio |"
echo "| --- | ---: | --- | ---: | ---: | ---: |"
i=0
for c in "${commands[@]}"; do
  i=$((i + 1))
  hyperfine -N --warmup 5 --runs "$runs" --export-json "$out/bare$i.json" "$c" >/dev/null 2>&1 \
    || hyperfine --warmup 5 --runs "$runs" --export-json "$out/bare$i.json" "$c" >/dev/null
  bare=$(median "$out/bare$i.json")
  for b in "${backends[@]}"; do
    hyperfine -N --warmup 5 --runs "$runs" --export-json "$out/sb$i$b.json" \
      "$bin exec --backend $b -- $c" >/dev/null 2>"$out/err" \
      || hyperfine --warmup 5 --runs "$runs" --export-json "$out/sb$i$b.json" \
        "$bin exec --backend $b -- $c" >/dev/null 2>"$out/err"
    sb=$(median "$out/sb$i$b.json")
    python3 - "$c" "$bare" "$b" "$sb" <<'PY'
import sys
c, bare, b, sb = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
print(f"| `{c}` | {bare*1000:.2f} | {b} | {sb*1000:.2f} | {(sb-bare)*1000:.2f} | {sb/bare:.1f}x |")
PY
  done
done

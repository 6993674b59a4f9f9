#!/usr/bin/env bash
# Clean debug build time of the HTTP stack `llm` uses, with the two rustls crypto
# providers side by side: reqwest 0.13 + rustls with `ring` (what ironbees ships)
# vs reqwest 0.13's own `rustls` feature (aws-lc-rs / aws-lc-sys). Each variant is
# a throwaway crate with its own target directory; sources are fetched first so
# only compilation is timed. Prints seconds per variant and the ratio.
#
#   scripts/bench-tls-build.sh            (about 5 minutes on 2 cores)
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

common='tokio = { version = "1.47", default-features = false, features = ["rt", "time"] }'
declare -A deps=(
  [ring]='reqwest = { version = "0.13.5", default-features = false, features = ["stream", "rustls-no-provider"] }
rustls = { version = "0.23.4", default-features = false, features = ["ring", "std", "tls12"] }'
  [aws-lc]='reqwest = { version = "0.13.5", default-features = false, features = ["stream", "rustls"] }'
)
declare -A secs
for v in ring aws-lc; do
  d="$work/$v"
  mkdir -p "$d/src"
  printf '[package]\nname = "tls-%s"\nversion = "0.0.0"\nedition = "2024"\n\n[dependencies]\n%s\n%s\n' \
    "$v" "$common" "${deps[$v]}" >"$d/Cargo.toml"
  echo 'fn main() {}' >"$d/src/main.rs"
  (cd "$d" && cargo fetch -q)
  start=$(date +%s.%N)
  (cd "$d" && cargo build -q -j2)
  end=$(date +%s.%N)
  secs[$v]=$(echo "$end - $start" | bc)
  printf '%-7s %6.1f s\n' "$v" "${secs[$v]}"
done
printf 'aws-lc / ring: %.2fx\n' "$(echo "${secs[aws-lc]} / ${secs[ring]}" | bc -l)"

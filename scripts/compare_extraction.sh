#!/usr/bin/env bash
# Checks that two ironbees builds extract the same thing: indexes every corpus under
# bench-data/corpora/ (scripts/bench-corpora.sh) with each binary, in scratch copies,
# and compares per file the stored definitions and the encoded references byte for
# byte. For speed work on the extractor, where the output must not change. Needs
# the sqlite3 shell (apt-get install sqlite3).
#
#   scripts/compare_extraction.sh OLD_BINARY NEW_BINARY
#
# Exit status 1 if any corpus differs; the differing rows are left in $scratch.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2")
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
status=0
dump() {
  sqlite3 "$1/.ironbees/index.db" \
    "SELECT f.path, b.n_refs, hex(b.refs) FROM files f JOIN blobs b ON b.id = f.blob_id ORDER BY f.path;
     SELECT f.path, s.ord, s.name, s.qualified_name, s.kind, s.line, s.end_line, s.signature, s.doc
       FROM files f JOIN symbols s ON s.blob_id = f.blob_id ORDER BY f.path, s.ord;"
}
for corpus in bench-data/corpora/*/; do
  name=$(basename "$corpus")
  for side in old new; do
    tree="$scratch/$side"
    rm -rf "$tree" && mkdir -p "$tree" && cp -r "$corpus". "$tree"/
    rm -rf "$tree/.ironbees" && mkdir "$tree/.ironbees"
    bin=$old; [ $side = new ] && bin=$new
    (cd "$tree" && "$bin" index --json > /dev/null)
    dump "$tree" > "$scratch/$name.$side"
  done
  if cmp -s "$scratch/$name.old" "$scratch/$name.new"; then
    echo "$name: identical ($(grep -c . "$scratch/$name.old") rows)"
  else
    echo "$name: DIFFERENT (see diff $scratch/$name.old $scratch/$name.new)"
    status=1
  fi
done
[ $status -eq 0 ] && rm -rf "$scratch"
exit $status

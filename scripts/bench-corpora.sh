#!/usr/bin/env bash
# Prepares real code that no one here wrote, one directory per language, under
# bench-data/corpora/ (git-ignored). Sources are pinned so a rerun measures the same
# trees:
#   python      Django 5.1.4 sdist (PyPI)
#   rust        tokio, serde, regex, regex-syntax, syn, clap_builder, hyper (crates.io)
#   javascript  lodash 4.17.21, express 4.21.2 (npm)
#   typescript  rxjs 7.8.2 src/, zod 3.24.1 src/ (npm)
#   tsx         @tanstack/react-router 1.114.3, @tanstack/react-query 5.66.0 src/ (npm)
#   go          golang.org/x/tools from Debian's golang-golang-x-tools-dev
#   c           libgit2 as vendored by the libgit2-sys crate 0.18.1+1.9.0 (crates.io)
#   java        google/gson, csharp JamesNK/Newtonsoft.Json (Src/), cpp google/leveldb:
#               git repositories at pinned commits, from $IRONBEES_MIRROR/<owner>+<name>/repo
#               when present (the `fetch` tool's mirror), else cloned from GitHub
#   cpp         also pybind11 2.13.6's headers (include/, from its PyPI sdist): template
#               specializations, operators and conversion operators
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-data/corpora
mkdir -p "$out" bench-data/dl
dl=$(cd bench-data/dl && pwd)
mirror=${IRONBEES_MIRROR:-/work/.mirror}

have() { [ -d "$out/$1" ] && [ -n "$(ls -A "$out/$1")" ]; }

npm_unpack() { # package version dest [subdir to keep]
  local tgz
  tgz=$(cd "$dl" && npm pack "$1@$2" --silent | tail -1)
  mkdir -p "$3/$1"
  tar xzf "$dl/$tgz" -C "$3/$1" --strip-components=1
  if [ -n "${4:-}" ]; then
    find "$3/$1" -mindepth 1 -maxdepth 1 ! -path "$3/$1/$4" -exec rm -rf {} +
  fi
}

crate_sources() { # dest crate=version...
  local dest=$1; shift
  local proj="$dl/cargo-fetch-$(basename "$dest")"
  mkdir -p "$proj/src" && touch "$proj/src/lib.rs"
  {
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n'
    for c in "$@"; do echo "${c%%=*} = \"=${c#*=}\""; done
  } > "$proj/Cargo.toml"
  (cd "$proj" && cargo fetch --quiet)
  mkdir -p "$dest"
  for c in "$@"; do
    cp -r "$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"${c%%=*}-${c#*=}" | head -1)" "$dest/"
  done
}

git_export() { # owner/name commit dest [path...]
  local repo=$1 commit=$2 dest=$3
  shift 3
  local gitdir="$mirror/${repo/\//+}/repo"
  if [ ! -d "$gitdir" ]; then
    gitdir="$dl/${repo/\//+}.git"
    [ -d "$gitdir" ] || git clone --quiet --bare "https://github.com/$repo" "$gitdir"
  fi
  mkdir -p "$dest"
  # A mirror may leave out a repository's largest blobs (test data), and `git archive`
  # refuses a tree with a missing blob: write every present blob one by one.
  git --git-dir="$gitdir" ls-tree -r --format='%(objectname) %(path)' "$commit" -- "${@:-.}" |
    while read -r oid path; do
      if git --git-dir="$gitdir" cat-file -e "$oid" 2>/dev/null; then
        mkdir -p "$dest/$(dirname "$path")"
        git --git-dir="$gitdir" cat-file blob "$oid" > "$dest/$path"
      fi
    done
}

if ! have python; then
  echo "python: django"
  python3 -m pip download --quiet --no-deps --no-binary :all: django==5.1.4 -d "$dl"
  mkdir -p "$out/python" && tar xzf "$dl"/[Dd]jango-5.1.4.tar.gz -C "$out/python"
fi
if ! have javascript; then
  echo "javascript: lodash, express"
  npm_unpack lodash 4.17.21 "$out/javascript"
  npm_unpack express 4.21.2 "$out/javascript"
fi
if ! have typescript; then
  echo "typescript: rxjs, zod"
  npm_unpack rxjs 7.8.2 "$out/typescript" src
  npm_unpack zod 3.24.1 "$out/typescript" src
fi
if ! have tsx; then
  echo "tsx: @tanstack/react-router, @tanstack/react-query"
  npm_unpack @tanstack/react-router 1.114.3 "$out/tsx" src
  npm_unpack @tanstack/react-query 5.66.0 "$out/tsx" src
fi
if ! have rust; then
  echo "rust: crates"
  crate_sources "$out/rust" tokio=1.43.0 serde=1.0.217 regex=1.11.1 regex-syntax=0.8.5 \
    syn=2.0.96 clap_builder=4.5.26 hyper=1.5.2
fi
if ! have c; then
  echo "c: libgit2 (vendored by libgit2-sys)"
  crate_sources "$dl/libgit2-sys" libgit2-sys=0.18.1+1.9.0
  mkdir -p "$out/c"
  cp -r "$dl/libgit2-sys/libgit2-sys-0.18.1+1.9.0/libgit2/src" "$out/c/libgit2-src"
  cp -r "$dl/libgit2-sys/libgit2-sys-0.18.1+1.9.0/libgit2/include" "$out/c/libgit2-include"
fi
if ! have go; then
  echo "go: golang.org/x/tools (Debian)"
  if [ ! -d /usr/share/gocode/src/golang.org/x/tools ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-golang-x-tools-dev >/dev/null
  fi
  mkdir -p "$out/go" && cp -rL /usr/share/gocode/src/golang.org/x/tools "$out/go/"
fi
if ! have java; then echo "java: gson"; git_export google/gson 9835b6f90 "$out/java/gson"; fi
if ! have csharp; then echo "csharp: Newtonsoft.Json"; git_export JamesNK/Newtonsoft.Json 09bb545d "$out/csharp/Newtonsoft.Json" Src; fi
if ! have cpp; then echo "cpp: leveldb"; git_export google/leveldb 78a352f "$out/cpp/leveldb"; fi
if [ ! -d "$out/cpp/pybind11" ]; then
  echo "cpp: pybind11 headers"
  python3 -m pip download --quiet --no-deps --no-binary :all: pybind11==2.13.6 -d "$dl"
  tar xzf "$dl/pybind11-2.13.6.tar.gz" -C "$dl"
  mkdir -p "$out/cpp/pybind11" && cp -r "$dl/pybind11-2.13.6/pybind11/include" "$out/cpp/pybind11/"
fi

for d in "$out"/*; do
  printf '%-12s %6s files\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)"
done

#!/usr/bin/env bash
# Builds a large tree of real, distinct, hand-written code (issue 27's "monorepo
# scale") from package registries only, pinned, under bench-data/scale/ (git-ignored):
#
#   bench-data/scale/full/<language>/<project>/   every project below, pruned
#   bench-data/scale/growth/<0.5M|1M|2M|4M|8M>/  growth-curve subsets (hard links)
#   bench-data/scale/dl/                          downloads (sdists, tarballs, .debs)
#
# Sources (all pinned; Debian's security archive replaces old versions, so a .deb
# version that is gone is reported and the current candidate is taken instead):
#   python  PyPI sdists: Django, sympy, scipy, pandas, matplotlib, numpy, networkx,
#           SQLAlchemy, scikit-learn, astropy, Twisted, ansible-core (their C/C++
#           parts count as C/C++), grpcio (gRPC core + abseil, BoringSSL, re2, upb: C/C++)
#   rust    ~215 crates from crates.io (one throwaway Cargo project + `cargo fetch`):
#           tokio, syn, serde, hyper, rustls, wasmtime + cranelift, naga, wgpu, bevy,
#           polars, arrow, datafusion, gix, sqlparser, image, rav1e, ... and the C/C++
#           the -sys/-src crates vendor (OpenSSL, RocksDB, zstd, bzip2)
#   js      npm: three (src, examples/jsm), webpack, eslint, jquery, moment, lodash,
#           knex, mongoose, sequelize, node-forge, handlebars, core-js (modules)
#   ts      npm: rxjs, zod, effect, @effect/platform, @tanstack/query-core and
#           router-core, @trpc/server, lexical, mobx (src/), type-fest, @types/node,
#           @types/react (hand-written declarations)
#   go      Debian: golang-1.19-src (standard library and cmd/, without vendor/ and
#           testdata/), golang-golang-x-tools-dev, golang-google-grpc-dev
#   java    Debian: openjdk-17-source (src.zip: java.base, java.desktop, java.xml,
#           jdk.compiler, ... one project per module)
#   c       Debian: linux-source-6.1 (kernel/, mm/, fs/, net/, block/, lib/, crypto/,
#           security/, drivers/net/ethernet/intel)
#   cpp     Debian: libboost1.81-dev headers (without preprocessed/), libeigen3-dev
#
# Unreachable from this machine, hence not used: Maven Central, proxy.golang.org, NuGet
# (so no C#). Pruning and the line rule are documented in scripts/scale_corpus.py:
# only files with the languages' extensions; generated, minified and >1 MiB files and
# testdata/vendor/dist/preprocessed directories are deleted; a line is a non-blank line.
#
#   scripts/bench-scale-corpus.sh                 # full tree + subsets, prints counts
#   SUBSETS="0.5M 1M" scripts/bench-scale-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
base=bench-data/scale
out=$base/full
mkdir -p "$out" "$base/dl"/{pypi,npm,deb,cargo}
dl=$(cd "$base/dl" && pwd)
helper=scripts/scale_corpus.py
SUBSETS=${SUBSETS-"0.5M 1M 2M 4M 6M 8M"}

have() { [ -d "$out/$1" ] && [ -n "$(ls -A "$out/$1")" ]; }
done_mark() { python3 "$helper" prune "$out/$1"; }

pypi_project() { # lang/project name version [subdir of the sdist to keep]
  have "$1" && return 0
  echo "$1: PyPI $2 $3"
  local sdist; sdist=$(python3 "$helper" pypi "$2" "$3" "$dl/pypi")
  rm -rf "$out/$1.tmp" && mkdir -p "$out/$1.tmp"
  tar xzf "$sdist" -C "$out/$1.tmp" --strip-components=1
  rm -rf "$out/$1" && mkdir -p "$(dirname "$out/$1")"
  if [ -n "${4:-}" ]; then mv "$out/$1.tmp/$4" "$out/$1"; rm -rf "$out/$1.tmp"
  else mv "$out/$1.tmp" "$out/$1"; fi
  done_mark "$1"
}

npm_project() { # lang/project package version subdir...
  have "$1" && return 0
  local proj=$1 pkg=$2 ver=$3; shift 3
  echo "$proj: npm $pkg@$ver"
  local tgz; tgz=$(cd "$dl/npm" && npm pack "$pkg@$ver" --silent | tail -1)
  local tmp="$dl/npm/x-$(basename "$proj")"
  rm -rf "$tmp" && mkdir -p "$tmp" "$out/$proj"
  tar xzf "$dl/npm/$tgz" -C "$tmp" --strip-components=1
  for s in "$@"; do
    if [ "$s" = . ]; then cp -r "$tmp"/. "$out/$proj/"
    else mkdir -p "$out/$proj/$(dirname "$s")"; cp -r "$tmp/$s" "$out/$proj/$s"; fi
  done
  rm -rf "$tmp"
  done_mark "$proj"
}

deb_extract() { # package version -> prints the directory it was extracted to
  local pkg=$1 ver=$2 dir="$dl/deb/$1"
  if [ ! -d "$dir" ]; then
    ls "$dl/deb/${pkg}"_*.deb >/dev/null 2>&1 || ( cd "$dl/deb" && { apt-get download -q "$pkg=$ver" >/dev/null 2>&1 ||
        { echo "warning: $pkg=$ver is gone from the archive; taking the current candidate" >&2
          apt-get download -q "$pkg" >/dev/null; }; } )
    mkdir -p "$dir.tmp" && dpkg-deb -x "$(ls "$dl/deb/${pkg}"_*.deb | head -1)" "$dir.tmp" && mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

copy_project() { # lang/project source-dir
  have "$1" && return 0
  echo "$1: from $2"
  mkdir -p "$out/$1" && cp -rL "$2"/. "$out/$1/"
  done_mark "$1"
}

# ---- Python (PyPI sdists) -------------------------------------------------------
pypi_project python/django django 5.1.4
pypi_project python/sympy sympy 1.14.0
pypi_project python/scipy scipy 1.18.1
pypi_project python/pandas pandas 3.1.1
pypi_project python/matplotlib matplotlib 3.11.2
pypi_project python/numpy numpy 2.5.5
pypi_project python/networkx networkx 3.7
pypi_project python/sqlalchemy sqlalchemy 2.1.9
pypi_project python/scikit-learn scikit-learn 1.9.1
pypi_project python/astropy astropy 8.0.2
pypi_project python/twisted twisted 26.10.0
pypi_project python/ansible-core ansible-core 2.21.5
# gRPC's sdist: its C++ core and the C/C++ libraries it vendors (third_party/)
pypi_project cpp/grpc grpcio 1.85.3

# ---- JavaScript and TypeScript (npm) ---------------------------------------------
npm_project javascript/three three 0.187.0 src examples/jsm
npm_project javascript/webpack webpack 5.112.2 lib
npm_project javascript/eslint eslint 10.15.0 lib
npm_project javascript/jquery jquery 4.0.0 src
npm_project javascript/moment moment 2.31.0 src
npm_project javascript/lodash lodash 4.18.1 .
npm_project javascript/knex knex 3.3.0 lib
npm_project javascript/mongoose mongoose 9.12.1 lib
npm_project javascript/sequelize sequelize 6.37.8 lib
npm_project javascript/node-forge node-forge 1.4.3 lib
npm_project javascript/handlebars handlebars 4.7.10 lib
npm_project javascript/core-js core-js 3.51.0 modules internals
npm_project typescript/rxjs rxjs 7.8.2 src
npm_project typescript/zod zod 4.6.7 src
npm_project typescript/effect effect 4.1.0 src
npm_project typescript/effect-platform @effect/platform 0.97.2 src
npm_project typescript/tanstack-query-core @tanstack/query-core 5.108.0 src
npm_project typescript/tanstack-router-core @tanstack/router-core 1.171.39 src
npm_project typescript/trpc-server @trpc/server 11.25.2 src
npm_project typescript/lexical lexical 0.53.0 src
npm_project typescript/mobx mobx 7.1.3 src
npm_project typescript/type-fest type-fest 6.0.3 source
npm_project typescript/types-node @types/node 26.6.6 .
npm_project typescript/types-react @types/react 19.3.0 .

# ---- Rust (crates.io) ------------------------------------------------------------
crates=(arrow-arith=59.3.2 arrow-array=59.3.2 arrow-buffer=59.3.2 arrow-cast=59.3.2
  arrow-csv=59.3.2 arrow-data=59.3.2 arrow-ipc=59.3.2 arrow-json=59.3.2 arrow-ord=59.3.2
  arrow-row=59.3.2 arrow-schema=59.3.2 arrow-select=59.3.2 arrow-string=59.3.2 aws-lc-rs=1.19.0
  bevy_android=0.20.1 bevy_app=0.20.1 bevy_asset=0.20.1 bevy_asset_macros=0.20.1
  bevy_camera=0.20.1 bevy_color=0.20.1 bevy_curve=0.20.1 bevy_derive=0.20.1
  bevy_diagnostic=0.20.1 bevy_ecs=0.20.1 bevy_ecs_macro_logic=0.20.1 bevy_ecs_macros=0.20.1
  bevy_encase_derive=0.20.1 bevy_extract=0.20.1 bevy_extract_macros=0.20.1 bevy_image=0.20.1
  bevy_input=0.20.1 bevy_log=0.20.1 bevy_macro_utils=0.20.1 bevy_material=0.20.1
  bevy_material_macros=0.20.1 bevy_math=0.20.1 bevy_mesh=0.20.1 bevy_platform=0.20.1
  bevy_ptr=0.20.1 bevy_reflect=0.20.1 bevy_reflect_derive=0.20.1 bevy_render=0.20.1
  bevy_render_macros=0.20.1 bevy_shader=0.20.1 bevy_shape=0.20.1 bevy_tasks=0.20.1
  bevy_time=0.20.1 bevy_transform=0.20.1 bevy_utils=0.20.1 bevy_window=0.20.1 bindgen=0.72.1
  bzip2-sys=0.1.13+1.0.8 chrono=0.4.45 clap_builder=4.6.7 cranelift-assembler-x64=0.135.8
  cranelift-assembler-x64-meta=0.135.8 cranelift-bforest=0.135.8 cranelift-bitset=0.135.8
  cranelift-codegen=0.135.8 cranelift-codegen-meta=0.135.8 cranelift-codegen-shared=0.135.8
  cranelift-control=0.135.8 cranelift-entity=0.135.8 cranelift-frontend=0.135.8
  cranelift-isle=0.135.8 cranelift-native=0.135.8 cranelift-srcgen=0.135.8 crossbeam=0.8.5
  crossbeam-channel=0.5.17 crossbeam-deque=0.8.8 crossbeam-epoch=0.9.21 crossbeam-queue=0.3.14
  crossbeam-utils=0.8.23 datafusion-common=55.2.0 datafusion-doc=55.2.0 datafusion-expr=55.2.0
  datafusion-expr-common=55.2.0 datafusion-functions-aggregate-common=55.2.0
  datafusion-functions-window-common=55.2.0 datafusion-physical-expr-common=55.2.0
  encase=0.12.1 exr=1.74.2 flate2=1.1.11 gimli=0.33.0 gix=0.90.0 gix-actor=0.44.1
  gix-archive=0.39.0 gix-attributes=0.37.1 gix-bitmap=0.6.1 gix-blame=0.20.0 gix-chunk=0.10.1
  gix-command=0.12.1 gix-commitgraph=0.42.0 gix-config=0.62.2 gix-config-value=0.21.1
  gix-credentials=0.42.1 gix-date=0.18.1 gix-diff=0.70.0 gix-dir=0.32.0 gix-discover=0.57.1
  gix-error=0.5.2 gix-filter=0.36.1 gix-fs=0.24.1 gix-glob=0.29.1 gix-hash=0.28.1
  gix-hashtable=0.18.1 gix-ignore=0.24.1 gix-imara-diff=0.3.3 gix-index=0.58.0 gix-lock=26.0.1
  gix-macros=0.2.1 gix-mailmap=0.36.1 gix-merge=0.23.0 gix-negotiate=0.38.0 gix-note=0.3.1
  gix-object=0.66.1 gix-odb=0.87.0 gix-pack=0.77.0 gix-packetline=0.24.1 gix-parallel=0.50.1
  gix-path=0.14.1 gix-pathspec=0.22.1 gix-prompt=0.19.1 gix-protocol=0.68.0 gix-quote=0.10.1
  gix-ref=0.69.1 gix-refspec=0.47.1 gix-revision=0.52.0 gix-revwalk=0.38.0 gix-sec=0.16.1
  gix-shallow=0.15.1 gix-status=0.37.0 gix-submodule=0.36.1 gix-tempfile=26.0.1 gix-trace=0.3.1
  gix-transport=0.62.0 gix-traverse=0.64.0 gix-url=0.40.1 gix-utils=0.5.2 gix-validate=0.13.1
  gix-worktree=0.59.0 gix-worktree-state=0.37.0 gix-worktree-stream=0.39.0 gix-zlib=0.4.0
  glam=0.33.12 h2=0.4.20 hashbrown=0.17.2 hyper=1.12.0 image=0.25.10 jiff=0.2.46 lexical=7.0.5
  lexical-core=1.0.6 lexical-parse-float=1.0.6 lexical-parse-integer=1.0.6 lexical-util=1.0.7
  lexical-write-float=1.0.6 lexical-write-integer=1.0.6 librocksdb-sys=0.19.0+11.8.1 mio=1.2.5
  naga=30.0.2 nom=8.0.0 object=0.39.1 openssl-src=400.0.2+4.0.3 petgraph=0.6.5 png=0.18.1
  polars-arrow=0.55.2 polars-async=0.55.2 polars-buffer=0.55.2 polars-compute=0.55.2
  polars-config=0.55.2 polars-core=0.55.2 polars-dtype=0.55.2 polars-error=0.55.2
  polars-row=0.55.2 polars-schema=0.55.2 polars-utils=0.55.2 rav1e=0.8.1 regalloc2=0.15.2
  regex-automata=0.4.19 regex-syntax=0.8.12 ron=0.12.3 rustls=0.23.46 serde=1.0.229
  serde_core=1.0.229 sqlparser=0.64.0 syn=3.0.10 tiff=0.11.3 tokio=1.54.1
  toml_edit=0.25.20+spec-1.1.0 tracing-subscriber=0.3.23 wasmparser=0.263.0 wasmtime=48.0.8
  wasmtime-environ=48.0.8 wasmtime-internal-cache=48.0.8
  wasmtime-internal-component-macro=48.0.8 wasmtime-internal-component-util=48.0.8
  wasmtime-internal-core=48.0.8 wasmtime-internal-cranelift=48.0.8
  wasmtime-internal-fiber=48.0.8 wasmtime-internal-jit-debug=48.0.8
  wasmtime-internal-jit-icache-coherence=48.0.8 wasmtime-internal-unwinder=48.0.8
  wasmtime-internal-versioned-export-macros=48.0.8 wasmtime-internal-wit-bindgen=48.0.8
  wast=263.0.0 wgpu-core=30.0.2 wgpu-hal=30.0.2 wgpu-types=30.0.2 winnow=1.0.5
  wit-component=0.254.2 wit-parser=0.254.2 zerocopy=0.8.64 zlib-rs=0.6.8
  zstd-sys=2.1.3+zstd.1.5.7 zune-jpeg=0.5.15)
if ! have rust/tokio; then
  echo "rust: ${#crates[@]} crates (cargo fetch)"
  proj="$dl/cargo/fetch"
  mkdir -p "$proj/src" && touch "$proj/src/lib.rs"
  {
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n'
    for c in "${crates[@]}"; do echo "${c%%=*} = \"=${c#*=}\""; done
  } > "$proj/Cargo.toml"
  (cd "$proj" && cargo fetch --quiet 2>/dev/null)
  for c in "${crates[@]}"; do
    name=${c%%=*} ver=${c#*=}
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$name-$ver" | head -1)
    # the -sys/-src crates vendor C/C++ sources: file them under their language
    case $name in
      openssl-src|bzip2-sys|zstd-sys) dest=c/$name ;;
      librocksdb-sys) dest=cpp/$name ;;
      *) dest=rust/$name ;;
    esac
    rm -rf "${out:?}/$dest" && mkdir -p "$out/$dest" && cp -r "$src"/. "$out/$dest/"
    python3 "$helper" prune "$out/$dest" 2>/dev/null
  done
fi

# ---- Go, Java, C, C++ (Debian packages carrying sources) -------------------------
if ! have go/go-std; then
  d=$(deb_extract golang-1.19-src 1.19.8-2)
  echo "go: go 1.19 standard library and cmd"
  mkdir -p "$out/go/go-std" "$out/go/go-cmd"
  (cd "$d/usr/share/go-1.19/src" && tar cf - --exclude=./cmd --exclude=vendor --exclude=testdata .) | tar xf - -C "$out/go/go-std"
  (cd "$d/usr/share/go-1.19/src/cmd" && tar cf - --exclude=vendor --exclude=testdata .) | tar xf - -C "$out/go/go-cmd"
  done_mark go/go-std; done_mark go/go-cmd
fi
if ! have go/x-tools; then
  d=$(deb_extract golang-golang-x-tools-dev 1:0.5.0+ds-1)
  copy_project go/x-tools "$d/usr/share/gocode/src/golang.org/x/tools"
fi
if ! have go/grpc-go; then
  d=$(deb_extract golang-google-grpc-dev 1.33.3-2)
  copy_project go/grpc-go "$d/usr/share/gocode/src/google.golang.org/grpc"
fi
jdk_modules=(java.base java.desktop java.xml jdk.compiler java.management java.sql java.net.http
  jdk.jshell jdk.javadoc jdk.jfr java.naming java.rmi jdk.hotspot.agent jdk.jdi jdk.jlink
  java.xml.crypto jdk.httpserver java.security.jgss jdk.internal.le)
if ! have java/java.base; then
  d=$(deb_extract openjdk-17-source 17.0.21.1+2-1~deb12u1)
  z=$(find "$d" -name src.zip | head -1)
  echo "java: OpenJDK 17 modules ${jdk_modules[*]}"
  tmp="$dl/deb/jdk-src"; rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$tmp" && python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(".")' "$z")
  for m in "${jdk_modules[@]}"; do
    rm -rf "${out:?}/java/$m" && mkdir -p "$out/java" && mv "$tmp/$m" "$out/java/$m"
    done_mark "java/$m"
  done
  rm -rf "$tmp"
fi
linux_parts=(kernel mm fs net block lib crypto security drivers/net/ethernet/intel)
if ! have c/linux-kernel; then
  d=$(deb_extract linux-source-6.1 6.1.192-2)
  txz=$(ls "$d"/usr/src/linux-source-*.tar.xz | head -1)
  top=$(basename "$txz" .tar.xz)
  echo "c: Linux 6.1 ${linux_parts[*]}"
  tmp="$dl/deb/linux-src"; rm -rf "$tmp" && mkdir -p "$tmp"
  tar xJf "$txz" -C "$tmp" "${linux_parts[@]/#/$top/}"
  for p in "${linux_parts[@]}"; do
    name=linux-${p//\//-}
    rm -rf "${out:?}/c/$name" && mkdir -p "$out/c" && mv "$tmp/$top/$p" "$out/c/$name"
    done_mark "c/$name"
  done
  rm -rf "$tmp"
fi
if ! have cpp/boost; then
  d=$(deb_extract libboost1.81-dev 1.81.0-5+deb12u1)
  copy_project cpp/boost "$d/usr/include/boost"
fi
if ! have cpp/eigen; then
  d=$(deb_extract libeigen3-dev 3.4.0-4)
  copy_project cpp/eigen "$d/usr/include/eigen3"
fi

echo
python3 "$helper" count "$out" | tee "$base/full-counts.md"
python3 "$helper" order "$out" > "$base/growth-order.tsv"
[ -z "$SUBSETS" ] || python3 "$helper" subsets "$out" "$base/growth" $SUBSETS
du -sh "$base"

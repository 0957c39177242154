#!/usr/bin/env bash
# Prepares the third-party sources the browser calculator is built from, once, inside build/:
#
#   build/web-deps/src/imgui        Dear ImGui 1.86, from Debian's source package `imgui`
#                                   (Debian's libimgui-dev has headers and a native library only)
#   build/web-deps/src/sdl2         SDL 2.26.5, from Debian's source package `libsdl2`
#   build/web-deps/sdl2-wasm        that SDL2 built with Debian's Emscripten (emcmake, with the small
#                                   CMakeLists.txt in web/cmake/sdl2-wasm) and installed:
#                                   lib/libSDL2.a + include/SDL2 (about a minute on 2 cores)
#
#   scripts/web-deps.sh [--sources] [--sdl2-wasm]     (no option: both)
#
# Nothing is downloaded from anywhere but Debian's archive, through apt with a private deb-src list
# made from the machine's own /etc/apt/sources.list.d/*.sources (same archives, Types: deb-src) and
# private state/cache folders under build/web-deps/apt: the system's apt configuration is not changed.
# Each step leaves a stamp and is skipped when done; delete build/web-deps to start again.
# Needs: apt-get and dpkg-source (dpkg-dev), and for --sdl2-wasm Debian's emscripten with the
# configuration written by scripts/setup.sh --wasm (build/emscripten/config).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/build/web-deps"
src="$deps/src"

want_sources=0 want_sdl=0
[ $# -eq 0 ] && want_sources=1 want_sdl=1
for arg in "$@"; do
  case "$arg" in
    --sources) want_sources=1 ;;
    --sdl2-wasm) want_sources=1 want_sdl=1 ;;
    -h | --help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "web-deps.sh: unknown option '$arg' (use --sources, --sdl2-wasm)" >&2; exit 2 ;;
  esac
done

say() { echo "web-deps: $*"; }

# ---- sources from Debian's source packages ---------------------------------------------------------
fetch_sources() {
  if [ -f "$src/imgui/imgui.cpp" ] && [ -f "$src/imgui/backends/imgui_impl_sdl.cpp" ] &&
    [ -f "$src/sdl2/CMakeLists.txt" ]; then
    return 0
  fi
  command -v dpkg-source >/dev/null 2>&1 || { echo "web-deps: dpkg-source missing (install dpkg-dev)" >&2; exit 1; }
  local apt="$deps/apt"
  rm -rf "$apt"
  mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/work"
  # deb-src entries for the archives this machine already uses (deb822 .sources and one-line .list files).
  local f n=0
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    if grep -q -E '^Types:.*\bdeb\b' "$f"; then
      sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$apt/parts/src-$n.sources"
      n=$((n + 1))
    fi
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    if grep -q -E '^[[:space:]]*deb[[:space:]]' "$f"; then
      sed -n -E 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$f" >"$apt/parts/src-$n.list"
      n=$((n + 1))
    fi
  done
  if [ $n = 0 ]; then
    echo "web-deps: no apt sources found in /etc/apt to make a deb-src list from" >&2
    exit 1
  fi
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
  # As root, apt drops to the _apt user for downloads, who cannot write into build/: stay root.
  [ "$(id -u)" != 0 ] || opts+=(-o "APT::Sandbox::User=root")
  say "fetching Debian source packages imgui and libsdl2"
  local log="$apt/log"
  if ! apt-get "${opts[@]}" update >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "web-deps: apt-get update (deb-src) failed; full log: $log" >&2
    exit 1
  fi
  if ! (cd "$apt/work" && apt-get "${opts[@]}" source imgui libsdl2) >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "web-deps: apt-get source imgui libsdl2 failed; full log: $log" >&2
    exit 1
  fi
  local im sd
  im=$(find "$apt/work" -maxdepth 1 -type d -name 'imgui-*' | head -n 1)
  sd=$(find "$apt/work" -maxdepth 1 -type d -name 'libsdl2-*' | head -n 1)
  if [ -z "$im" ] || [ -z "$sd" ]; then
    echo "web-deps: unpacked sources not found in $apt/work" >&2
    exit 1
  fi
  mkdir -p "$src"
  rm -rf "$src/imgui" "$src/sdl2"
  mv "$im" "$src/imgui"
  mv "$sd" "$src/sdl2"
  basename "$im" >"$src/imgui.version"
  basename "$sd" >"$src/sdl2.version"
  rm -rf "$apt"
  say "sources ready: $(cat "$src/imgui.version"), $(cat "$src/sdl2.version") in ${src#"$root"/}"
}

# ---- SDL2 built with Emscripten -------------------------------------------------------------------
build_sdl2_wasm() {
  local prefix="$deps/sdl2-wasm" bdir="$deps/sdl2-wasm-build"
  local recipe="$root/web/cmake/sdl2-wasm/CMakeLists.txt"
  local stamp_want
  stamp_want="$(cat "$src/sdl2.version") $(cksum <"$recipe")"
  if [ -f "$prefix/lib/libSDL2.a" ] && [ "$(cat "$prefix/.stamp" 2>/dev/null)" = "$stamp_want" ]; then
    return 0
  fi
  # shellcheck source=../cmake/emscripten-env.sh
  . "$root/cmake/emscripten-env.sh"
  [ -f "$EM_CONFIG" ] || { echo "web-deps: run scripts/setup.sh --wasm first" >&2; exit 1; }
  say "building SDL2 for WebAssembly (once; about a minute on 2 cores)"
  rm -rf "$bdir" "$prefix"
  local log="$deps/sdl2-wasm-build.log"
  if ! { emcmake cmake -S "$(dirname "$recipe")" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSDL2_SOURCE_DIR="$src/sdl2" -DCMAKE_INSTALL_PREFIX="$prefix" &&
    cmake --build "$bdir" -j 2 && cmake --install "$bdir"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "web-deps: SDL2 wasm build failed; full log: $log" >&2
    exit 1
  fi
  echo "$stamp_want" >"$prefix/.stamp"
  rm -rf "$bdir"
  say "SDL2 for wasm installed in ${prefix#"$root"/}"
}

# ---- a copy under the user's cache, shared by clones on this machine ---------------------------------
# What this script makes depends only on Debian's source packages, this script and the SDL2 recipe: a fresh
# clone (CI's, or a second worktree) takes a copy from $XDG_CACHE_HOME/ftcost/web-deps/<key> instead of
# fetching and building again, and saves one after it has. FTCOST_WEB_DEPS_CACHE=0 turns this off.
cache_base="${XDG_CACHE_HOME:-$HOME/.cache}/ftcost/web-deps"
cache_key=$(cat "${BASH_SOURCE[0]}" "$root/web/cmake/sdl2-wasm/CMakeLists.txt" | cksum | cut -d' ' -f1)
cached="$cache_base/$cache_key"
use_cache=1
[ "${FTCOST_WEB_DEPS_CACHE:-1}" != 0 ] && [ -n "${HOME:-}${XDG_CACHE_HOME:-}" ] || use_cache=0

restore() {  # restore PART: copy build/web-deps/PART from the cache when it is missing here
  [ $use_cache = 1 ] && [ -e "$cached/$1" ] && [ ! -e "$deps/$1" ] || return 0
  mkdir -p "$(dirname "$deps/$1")"
  cp -a "$cached/$1" "$deps/$1.tmp.$$" && mv "$deps/$1.tmp.$$" "$deps/$1"
  say "${1} from the cache ($cached)"
}
save() {  # save PART: copy build/web-deps/PART into the cache when it is not there yet (atomically)
  [ $use_cache = 1 ] && [ -e "$deps/$1" ] && [ ! -e "$cached/$1" ] || return 0
  mkdir -p "$(dirname "$cached/$1")" 2>/dev/null || return 0
  rm -rf "$cached/$1.tmp.$$"
  if cp -a "$deps/$1" "$cached/$1.tmp.$$" 2>/dev/null; then
    mv "$cached/$1.tmp.$$" "$cached/$1" 2>/dev/null || rm -rf "$cached/$1.tmp.$$"
  else
    rm -rf "$cached/$1.tmp.$$"
  fi
}

if [ $want_sources = 1 ]; then
  restore src
  fetch_sources
  save src
fi
if [ $want_sdl = 1 ]; then
  restore sdl2-wasm
  build_sdl2_wasm
  save sdl2-wasm
fi
exit 0

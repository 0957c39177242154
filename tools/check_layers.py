#!/usr/bin/env python3
"""The core's layering, checked on the built libraries (ctest core.layers).

core/CMakeLists.txt builds the core as layers, each a static library that links only the layers below it:
base < spec < db < predict < fit < app, and ftcost_dbcheck beside the core, above app. Include paths stop a lower
layer from including a higher layer's header, but not from calling a function that a higher layer defines
and declares in a lower layer's header: that links in a program that links every layer (the CLI, the tests)
and the layering is broken without a compile error. This check reads each library's symbols with `nm` and
fails when a layer needs (an undefined symbol) what no library at or below it defines but a higher one does.

  tools/check_layers.py [--nm NM] base=LIB spec=LIB db=LIB predict=LIB fit=LIB app=LIB [dbcheck=LIB]   (lowest first)

Exit 0: every layer's needs are met at or below it (or outside the core: the C++ library, nlohmann_json);
1: a violation (each named: layer, symbol, the higher layer that defines it); 2: bad arguments or nm failed.
"""
import argparse
import subprocess
import sys

# nm's letters for a symbol an object defines (text, data, read-only data, bss, weak, unique, common).
DEFINED = set("TtDdRrBbWwVvuCiG")


def symbols(nm, lib):
    """(defined, undefined) external symbol names of a static library, mangled (exact)."""
    out = subprocess.run([nm, "-g", "-P", lib], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0].endswith(":") or line.endswith(":"):
            continue  # an archive member's header ("lib.a[obj.o]:")
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in DEFINED:
            defined.add(name)
    return defined, undefined - defined


def demangle(nm_tool, names):
    cxxfilt = nm_tool.replace("nm", "c++filt") if nm_tool.endswith("nm") else "c++filt"
    try:
        out = subprocess.run([cxxfilt], input="\n".join(names), check=True, capture_output=True,
                             text=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(names)


def violations(layers):
    """layers: [(name, defined, undefined)] lowest first -> [(layer, symbol, higher layer)]."""
    found = []
    below = set()
    for i, (name, defined, undefined) in enumerate(layers):
        below |= defined
        for sym in sorted(undefined - below):
            for higher, hdef, _ in layers[i + 1:]:
                if sym in hdef:
                    found.append((name, sym, higher))
                    break
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("layers", nargs="+", help="NAME=LIBRARY, lowest layer first")
    args = ap.parse_args()
    layers = []
    for spec in args.layers:
        name, sep, lib = spec.partition("=")
        if not sep or not name or not lib:
            print(f"check_layers: '{spec}': expected NAME=LIBRARY", file=sys.stderr)
            return 2
        try:
            defined, undefined = symbols(args.nm, lib)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"check_layers: {args.nm} {lib}: {e}", file=sys.stderr)
            return 2
        if not defined:
            print(f"check_layers: {lib} ({name}) defines no symbol: not a library of the core?", file=sys.stderr)
            return 2
        layers.append((name, defined, undefined))
    found = violations(layers)
    order = " < ".join(n for n, _, _ in layers)
    if not found:
        print(f"check_layers: {order}: every layer's needs are met at or below it")
        return 0
    readable = demangle(args.nm, [s for _, s, _ in found])
    print(f"check_layers: {order}: {len(found)} symbol(s) a layer needs from a higher one:")
    for (layer, _, higher), text in zip(found, readable):
        print(f"  {layer} needs {text} (defined in {higher})")
    return 1


if __name__ == "__main__":
    sys.exit(main())

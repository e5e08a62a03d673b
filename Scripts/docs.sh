#!/usr/bin/env bash
# Builds Courier's DocC documentation with the toolchain alone (no package plugin) into
# .build/docs/Courier.doccarchive, a site that can be served as plain files, and fails on any
# documentation problem:
#
# 1. Builds the Courier target in its own scratch directory (.build/docs/build) and extracts the
#    symbol graphs of the Courier module alone, public symbols only, with the toolchain's
#    swift-symbolgraph-extract (what `swift package dump-symbol-graph` does, for one module).
# 2. Fails when a public symbol declared in Courier has no documentation comment, listing each
#    with its file:line. Not listed: members the compiler declares itself (such as an enum's
#    `init(rawValue:)`), members inherited from protocol extensions (`!=`, `hash(into:)`…), and
#    members that implement a protocol requirement, are a default implementation of one or
#    override a superclass member and inherit its documentation: their pages show it (or link to
#    it), so the requirement is what needs the comment, and it is checked itself. A default
#    implementation that inherits nothing though its requirement is documented (one in a
#    constrained extension) is listed: docc would show nothing for it.
# 3. Runs `docc convert` on Sources/Courier/Courier.docc with those symbol graphs and fails on
#    any warning (docc's --warnings-as-errors, and a scan of its output to be sure).
#
# Runs from a clean clone and without a terminal (CI). Tested on Linux; DOCC and
# SYMBOLGRAPH_EXTRACT may name the tools when they are not next to `swift`.
set -euo pipefail
cd "$(dirname "$0")/.."

module=Courier
catalog=Sources/Courier/Courier.docc
out=.build/docs
scratch=$out/build
graphs=$out/symbol-graphs
archive=$out/$module.doccarchive
docc_log=$out/docc.log
python=${PYTHON:-python3}
start=$SECONDS

tool() { # NAME: the toolchain's tool NAME, from $PATH, next to `swift`, or from Xcode
    if command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
    elif [ -x "$(dirname "$(command -v swift)")/$1" ]; then
        echo "$(dirname "$(command -v swift)")/$1"
    elif command -v xcrun >/dev/null 2>&1 && xcrun --find "$1" >/dev/null 2>&1; then
        xcrun --find "$1"
    else
        echo "error: cannot find '$1' in the Swift toolchain" >&2
        exit 1
    fi
}
docc=${DOCC:-$(tool docc)}
extract=${SYMBOLGRAPH_EXTRACT:-$(tool swift-symbolgraph-extract)}

echo "==> Building $module (scratch path $scratch)"
mkdir -p "$out"
swift build --scratch-path "$scratch" --target "$module"
bin=$(swift build --scratch-path "$scratch" --show-bin-path)
modules=$bin/Modules
[ -d "$modules" ] || modules=$bin  # older SwiftPM layouts keep .swiftmodule files in the bin folder

echo "==> Extracting $module's public symbol graphs into $graphs"
rm -rf "$graphs"
mkdir -p "$graphs"
triple=$(swift -print-target-info | "$python" -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
sdk=()
if [ "$(uname -s)" = Darwin ]; then sdk=(-sdk "$(xcrun --show-sdk-path)"); fi
# Courier imports its C targets' modules (CourierCurl): their module maps are in the build folder.
c_modules=()
for map in "$bin"/*.build/module.modulemap; do
    [ -f "$map" ] && c_modules+=(-Xcc "-fmodule-map-file=$map")
done
"$extract" -module-name "$module" -target "$triple" ${sdk[@]+"${sdk[@]}"} ${c_modules[@]+"${c_modules[@]}"} \
    -module-cache-path "$bin/ModuleCache" -I "$modules" \
    -minimum-access-level public -omit-extension-block-symbols -output-dir "$graphs"
if [ ! -f "$graphs/$module.symbols.json" ]; then
    echo "error: no symbol graph was written for $module" >&2
    exit 1
fi

echo "==> Checking that every public symbol of $module has a documentation comment"
comments_ok=true
"$python" - "$graphs" "$module" "$PWD" <<'PY' || comments_ok=false
import glob, json, os, sys
from urllib.parse import unquote, urlparse

graph_dir, module, root = sys.argv[1:4]
symbols, relationships = {}, []
for path in sorted(glob.glob(os.path.join(graph_dir, "*.symbols.json"))):
    with open(path, encoding="utf-8") as file:
        graph = json.load(file)
    if graph["module"]["name"] != module:
        sys.exit(f"error: {path} is the symbol graph of {graph['module']['name']}, not {module}")
    for symbol in graph["symbols"]:
        symbols.setdefault(symbol["identifier"]["precise"], symbol)
    relationships += graph.get("relationships", [])

# A member that implements a protocol requirement, is a default implementation of one or
# overrides a superclass member, and has no comment of its own, inherits the documentation of
# that symbol: the compiler names it as the member's source origin, copies its comment (for a
# Courier requirement), and docc shows it or links to it ("Inherited from ..."). The requirement
# is then what needs the comment, and it is checked in its own right.
origins = {r["source"]: r["sourceOrigin"] for r in relationships if r.get("sourceOrigin")}
# Defaults and overrides the compiler gives no source origin (a default implementation in a
# constrained extension, say) show no documentation at all unless they have their own comment.
implemented = {r["source"]: r for r in relationships
               if r["kind"] in ("defaultImplementationOf", "overrides")}

def text(symbol):
    return "".join(line.get("text", "") for line in symbol.get("docComment", {}).get("lines", [])).strip()

def inherited(identifier, comment):
    """Whether the extractor copied this comment from the symbol's source origin."""
    if identifier not in origins:
        return False
    if comment.get("module", module) != module:
        return True
    origin = symbols.get(origins[identifier]["identifier"], {})
    return origin.get("docComment", {}).get("lines") == comment.get("lines")

missing, counts = [], {"documented": 0, "inheriting": 0, "synthesized": 0}
for identifier, symbol in symbols.items():
    if symbol.get("accessLevel") not in ("public", "open"):
        continue
    location = symbol.get("location")
    if "::SYNTHESIZED::" in identifier or not location:
        # Inherited from a protocol extension (checked where it is declared), or declared by the
        # compiler (an enum's init(rawValue:), a synthesized hashValue): nowhere to comment.
        counts["synthesized"] += 1
        continue
    comment = symbol.get("docComment", {})
    lines = comment.get("lines", [])
    requirement = symbols.get(implemented.get(identifier, {}).get("target"))
    if identifier in origins and (not text(symbol) or inherited(identifier, comment)):
        counts["inheriting"] += 1
    elif text(symbol):
        counts["documented"] += 1
    elif requirement is not None and not text(requirement):
        # A default implementation of an undocumented Courier requirement: the requirement is
        # listed, and its comment is what this one would show. No second comment is asked for.
        counts["inheriting"] += 1
    else:
        path = os.path.relpath(unquote(urlparse(location["uri"]).path), root)
        line = location["position"]["line"] + 1  # symbol graph positions count from 0
        kind = symbol["kind"]["displayName"].lower()
        name = ".".join(symbol["pathComponents"])
        message = f"public {kind} {name} has {'an empty' if lines else 'no'} documentation comment"
        if identifier in implemented:
            r = implemented[identifier]
            target = ".".join(symbols.get(r["target"], {}).get("pathComponents", [r["target"]]))
            role = "default implementation" if r["kind"] == "defaultImplementationOf" else "override"
            message += f"; as a {role} of {target} it inherits none either (docc would show none)"
        missing.append((path, line, message))

for path, line, message in sorted(missing):
    print(f"{path}:{line}: error: {message}")
print(f"{len(symbols)} public symbols: {counts['documented']} with a documentation comment, "
      f"{counts['inheriting']} inheriting that of the requirement they implement or override, "
      f"{counts['synthesized']} synthesized or inherited, {len(missing)} undocumented.")
sys.exit(1 if missing else 0)
PY

echo "==> docc convert $catalog"
options=(--ide-console-output)
help=$("$docc" convert --help 2>&1 || true)
case $help in *--warnings-as-errors*) options+=(--warnings-as-errors) ;; esac
case $help in *--transform-for-static-hosting*) options+=(--transform-for-static-hosting) ;; esac
rm -rf "$archive"
docc_ok=true
"$docc" convert "$catalog" --additional-symbol-graph-dir "$graphs" --output-path "$archive" \
    --fallback-display-name "$module" --fallback-bundle-identifier "$module" \
    "${options[@]}" >"$docc_log" 2>&1 || docc_ok=false
# Paths relative to the checkout, so they read as file:line: messages.
sed "s|$PWD/||g" "$docc_log"
if grep -qiE '(warning|error):' "$docc_log"; then docc_ok=false; fi

seconds=$((SECONDS - start))
if ! $comments_ok || ! $docc_ok; then
    $comments_ok || echo "Documentation check failed: public symbols without a documentation comment (listed above)." >&2
    $docc_ok || echo "Documentation check failed: docc reported warnings or errors (listed above; full log in $docc_log)." >&2
    exit 1
fi
echo "==> Documentation built in ${seconds}s: $archive"
echo "    Serve it and open the module's page:"
echo "      python3 -m http.server --bind 127.0.0.1 --directory $archive 8000"
echo "      http://127.0.0.1:8000/documentation/courier/"

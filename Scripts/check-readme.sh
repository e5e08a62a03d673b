#!/usr/bin/env bash
# Builds README.md's Swift samples as a user would, and runs its quick start against httpbin.
#
# The samples become a package of their own in .build/readme-check/MyApp, next to a link named
# Courier to this repository: the sample that starts with `// swift-tools-version` is its
# Package.swift as written (it depends on `../Courier`); the next one is its main.swift; any
# further ones are more source files. The program then runs with `https://httpbin.org` replaced
# by the local httpbin (COURIER_HTTPBIN_URL, which Scripts/test.sh starts), and must exit with
# status 0 within 60 s and print every text that a `// prints: TEXT` comment of the samples names.
# Usage: Scripts/check-readme.sh (COURIER_HTTPBIN_URL set; Scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${COURIER_HTTPBIN_URL:?needs the local httpbin that Scripts/test.sh starts}"

work=.build/readme-check
rm -rf "$work/MyApp"
mkdir -p "$work/MyApp/Sources/MyApp"
ln -sfn "$PWD" "$work/Courier"

python3 - "$work/MyApp" "$COURIER_HTTPBIN_URL" <<'PYTHON'
import pathlib, re, sys
package, httpbin = pathlib.Path(sys.argv[1]), sys.argv[2]
blocks = re.findall(r"^```swift\n(.*?)^```", pathlib.Path("README.md").read_text(), re.S | re.M)
manifests = [b for b in blocks if b.startswith("// swift-tools-version")]
sources = [b for b in blocks if not b.startswith("// swift-tools-version")]
if len(manifests) != 1 or not sources:
    sys.exit(f"README.md: expected one Package.swift sample and at least one source sample, found {len(manifests)} and {len(sources)}")
(package / "Package.swift").write_text(manifests[0])
for index, source in enumerate(sources):
    name = "main.swift" if index == 0 else f"Sample{index}.swift"
    (package / "Sources" / "MyApp" / name).write_text(source.replace("https://httpbin.org", httpbin))
expected = [m.strip() for b in sources for m in re.findall(r"// prints: (.*)$", b, re.M)]
(package / "expected-output.txt").write_text("".join(line + "\n" for line in expected))
print(f"README.md: {len(blocks)} Swift samples, {len(expected)} printed lines to check")
PYTHON

echo "==> swift build (the README's Package.swift and samples)"
if ! swift build --package-path "$work/MyApp" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    echo "README.md: the samples do not build as written (package in $work/MyApp)" >&2
    exit 1
fi
if grep -E "MyApp/.*warning:" "$work/build.log"; then
    echo "README.md: the samples build with warnings" >&2
    exit 1
fi
binary=$(swift build --package-path "$work/MyApp" --show-bin-path)/MyApp
echo "==> the quick start against $COURIER_HTTPBIN_URL"
status=0
timeout 60 "$binary" >"$work/output.txt" 2>&1 || status=$?
cat "$work/output.txt"
if [ "$status" != 0 ]; then
    echo "README.md: the quick start exited with status $status" >&2
    exit 1
fi
missing=0
while IFS= read -r line; do
    if ! grep -qF -- "$line" "$work/output.txt"; then
        echo "README.md: the quick start did not print \"$line\"" >&2
        missing=1
    fi
done <"$work/MyApp/expected-output.txt"
[ "$missing" = 0 ] || exit 1
echo "README.md: the samples build, and the quick start ran and printed what its comments say"

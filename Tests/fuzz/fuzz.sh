#!/usr/bin/env bash
# Fuzzes the importers' readers with libFuzzer: ./fuzz.sh TARGET [SECONDS]
# TARGET is chatgpt, claude, jsonl, zip or date. Builds Tests/fuzz/.build/fuzz-TARGET from
# the reader sources (ScrollbackModel and the reader files of ScrollbackImport compiled as one
# module), runs it for SECONDS (default 60) on a corpus in Tests/fuzz/.build/corpus-TARGET
# seeded from Tests/fuzz/seeds/TARGET and Tests/fuzz/regressions/TARGET, and copies any
# crash input into Tests/fuzz/regressions/TARGET, which `swift test` replays
# (FuzzRegressionTests).
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: fuzz.sh chatgpt|claude|jsonl|zip|date [SECONDS]}
seconds=${2:-60}
root=../..
build=.build
mkdir -p "$build/src-$target" "$build/corpus-$target" "regressions/$target"
export PATH=/opt/swift/usr/bin:$PATH

# One module: drop the imports of our own modules.
rm -f "$build/src-$target"/*.swift
for file in $root/Sources/ScrollbackModel/*.swift \
    $root/Sources/ScrollbackImport/{FileReader,JSONScanner,ChatGPTExport,ClaudeExport,JSONValues,JSONArrayReader,ZipArchive,ImportError,ScrollbackRecord+Import,JSONLines}.swift \
    $root/Sources/ScrollbackExport/ScrollbackRecord.swift; do
    sed -e '/^import ScrollbackModel$/d' -e '/^import ScrollbackStorage$/d' -e '/^import ScrollbackExport$/d' "$file" > "$build/src-$target/$(basename "$file")"
done
define=$(echo "FUZZ_$target" | tr '[:lower:]' '[:upper:]')
swiftc -sanitize=fuzzer,address -parse-as-library -O -D "$define" -module-name FuzzReaders -package-name scrollback \
    -I $root/Sources/CZlib -lz Harness.swift "$build/src-$target"/*.swift -o "$build/fuzz-$target" 2>&1 \
    | grep -v "Cannot export local symbol" || true

[ -d "seeds/$target" ] && cp -n seeds/"$target"/* "$build/corpus-$target/" 2>/dev/null || true
cp -n regressions/"$target"/* "$build/corpus-$target/" 2>/dev/null || true
rm -rf "$build/crashes-$target"
mkdir -p "$build/crashes-$target"
status=0
SWIFT_BACKTRACE=enable=no "$build/fuzz-$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/crashes-$target/" "$build/corpus-$target" 2>&1 | tail -n 20 || status=$?
for crash in "$build/crashes-$target"/*; do
    [ -e "$crash" ] || continue
    cp "$crash" "regressions/$target/$(basename "$crash")"
    echo "fuzz.sh: kept $crash as regressions/$target/$(basename "$crash")"
done
exit $status

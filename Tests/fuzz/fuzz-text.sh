#!/usr/bin/env bash
# libFuzzer on the page-token decoder and on the sanitizer + layout (display width,
# truncation, wrapping, terminal-safe JSON). Each harness is compiled with its module's
# sources, AddressSanitizer on, seeded from Tests/fuzz/seeds/NAME. Findings land in
# Tests/fuzz/findings/; keep each terminal-text one in Tests/TerminalTextTests/FuzzFindings
# (FuzzRegressionTests there replays them). The importers' readers: Tests/fuzz/fuzz.sh.
#   Tests/fuzz/fuzz-text.sh [RUNS]     (default 1,000,000 runs each)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH" SWIFT_BACKTRACE=enable=no
runs=${1:-1000000}
out=.build/fuzz
mkdir -p "$out" Tests/fuzz/findings
build() { # name, harness, sources...
  local name=$1 harness=$2; shift 2
  swiftc -sanitize=fuzzer,address -parse-as-library -O -package-name scrollback -module-name "Fuzz_${name//-/_}" "$@" "$harness" -o "$out/$name" 2> "$out/$name.build.log" || { cat "$out/$name.build.log"; exit 1; }
}
build cursor Tests/fuzz/cursor.swift Sources/ScrollbackModel/*.swift
build terminal-text Tests/fuzz/terminal-text.swift Sources/TerminalText/*.swift
for name in cursor terminal-text; do
  corpus="$out/corpus-$name"
  mkdir -p "$corpus"
  cp Tests/fuzz/seeds/"$name"/* "$corpus/" 2>/dev/null || true
  echo "== $name: $runs runs"
  "$out/$name" -runs="$runs" -max_len=4096 -artifact_prefix="Tests/fuzz/findings/$name-" "$corpus" 2>&1 | grep -E '^#[0-9]+ *DONE|ERROR|SUMMARY|Done' || true
done

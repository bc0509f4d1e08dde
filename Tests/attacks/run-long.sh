#!/usr/bin/env bash
# The long mode of the attack suite (run before resolving hardening work; figures go in the
# README's Reliability section): 600 damaged databases x every command, 200 kill -9 rounds of
# each write (import, batch delete, rename, demo), the concurrency run, then the whole test
# suite under AddressSanitizer and ThreadSanitizer.
#   Tests/attacks/run-long.sh            everything (about an hour on 2 cores)
#   Tests/attacks/run-long.sh attacks    only the damaged-database and kill -9 runs
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH" TZ=UTC LANG=C.UTF-8
files=${SCROLLBACK_ATTACK_FILES:-600}
kills=${SCROLLBACK_ATTACK_KILLS:-200}

echo "== damaged databases ($files files), kill -9 ($kills rounds of each write), concurrency"
SCROLLBACK_ATTACK_FILES=$files SCROLLBACK_ATTACK_KILLS=$kills \
  swift test --filter 'AttackSuiteTests|ConcurrencyAttackTests' 2>&1 | grep -E 'attacks:|✘|Test run'

[ "${1:-all}" = attacks ] && exit 0

echo "== the whole suite under AddressSanitizer (and LeakSanitizer, minus Tests/attacks/lsan.supp)"
LSAN_OPTIONS="suppressions=$PWD/Tests/attacks/lsan.supp" swift test --sanitize=address --scratch-path .build/asan 2>&1 | grep -E '✘|Test run|ERROR: (Address|Leak)Sanitizer' | tail -20
echo "== the whole suite under ThreadSanitizer"
swift test --sanitize=thread --scratch-path .build/tsan 2>&1 | grep -E '✘|Test run|WARNING: ThreadSanitizer' | tail -20

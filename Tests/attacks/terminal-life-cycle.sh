#!/usr/bin/env bash
# The browser's terminal life cycle, as a hostile tester drives it: every terminating signal
# in every screen, Ctrl-Z and SIGTSTP with `fg` in every screen (from a job-control shell),
# a closed window, and the cost of pastes of growing size, bracketed and not.
#
# After each way out it checks what the program left: the alternate screen off, the cursor
# shown, mouse tracking off (tmux's #{alternate_on} #{cursor_flag} #{mouse_any_flag}), the
# line settings sane (stty), the exit status 128 + the signal's number, nothing deleted.
#
#   Tests/attacks/terminal-life-cycle.sh [path/to/scrollback]
#
# `swift test` keeps a sample of this (Tests/ScrollbackEndToEndTests/TerminalLifeCycleTests.swift);
# this is the whole matrix, a few minutes long. It prints one line per case and a summary,
# and exits 1 if any case failed.
set -uo pipefail

binary=${1:-"$(cd "$(dirname "$0")/../.." && pwd)/.build/debug/scrollback"}
[ -x "$binary" ] || { echo "no binary at $binary: build first (swift build)" >&2; exit 2; }
work=$(mktemp -d /tmp/scrollback-attacks.XXXXXX)
trap 'rm -rf "$work"' EXIT
socket="attacks-$$"
t() { tmux -L "$socket" "$@"; }
failures=0
cases=0

"$binary" demo --db "$work/db.sqlite" --count 40 --seed 3 >/dev/null 2>&1 || { echo "cannot make the demo database" >&2; exit 2; }
conversations() { "$binary" stats --db "$work/db.sqlite" --json | sed -n 's/.*"conversations" *: *\([0-9]*\).*/\1/p'; }
total=$(conversations)

# wait_for TEXT [SECONDS]: until the pane shows TEXT.
wait_for() {
  local deadline=$((SECONDS + ${2:-20}))
  while [ $SECONDS -lt $deadline ]; do
    t capture-pane -p -t main 2>/dev/null | grep -qF -- "$1" && return 0
    sleep 0.05
  done
  return 1
}

# The program's pid: the `scrollback` process under the pane.
program_pid() {
  local queue pid next
  queue=$(t display-message -p -t main '#{pane_pid}')
  while [ -n "$queue" ]; do
    next=""
    for pid in $queue; do
      [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = scrollback ] && { echo "$pid"; return; }
      next="$next $(cat /proc/"$pid"/task/"$pid"/children 2>/dev/null)"
    done
    queue=$(echo $next)
  done
}

# start [job]: the browser in a fresh tmux server, run by `sh -c` or, with "job", typed
# into an interactive bash (job control). After it ends, the wrapper records its status,
# stty and tmux's modes.
start() {
  rm -f "$work/status" "$work/stty" "$work/modes"
  local after="echo \$? > $work/status; stty -a > $work/stty 2>&1; tmux -L $socket display-message -p -t main '#{alternate_on} #{cursor_flag} #{mouse_any_flag}' > $work/modes"
  local command="env -i TERM=xterm-256color LANG=C.UTF-8 TZ=UTC $binary --db $work/db.sqlite; $after"
  if [ "${1:-}" = job ]; then
    t -f /dev/null new-session -d -s main -x 100 -y 24 "env -i TERM=xterm-256color LANG=C.UTF-8 PS1='$ ' PATH=/usr/bin:/bin bash --norc --noprofile -i"
    t set-option -t main remain-on-exit on
    wait_for '$' 5
    t send-keys -t main -l "($command)"
    t send-keys -t main Enter
  else
    t -f /dev/null new-session -d -s main -x 100 -y 24 "$command"
    t set-option -t main remain-on-exit on
  fi
  wait_for " of $total" || wait_for " of " 5
}

stop_server() { t kill-server 2>/dev/null; sleep 0.1; }

# open SCREEN: list, reader, editor, question, search (the prompt), results, help.
open_screen() {
  case $1 in
    reader) t send-keys -t main Enter; wait_for "message 1 of" ;;
    editor) t send-keys -t main r; wait_for "Rename:" ;;
    question) t send-keys -t main d; wait_for "(y/n)" ;;
    search) t send-keys -t main /; sleep 0.2 ;;
    results) t send-keys -t main /; sleep 0.1; t send-keys -t main -l the; t send-keys -t main Enter; wait_for 'search “the”' ;;
    help) t send-keys -t main '?'; wait_for "key closes" ;;
    *) true ;;
  esac
}

# verdict NAME EXPECTED-STATUS: checks what the program left behind.
verdict() {
  local name=$1 expected=$2 deadline=$((SECONDS + 20)) problems=""
  while [ $SECONDS -lt $deadline ] && [ ! -s "$work/modes" ]; do sleep 0.05; done
  local status modes
  status=$(cat "$work/status" 2>/dev/null)
  modes=$(cat "$work/modes" 2>/dev/null)
  [ "$status" = "$expected" ] || problems="$problems status=$status(want $expected)"
  [ "$modes" = "0 1 0" ] || problems="$problems modes=[$modes](want 0 1 0)"
  for flag in icanon echo isig icrnl opost onlcr; do
    grep -qw -- "$flag" "$work/stty" 2>/dev/null && ! grep -qw -- "-$flag" "$work/stty" || problems="$problems stty:$flag"
  done
  t capture-pane -p -t main 2>/dev/null | grep -q "Press space to interact\|Crash" && problems="$problems crash-report"
  [ "$(conversations)" = "$total" ] || problems="$problems deleted-something"
  report "$name" "$problems"
}

report() {
  cases=$((cases + 1))
  if [ -z "$2" ]; then
    printf 'ok    %s\n' "$1"
  else
    failures=$((failures + 1))
    printf 'FAIL  %s:%s\n' "$1" "$2"
  fi
}

screens="list reader editor question search results help"

echo "== terminating signals × screens"
for signal in TERM INT HUP QUIT PIPE USR1 USR2 ALRM VTALRM PROF RTMIN; do
  number=$(kill -l "$signal")
  for screen in $screens; do
    start
    open_screen "$screen"
    kill -s "$signal" "$(program_pid)"
    verdict "SIG$signal in $screen" $((128 + number))
    stop_server
  done
done

echo "== Ctrl-Z and SIGTSTP, then fg, in every screen (job control)"
for how in ctrl-z sigtstp; do
  for screen in $screens; do
    start job
    open_screen "$screen"
    before=$(t capture-pane -p -t main | tail -1)
    pid=$(program_pid)
    if [ $how = ctrl-z ]; then t send-keys -t main C-z; else kill -TSTP "$pid"; fi
    problems=""
    wait_for "Stopped" 10 || problems="$problems not-stopped"
    modes=$(t display-message -p -t main '#{alternate_on} #{cursor_flag} #{mouse_any_flag}')
    [ "$modes" = "0 1 0" ] || problems="$problems modes-while-stopped=[$modes]"
    t send-keys -t main C-l; t send-keys -t main -l fg; t send-keys -t main Enter
    wait_for "$before" 10 || problems="$problems not-redrawn-as-before"
    # And SIGCONT alone (kill -CONT from elsewhere) changes nothing.
    kill -CONT "$pid"
    sleep 0.2
    t capture-pane -p -t main | grep -qF -- "$before" || problems="$problems lost-after-CONT"
    report "$how then fg in $screen" "$problems"
    stop_server
  done
done

echo "== closing the window"
for screen in $screens; do
  start
  open_screen "$screen"
  pid=$(program_pid)
  t kill-pane -t main
  problems=""
  for _ in $(seq 1 200); do [ -d /proc/"$pid" ] && grep -qv ') Z' /proc/"$pid"/stat 2>/dev/null || break; sleep 0.05; done
  [ -d /proc/"$pid" ] && grep -qv ') Z' /proc/"$pid"/stat 2>/dev/null && problems=" still-running"
  report "closed window in $screen" "$problems"
  stop_server
done

echo "== pastes into the rename editor (seconds until the editor shows what follows the paste)"
printf '%-10s %-12s %-12s\n' size bracketed "as typed"
for size in 2000 10000 40000 100000; do
  head -c "$size" < <(yes 'abcdefghi ' | tr -d '\n') > "$work/paste"
  line="$(printf '%-10s' "$size")"
  for mode in -p ""; do
    start
    open_screen editor
    t send-keys -t main C-u
    t load-buffer -b p "$work/paste"
    began=$(date +%s.%N)
    t paste-buffer -d -b p $mode -t main
    t send-keys -t main C-u; t send-keys -t main -l END
    if wait_for "Rename: END" 120; then
      line="$line $(printf '%-12s' "$(echo "$(date +%s.%N) - $began" | bc | sed 's/^\./0./')")"
    else
      line="$line $(printf '%-12s' "timeout")"; failures=$((failures + 1))
    fi
    cases=$((cases + 1))
    t send-keys -t main Escape; sleep 0.1; t send-keys -t main q
    verdict "after a $size-byte paste ($([ -n "$mode" ] && echo bracketed || echo typed))" 0 >/dev/null
    stop_server
  done
  echo "$line"
done

echo "== $cases cases, $failures failed"
[ $failures -eq 0 ]

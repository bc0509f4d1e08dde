#!/usr/bin/env bash
# How the llm log databases beside this script were made: real `llm` releases from PyPI
# with the `llm-echo` plugin (a model that answers with its own input, needing no network).
# Run it to make them anew (the times in them will change; the tests do not depend on times).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
python3 -m venv "$work/old" && "$work/old/bin/pip" install -q "llm==0.31.1" "llm-echo==0.4" httpx
python3 -m venv "$work/new" && "$work/new/bin/pip" install -q "llm==0.36" "llm-echo==0.5"

export LLM_USER_PATH="$work/logs-old"; mkdir -p "$LLM_USER_PATH"
"$work/old/bin/llm" -m echo "What is the capital of France?" >/dev/null
"$work/old/bin/llm" -m echo -c "And of Japan? 東京?" >/dev/null
"$work/old/bin/llm" -m echo -s "You are terse." "Say hi" >/dev/null
cp "$LLM_USER_PATH/logs.db" "$here/llm-0.31.1.db"

export LLM_USER_PATH="$work/logs-new"; mkdir -p "$LLM_USER_PATH"
"$work/new/bin/llm" -m echo "Name three rivers." >/dev/null
"$work/new/bin/llm" -m echo -c "Which is longest? 長江?" >/dev/null
"$work/new/bin/llm" -m echo -s "You are a poet." "Write a line about rain" >/dev/null
cp "$LLM_USER_PATH/logs.db" "$here/llm-0.36.db"

export LLM_USER_PATH="$work/logs-upgraded"; mkdir -p "$LLM_USER_PATH"
cp "$here/llm-0.31.1.db" "$LLM_USER_PATH/logs.db"
"$work/new/bin/llm" -m echo "A new question after upgrading" >/dev/null
cp "$LLM_USER_PATH/logs.db" "$here/llm-0.31.1-upgraded-by-0.36.db"
# A legacy conversation continued by a newer llm: it becomes a thread of the same id, its
# earlier messages copied under new ids.
export LLM_USER_PATH="$work/logs-continued"; mkdir -p "$LLM_USER_PATH"
cp "$here/llm-0.31.1.db" "$LLM_USER_PATH/logs.db"
"$work/new/bin/llm" -m echo -c "Continue the legacy one" >/dev/null
cp "$LLM_USER_PATH/logs.db" "$here/llm-0.31.1-continued-by-0.36.db"
# Branches: llm 0.36 keeps one tree of messages (by hash and parent_hash) that threads point
# into. A fork is a thread started at an earlier message of another (forked_from), made by
# fork.py through llm's Python API; `llm --cid` then continues it like any thread.
export LLM_USER_PATH="$work/logs-forks"; mkdir -p "$LLM_USER_PATH"
new="$work/new/bin/llm"; db="$LLM_USER_PATH/logs.db"
"$new" -m echo "Plan a trip to Kyoto." >/dev/null
"$new" -m echo -c "What about food? 抹茶?" >/dev/null
root=$(sqlite3 "$db" "SELECT id FROM threads ORDER BY id DESC LIMIT 1")
# From the first answer: a second question instead of the food one, then a follow-up.
train=$("$work/new/bin/python" "$here/fork.py" "$db" "$root" 1 "Kyoto, by train" "What about trains instead?")
"$new" -m echo --cid "$train" "And the fare? ¥?" >/dev/null
# A fork of the fork, from its answer about trains.
"$work/new/bin/python" "$here/fork.py" "$db" "$train" 3 "Kyoto, by Shinkansen" "Is the Shinkansen faster?" >/dev/null
# The first thread is the one used last.
"$new" -m echo --cid "$root" "Any day trips? Nara?" >/dev/null
# A new thread that starts with the same question shares its first two messages (they are
# the same hashes), but is no fork; and one thread on its own.
"$new" -m echo "Plan a trip to Kyoto." >/dev/null
"$new" -m echo "How do tides work?" >/dev/null
cp "$db" "$here/llm-0.36-forks.db"
rm -rf "$work"

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
rm -rf "$work"

# fish completion for scrollback (made by `scrollback completions fish`)
# The command and the words after it, and the database, as typed so far; an
# option's value is neither.
function __scrollback_typed
    set -l tokens (commandline -opc)
    set -l found
    set -l skip 0
    set -l db
    for token in $tokens[2..-1]
        if test $skip -eq 2
            set db $token
            set skip 0
            continue
        else if test $skip -eq 1
            set skip 0
            continue
        end
        switch $token
            case --db
                set skip 2
            case '--db=*'
                set db (string replace -- --db= '' $token)
            case --sort --limit -n --after --before --source --model --project --since --until --title --format --unzip-limit --out --out-dir --attachments-dir --at --from --count --seed --words
                set skip 1
            case '-*'
            case '*'
                set -a found $token
        end
    end
    if test "$argv[1]" = --db
        string replace -r '^~/' "$HOME/" -- $db
    else
        string join ' ' -- $found
    end
end
# True when the words typed after `scrollback` are exactly these.
function __scrollback_at
    test "$(__scrollback_typed)" = "$argv"
end
# True when the command typed is this one.
function __scrollback_in
    set -l typed (string split ' ' -- (__scrollback_typed))
    test "$typed[1]" = "$argv[1]"
end
function __scrollback_words
    set -l program (commandline -opc)[1]
    set -l db (__scrollback_typed --db)
    if test -n "$db"
        $program --db $db completions --words $argv[1] 2>/dev/null
    else
        $program completions --words $argv[1] 2>/dev/null
    end
end
complete -c scrollback -f
complete -c scrollback -n __scrollback_at -a list -d 'List conversations, one page at a time'
complete -c scrollback -n __scrollback_at -a show -d 'Print one conversation with its messages (its current branch)'
complete -c scrollback -n __scrollback_at -a search -d 'Search titles and messages; every word must occur'
complete -c scrollback -n __scrollback_at -a rename -d 'Give a conversation a new title'
complete -c scrollback -n __scrollback_at -a pin -d 'Pin conversations: they come first in every order'
complete -c scrollback -n __scrollback_at -a unpin -d 'Unpin conversations'
complete -c scrollback -n __scrollback_at -a delete -d 'Delete conversations with their messages: those named, or every one from a source'
complete -c scrollback -n __scrollback_at -a import -d 'Import ChatGPT or Claude exports (the ZIP, its folder or its conversations.json), Claude Code sessions, llm\'s logs.db, or scrollback\'s JSON or JSON Lines; with no PATH, the places scrollback knows'
complete -c scrollback -n __scrollback_at -a export -d 'Write conversations as Markdown, JSON or JSON Lines; JSON Lines carries the attachments\' bytes (Markdown with --out writes them in FILE.files beside it)'
complete -c scrollback -n __scrollback_at -a attachment -d 'The files of conversations (photos, generated images, recordings, documents): list them, write one out'
complete -c scrollback -n __scrollback_at -a stats -d 'Counts, size, schema version, oldest and newest; per model, conversations, messages and tokens; --chart draws the activity'
complete -c scrollback -n __scrollback_at -a mcp -d 'Serve the history to AI agents over the Model Context Protocol, on standard input and output: search, list, read, stats; read-only unless --allow-writes'
complete -c scrollback -n __scrollback_at -a backup -d 'Write a checked copy of the database to PATH while others may write it; never over a file without --force'
complete -c scrollback -n __scrollback_at -a restore -d 'Replace the database with the backup at PATH, checked first (the current one is kept beside it under a dated name); or, with --at, rebuild the history as it was then into a new file'
complete -c scrollback -n __scrollback_at -a check -d 'Check integrity, foreign keys and search indexes; non-zero exit on problems'
complete -c scrollback -n __scrollback_at -a demo -d 'Fill the database with generated conversations (source \'demo\')'
complete -c scrollback -n __scrollback_at -a sync -d 'Sync with your other machines through a PostgreSQL server, end-to-end encrypted: init, status, snapshot, key show, key import, off; alone, sync now'
complete -c scrollback -n __scrollback_at -a config -d 'The browser\'s config file: its path, its problems, or the whole default file'
complete -c scrollback -n __scrollback_at -a completions -d 'Print the shell completion script for bash, zsh or fish'
complete -c scrollback -n 'true' -l db -r -F -d 'the database (default: $SCROLLBACK_DB, else $XDG_DATA_HOME/scrollback/history.sqlite)'
complete -c scrollback -n 'true' -l readonly -d 'never write: commands that change data fail, nothing is created'
complete -c scrollback -n 'true' -l demo -d 'use the demo database, made on first use (see `scrollback demo`)'
complete -c scrollback -n 'true' -l verbose -d 'say more when something fails (SQLite\'s own words and the SQL)'
complete -c scrollback -n 'true' -l help -s h -d 'show help'
complete -c scrollback -n '__scrollback_in list' -l sort -x -a 'updated created title' -d 'the order (default: the browser\'s last choice, else updated)'
complete -c scrollback -n '__scrollback_in list' -l limit -s n -x -d 'at most N rows (default 50, at most 10000)'
complete -c scrollback -n '__scrollback_in list' -l after -x -d 'the page after TOKEN (printed with each page)'
complete -c scrollback -n '__scrollback_in list' -l before -x -d 'the page before TOKEN'
complete -c scrollback -n '__scrollback_in list' -l last -d 'the last page'
complete -c scrollback -n '__scrollback_in list' -l source -x -a '(__scrollback_words source)' -d 'only those imported from NAME: chatgpt, claude, llm, jsonl, demo…'
complete -c scrollback -n '__scrollback_in list' -l model -x -a '(__scrollback_words model)' -d 'only those whose model contains NAME (any case)'
complete -c scrollback -n '__scrollback_in list' -l project -x -d 'only coding-agent sessions whose working folder contains FOLDER (any case)'
complete -c scrollback -n '__scrollback_in list' -l since -x -d 'only those updated since DATE: 2025-01-31, 2025-01, 2025, or 7d, 2w, 3m, 1y ago (UTC)'
complete -c scrollback -n '__scrollback_in list' -l until -x -d 'only those updated before the end of DATE (same forms)'
complete -c scrollback -n '__scrollback_in list' -l pinned -d 'only pinned conversations'
complete -c scrollback -n '__scrollback_in list' -l title -x -d 'only those whose title holds every word of WORDS, as search finds words'
complete -c scrollback -n '__scrollback_in list' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in show' -l all-branches -d 'every branch: each message under the one it follows, indented two spaces a level (deeper than 6 levels, it says \'depth N\'); \'*\' marks the current branch, \'‹2/3›\' a message\'s place among its siblings; with --json, each message\'s parentID'
complete -c scrollback -n '__scrollback_in show' -l hidden -d 'the hidden messages too (tool traffic, reasoning, context), each marked with its kind'
complete -c scrollback -n '__scrollback_in show' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in search' -l limit -s n -x -d 'at most N rows (default 50, at most 10000)'
complete -c scrollback -n '__scrollback_in search' -l after -x -d 'the page after TOKEN'
complete -c scrollback -n '__scrollback_in search' -l hidden -d 'find in the hidden messages too (tool traffic, reasoning, context)'
complete -c scrollback -n '__scrollback_in search' -l source -x -a '(__scrollback_words source)' -d 'only those imported from NAME: chatgpt, claude, llm, jsonl, demo…'
complete -c scrollback -n '__scrollback_in search' -l model -x -a '(__scrollback_words model)' -d 'only those whose model contains NAME (any case)'
complete -c scrollback -n '__scrollback_in search' -l project -x -d 'only coding-agent sessions whose working folder contains FOLDER (any case)'
complete -c scrollback -n '__scrollback_in search' -l since -x -d 'only those updated since DATE: 2025-01-31, 2025-01, 2025, or 7d, 2w, 3m, 1y ago (UTC)'
complete -c scrollback -n '__scrollback_in search' -l until -x -d 'only those updated before the end of DATE (same forms)'
complete -c scrollback -n '__scrollback_in search' -l pinned -d 'only pinned conversations'
complete -c scrollback -n '__scrollback_in search' -l title -x -d 'only those whose title holds every word of WORDS, as search finds words'
complete -c scrollback -n '__scrollback_in search' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in delete' -l yes -s y -d 'do not ask (required when input is not a terminal)'
complete -c scrollback -n '__scrollback_in delete' -l source -x -a '(__scrollback_words source)' -d 'every conversation imported from NAME (delete --source demo --yes removes the demo\'s)'
complete -c scrollback -n '__scrollback_in import' -l format -x -a 'chatgpt claude llm jsonl claude-code codex gemini' -d 'the format (default: found from the content): chatgpt and claude read a ZIP, a folder or a JSON file; llm an llm logs.db (SQLite); jsonl scrollback\'s own JSON or JSON Lines export; claude-code a session file (.jsonl) or a folder of them'
complete -c scrollback -n '__scrollback_in import' -l yes -s y -d 'with no PATH: import the places found without asking (required when input is not a terminal)'
complete -c scrollback -n '__scrollback_in import' -l quiet -s q -d 'no progress on standard error'
complete -c scrollback -n '__scrollback_in import' -l restore -d 'bring back conversations of these files that were deleted (else they stay deleted, here and on synced machines)'
complete -c scrollback -n '__scrollback_in import' -l unzip-limit -x -d 'let a ZIP entry inflate to SIZE (e.g. 8G) whatever its ratio (default: 200× its packed size, 4 GiB at most)'
complete -c scrollback -n '__scrollback_in import' -F
complete -c scrollback -n '__scrollback_in export' -l format -x -a 'md json jsonl' -d 'the format (default md)'
complete -c scrollback -n '__scrollback_in export' -l out -r -F -d 'write one file (a regular file; never through a symlink); default standard output'
complete -c scrollback -n '__scrollback_in export' -l out-dir -r -F -d 'write one file per conversation into DIR (created if missing); Markdown puts each one\'s attachments in NAME.files beside it'
complete -c scrollback -n '__scrollback_in export' -l attachments-dir -x -d 'JSON Lines: write the attachments\' bytes as files in DIR, named by their SHA-256, instead of as base64 lines in the export'
complete -c scrollback -n '__scrollback_in export' -l force -d 'replace files that exist'
complete -c scrollback -n '__scrollback_in export' -l hidden -d 'Markdown: the hidden messages too (tool traffic, reasoning, context), each marked with its kind (JSON and JSON Lines always hold every message, with its kind)'
complete -c scrollback -n '__scrollback_in export' -l source -x -a '(__scrollback_words source)' -d 'only those imported from NAME: chatgpt, claude, llm, jsonl, demo…'
complete -c scrollback -n '__scrollback_in export' -l model -x -a '(__scrollback_words model)' -d 'only those whose model contains NAME (any case)'
complete -c scrollback -n '__scrollback_in export' -l project -x -d 'only coding-agent sessions whose working folder contains FOLDER (any case)'
complete -c scrollback -n '__scrollback_in export' -l since -x -d 'only those updated since DATE: 2025-01-31, 2025-01, 2025, or 7d, 2w, 3m, 1y ago (UTC)'
complete -c scrollback -n '__scrollback_in export' -l until -x -d 'only those updated before the end of DATE (same forms)'
complete -c scrollback -n '__scrollback_in export' -l pinned -d 'only pinned conversations'
complete -c scrollback -n '__scrollback_in export' -l title -x -d 'only those whose title holds every word of WORDS, as search finds words'
complete -c scrollback -n '__scrollback_in attachment' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in attachment' -l out -r -F -d 'the file to write (required; a regular file, never through a symlink; - for standard output when it is not a terminal)'
complete -c scrollback -n '__scrollback_in attachment' -l force -d 'replace FILE if it exists'
complete -c scrollback -n '__scrollback_at attachment' -a 'list get'
complete -c scrollback -n '__scrollback_in stats' -l chart -d 'bar charts instead: conversations and tokens per month (the last 24, or the filter\'s), per model, per source, the busiest days'
complete -c scrollback -n '__scrollback_in stats' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in stats' -l source -x -a '(__scrollback_words source)' -d 'only those imported from NAME: chatgpt, claude, llm, jsonl, demo…'
complete -c scrollback -n '__scrollback_in stats' -l model -x -a '(__scrollback_words model)' -d 'only those whose model contains NAME (any case)'
complete -c scrollback -n '__scrollback_in stats' -l project -x -d 'only coding-agent sessions whose working folder contains FOLDER (any case)'
complete -c scrollback -n '__scrollback_in stats' -l since -x -d 'only those updated since DATE: 2025-01-31, 2025-01, 2025, or 7d, 2w, 3m, 1y ago (UTC)'
complete -c scrollback -n '__scrollback_in stats' -l until -x -d 'only those updated before the end of DATE (same forms)'
complete -c scrollback -n '__scrollback_in stats' -l pinned -d 'only pinned conversations'
complete -c scrollback -n '__scrollback_in stats' -l title -x -d 'only those whose title holds every word of WORDS, as search finds words'
complete -c scrollback -n '__scrollback_in mcp' -l allow-writes -d 'add the rename and pin tools (nothing deletes); not with --readonly'
complete -c scrollback -n '__scrollback_in mcp' -l print-config -d 'print what adds this server to Claude Code, Codex and clients configured in JSON, with this binary\'s path'
complete -c scrollback -n '__scrollback_in backup' -l force -d 'replace PATH if it exists'
complete -c scrollback -n '__scrollback_in backup' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in restore' -l yes -s y -d 'restore without asking (needed when standard input is not a terminal)'
complete -c scrollback -n '__scrollback_in restore' -l at -x -d 'rebuild the history as it was then (a date as --until reads it: the end of that day; or 2026-11-01T10:00Z, 7d…) from the sync server\'s snapshots and changes, into --out; the database is not touched'
complete -c scrollback -n '__scrollback_in restore' -l out -r -F -d 'with --at: the new file to write (it must not exist)'
complete -c scrollback -n '__scrollback_in restore' -l from -x -d 'with --at: start from this local backup (it must hold nothing after TIME), then take the sync server\'s changes after it up to TIME when this machine has sync\'s secrets'
complete -c scrollback -n '__scrollback_in restore' -l json -s j -d 'print JSON instead of text'
complete -c scrollback -n '__scrollback_in check' -l repair -d 'rebuild the search indexes and message counts first'
complete -c scrollback -n '__scrollback_in demo' -l count -x -d 'how many conversations (default 1000)'
complete -c scrollback -n '__scrollback_in demo' -l seed -x -d 'the seed: the same seed gives the same data, its dates ending today (default 1)'
complete -c scrollback -n '__scrollback_in demo' -l yes -s y -d 'add to your own history without asking (without --db or --demo)'
complete -c scrollback -n '__scrollback_in sync' -l json -s j -d 'sync status: print JSON instead of text; sync snapshot: print JSON instead of text'
complete -c scrollback -n '__scrollback_in sync' -l force -d 'sync off: forget this machine too: changes not sent are dropped, and sync init then joins as a new one; sync key show: write the key to a pipe or file too (anyone who reads it can open your history)'
complete -c scrollback -n '__scrollback_at sync' -a 'init status snapshot off key'
complete -c scrollback -n '__scrollback_at sync key' -a 'show import'
complete -c scrollback -n '__scrollback_in config' -l print-default -d 'print the default config.toml, every setting with a comment'
complete -c scrollback -n '__scrollback_in config' -l check -d 'read the config file and list its problems (exit 1 when there are any)'
complete -c scrollback -n '__scrollback_at completions' -a 'bash zsh fish'

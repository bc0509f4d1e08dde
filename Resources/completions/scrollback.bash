# bash completion for scrollback (made by `scrollback completions bash`)
# Words come back through mapfile and a literal prefix test, never through an
# unquoted expansion: a word from the database (or a file name) is never taken
# as a pattern or run.
_scrollback_words() {
    "$1" ${2:+--db "$2"} completions --words "$3" 2>/dev/null
}
_scrollback_offer() {
    local word
    COMPREPLY=()
    while IFS= read -r word; do
        [[ "$word" == "$1"* ]] && COMPREPLY+=("$word")
    done
}
# A word as typed ('my dir', "my dir", my\ dir) as the shell will pass it, its
# quotes and backslashes taken out one character at a time (never by eval).
_scrollback_dequote() {
    local word="$1" out="" c quote=""
    while [[ -n "$word" ]]; do
        c="${word:0:1}"
        word="${word:1}"
        if [[ "$quote" == "'" ]]; then
            [[ "$c" == "'" ]] && quote="" || out+="$c"
        elif [[ "$c" == '\' && -n "$word" ]]; then
            out+="${word:0:1}"
            word="${word:1}"
        elif [[ "$c" == '"' ]]; then
            [[ "$quote" == '"' ]] && quote="" || quote='"'
        elif [[ "$c" == "'" && -z "$quote" ]]; then
            quote="'"
        else
            out+="$c"
        fi
    done
    printf '%s' "$out"
}
_scrollback() {
    local current="${COMP_WORDS[COMP_CWORD]}" previous="" command="" db="" i word step
    local -a typed=()
    (( COMP_CWORD > 0 )) && previous="${COMP_WORDS[COMP_CWORD-1]}"
    # `--db=PATH`: bash splits it at the `=` into three words.
    [[ "$current" == "=" ]] && { previous="${COMP_WORDS[COMP_CWORD-1]}"; current=""; }
    [[ "$previous" == "=" ]] && (( COMP_CWORD > 1 )) && previous="${COMP_WORDS[COMP_CWORD-2]}"
    # The command and the words after it; an option's value is neither.
    for (( i = 1; i < COMP_CWORD; i++ )); do
        word="${COMP_WORDS[i]}"
        step=1
        [[ "${COMP_WORDS[i+1]}" == "=" ]] && step=2
        # `--db= list`: an empty value, and the command after it.
        [[ "$word" == "--db" && $step == 2 && "$COMP_LINE" == *"--db= "* ]] && { i=$((i + 1)); continue; }
        case "$word" in
            --db) db="$(_scrollback_dequote "${COMP_WORDS[i+step]}")"; i=$((i + step)); continue ;;
            --sort|--limit|-n|--after|--before|--source|--model|--project|--since|--until|--title|--format|--unzip-limit|--out|--out-dir|--attachments-dir|--at|--from|--count|--seed|--words) i=$((i + step)); continue ;;
            -*) continue ;;
        esac
        if [[ -z "$command" ]]; then command="$word"; else typed+=("$word"); fi
    done
    [[ "$db" == "~/"* ]] && db="$HOME/${db#"~/"}"
    case "$previous" in
        --db) mapfile -t COMPREPLY < <(compgen -f -- "$current"); return ;;
    esac
    case "$command $previous" in
        "list --sort") _scrollback_offer "$current" < <(printf '%s\n' updated created title); return ;;
        "list --limit"|"list -n") COMPREPLY=(); return ;;
        "list --after") COMPREPLY=(); return ;;
        "list --before") COMPREPLY=(); return ;;
        "list --source") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" source); return ;;
        "list --model") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" model); return ;;
        "list --project") COMPREPLY=(); return ;;
        "list --since") COMPREPLY=(); return ;;
        "list --until") COMPREPLY=(); return ;;
        "list --title") COMPREPLY=(); return ;;
        "search --limit"|"search -n") COMPREPLY=(); return ;;
        "search --after") COMPREPLY=(); return ;;
        "search --source") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" source); return ;;
        "search --model") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" model); return ;;
        "search --project") COMPREPLY=(); return ;;
        "search --since") COMPREPLY=(); return ;;
        "search --until") COMPREPLY=(); return ;;
        "search --title") COMPREPLY=(); return ;;
        "delete --source") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" source); return ;;
        "import --format") _scrollback_offer "$current" < <(printf '%s\n' chatgpt claude llm jsonl claude-code codex gemini); return ;;
        "import --unzip-limit") COMPREPLY=(); return ;;
        "export --format") _scrollback_offer "$current" < <(printf '%s\n' md json jsonl); return ;;
        "export --out") mapfile -t COMPREPLY < <(compgen -f -- "$current"); return ;;
        "export --out-dir") mapfile -t COMPREPLY < <(compgen -d -- "$current"); return ;;
        "export --attachments-dir") COMPREPLY=(); return ;;
        "export --source") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" source); return ;;
        "export --model") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" model); return ;;
        "export --project") COMPREPLY=(); return ;;
        "export --since") COMPREPLY=(); return ;;
        "export --until") COMPREPLY=(); return ;;
        "export --title") COMPREPLY=(); return ;;
        "attachment --out") mapfile -t COMPREPLY < <(compgen -f -- "$current"); return ;;
        "stats --source") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" source); return ;;
        "stats --model") _scrollback_offer "$current" < <(_scrollback_words "${COMP_WORDS[0]}" "$db" model); return ;;
        "stats --project") COMPREPLY=(); return ;;
        "stats --since") COMPREPLY=(); return ;;
        "stats --until") COMPREPLY=(); return ;;
        "stats --title") COMPREPLY=(); return ;;
        "restore --at") COMPREPLY=(); return ;;
        "restore --out") mapfile -t COMPREPLY < <(compgen -f -- "$current"); return ;;
        "restore --from") COMPREPLY=(); return ;;
        "demo --count") COMPREPLY=(); return ;;
        "demo --seed") COMPREPLY=(); return ;;
    esac
    case "$command" in
        "") _scrollback_offer "$current" < <(printf '%s\n' list show search rename pin unpin delete import export attachment stats mcp backup restore check demo sync config completions --db --readonly --demo --verbose --help --version) ;;
        list) _scrollback_offer "$current" < <(printf '%s\n' --sort --limit --after --before --last --source --model --project --since --until --pinned --title --json --db --readonly --demo --verbose --help) ;;
        show) _scrollback_offer "$current" < <(printf '%s\n' --all-branches --hidden --json --db --readonly --demo --verbose --help) ;;
        search) _scrollback_offer "$current" < <(printf '%s\n' --limit --after --hidden --source --model --project --since --until --pinned --title --json --db --readonly --demo --verbose --help) ;;
        rename) _scrollback_offer "$current" < <(printf '%s\n' --db --readonly --demo --verbose --help) ;;
        pin) _scrollback_offer "$current" < <(printf '%s\n' --db --readonly --demo --verbose --help) ;;
        unpin) _scrollback_offer "$current" < <(printf '%s\n' --db --readonly --demo --verbose --help) ;;
        delete) _scrollback_offer "$current" < <(printf '%s\n' --yes --source --db --readonly --demo --verbose --help) ;;
        import) if [[ "$current" == -* ]]; then _scrollback_offer "$current" < <(printf '%s\n' --format --yes --quiet --restore --unzip-limit --db --readonly --demo --verbose --help); else mapfile -t COMPREPLY < <(compgen -f -- "$current"); fi ;;
        export) _scrollback_offer "$current" < <(printf '%s\n' --format --out --out-dir --attachments-dir --force --hidden --source --model --project --since --until --pinned --title --db --readonly --demo --verbose --help) ;;
        attachment)
            if [[ "$current" == -* ]]; then _scrollback_offer "$current" < <(printf '%s\n' --json --out --force --db --readonly --demo --verbose --help); return; fi
            case "${typed[*]}" in
                "") _scrollback_offer "$current" < <(printf '%s\n' list get) ;;
            esac ;;
        stats) _scrollback_offer "$current" < <(printf '%s\n' --chart --json --source --model --project --since --until --pinned --title --db --readonly --demo --verbose --help) ;;
        mcp) _scrollback_offer "$current" < <(printf '%s\n' --allow-writes --print-config --db --readonly --demo --verbose --help) ;;
        backup) _scrollback_offer "$current" < <(printf '%s\n' --force --json --db --readonly --demo --verbose --help) ;;
        restore) _scrollback_offer "$current" < <(printf '%s\n' --yes --at --out --from --json --db --readonly --demo --verbose --help) ;;
        check) _scrollback_offer "$current" < <(printf '%s\n' --repair --db --readonly --demo --verbose --help) ;;
        demo) _scrollback_offer "$current" < <(printf '%s\n' --count --seed --yes --db --readonly --demo --verbose --help) ;;
        sync)
            if [[ "$current" == -* ]]; then _scrollback_offer "$current" < <(printf '%s\n' --json --force --db --readonly --demo --verbose --help); return; fi
            case "${typed[*]}" in
                "") _scrollback_offer "$current" < <(printf '%s\n' init status snapshot off key) ;;
                "key") _scrollback_offer "$current" < <(printf '%s\n' show import) ;;
            esac ;;
        config) _scrollback_offer "$current" < <(printf '%s\n' --print-default --check --db --readonly --demo --verbose --help) ;;
        completions)
            if [[ "$current" == -* ]]; then _scrollback_offer "$current" < <(printf '%s\n' --db --readonly --demo --verbose --help); return; fi
            case "${typed[*]}" in
                "") _scrollback_offer "$current" < <(printf '%s\n' bash zsh fish) ;;
            esac ;;
    esac
}
complete -F _scrollback scrollback

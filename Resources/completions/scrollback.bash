# bash completion for scrollback (made by `scrollback completions bash`)
_scrollback_words() {
    "$1" ${2:+--db "$2"} completions --words "$3" 2>/dev/null
}
_scrollback() {
    local current="${COMP_WORDS[COMP_CWORD]}" previous="" command="" db="" i word
    local -a typed=()
    (( COMP_CWORD > 0 )) && previous="${COMP_WORDS[COMP_CWORD-1]}"
    # The command and the words after it; an option's value is neither.
    for (( i = 1; i < COMP_CWORD; i++ )); do
        word="${COMP_WORDS[i]}"
        case "$word" in
            --db) db="${COMP_WORDS[i+1]}"; i=$((i + 1)); continue ;;
            --sort|--limit|-n|--after|--before|--source|--model|--since|--until|--format|--unzip-limit|--out|--out-dir|--count|--seed|--words) i=$((i + 1)); continue ;;
            -*) continue ;;
        esac
        if [[ -z "$command" ]]; then command="$word"; else typed+=("$word"); fi
    done
    [[ "$db" == "~/"* ]] && db="$HOME/${db#"~/"}"
    case "$previous" in
        --db) COMPREPLY=($(compgen -f -- "$current")); return ;;
    esac
    case "$command $previous" in
        "list --sort") COMPREPLY=($(compgen -W "updated created title" -- "$current")); return ;;
        "list --limit"|"list -n") COMPREPLY=(); return ;;
        "list --after") COMPREPLY=(); return ;;
        "list --before") COMPREPLY=(); return ;;
        "list --source") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" source)" -- "$current")); return ;;
        "list --model") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" model)" -- "$current")); return ;;
        "list --since") COMPREPLY=(); return ;;
        "list --until") COMPREPLY=(); return ;;
        "search --limit"|"search -n") COMPREPLY=(); return ;;
        "search --after") COMPREPLY=(); return ;;
        "search --source") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" source)" -- "$current")); return ;;
        "search --model") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" model)" -- "$current")); return ;;
        "search --since") COMPREPLY=(); return ;;
        "search --until") COMPREPLY=(); return ;;
        "delete --source") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" source)" -- "$current")); return ;;
        "import --format") COMPREPLY=($(compgen -W "chatgpt claude llm jsonl" -- "$current")); return ;;
        "import --unzip-limit") COMPREPLY=(); return ;;
        "export --format") COMPREPLY=($(compgen -W "md json jsonl" -- "$current")); return ;;
        "export --out") COMPREPLY=($(compgen -f -- "$current")); return ;;
        "export --out-dir") COMPREPLY=($(compgen -d -- "$current")); return ;;
        "export --source") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" source)" -- "$current")); return ;;
        "export --model") COMPREPLY=($(compgen -W "$(_scrollback_words "${COMP_WORDS[0]}" "$db" model)" -- "$current")); return ;;
        "export --since") COMPREPLY=(); return ;;
        "export --until") COMPREPLY=(); return ;;
        "demo --count") COMPREPLY=(); return ;;
        "demo --seed") COMPREPLY=(); return ;;
    esac
    case "$command" in
        "") COMPREPLY=($(compgen -W "list show search rename pin unpin delete import export stats check demo sync config completions --db --readonly --demo --verbose --help --version" -- "$current")) ;;
        list) COMPREPLY=($(compgen -W "--sort --limit --after --before --last --source --model --since --until --pinned --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        show) COMPREPLY=($(compgen -W "--all-branches --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        search) COMPREPLY=($(compgen -W "--limit --after --source --model --since --until --pinned --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        rename) COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")) ;;
        pin) COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")) ;;
        unpin) COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")) ;;
        delete) COMPREPLY=($(compgen -W "--yes --source --db --readonly --demo --verbose --help" -- "$current")) ;;
        import) if [[ "$current" == -* ]]; then COMPREPLY=($(compgen -W "--format --quiet --restore --unzip-limit --db --readonly --demo --verbose --help" -- "$current")); else COMPREPLY=($(compgen -f -- "$current")); fi ;;
        export) COMPREPLY=($(compgen -W "--format --out --out-dir --force --source --model --since --until --pinned --db --readonly --demo --verbose --help" -- "$current")) ;;
        stats) COMPREPLY=($(compgen -W "--json --db --readonly --demo --verbose --help" -- "$current")) ;;
        check) COMPREPLY=($(compgen -W "--repair --db --readonly --demo --verbose --help" -- "$current")) ;;
        demo) COMPREPLY=($(compgen -W "--count --seed --yes --db --readonly --demo --verbose --help" -- "$current")) ;;
        sync)
            if [[ "$current" == -* ]]; then COMPREPLY=($(compgen -W "--force --json --db --readonly --demo --verbose --help" -- "$current")); return; fi
            case "${typed[*]}" in
                "") COMPREPLY=($(compgen -W "init status off key" -- "$current")) ;;
                "key") COMPREPLY=($(compgen -W "show import" -- "$current")) ;;
            esac ;;
        config) COMPREPLY=($(compgen -W "--print-default --check --db --readonly --demo --verbose --help" -- "$current")) ;;
        completions)
            if [[ "$current" == -* ]]; then COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")); return; fi
            case "${typed[*]}" in
                "") COMPREPLY=($(compgen -W "bash zsh fish" -- "$current")) ;;
            esac ;;
    esac
}
complete -F _scrollback scrollback

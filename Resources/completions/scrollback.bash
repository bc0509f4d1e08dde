# bash completion for scrollback (made by `scrollback completions bash`)
_scrollback() {
    local current previous command word
    current="${COMP_WORDS[COMP_CWORD]}"
    previous="${COMP_WORDS[COMP_CWORD-1]}"
    command=""
    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
        case "$word" in -*) ;; *) command="$word"; break ;; esac
    done
    case "$previous" in
        --db|--out) COMPREPLY=($(compgen -f -- "$current")); return ;;
        --out-dir) COMPREPLY=($(compgen -d -- "$current")); return ;;
        --sort) COMPREPLY=($(compgen -W "updated created title" -- "$current")); return ;;
        --format) COMPREPLY=($(compgen -W "chatgpt claude llm jsonl" -- "$current")); return ;;
    esac
    case "$command" in
        "") COMPREPLY=($(compgen -W "list show search rename pin unpin delete import export stats check demo sync config completions --db --readonly --demo --verbose --help --exit-after-first-frame --version" -- "$current")) ;;
        list) COMPREPLY=($(compgen -W "--sort --limit --after --before --last --source --model --since --until --pinned --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        show) COMPREPLY=($(compgen -W "--all-branches --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        search) COMPREPLY=($(compgen -W "--limit --after --source --model --since --until --pinned --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        rename) COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")) ;;
        pin) COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")) ;;
        unpin) COMPREPLY=($(compgen -W "--db --readonly --demo --verbose --help" -- "$current")) ;;
        delete) COMPREPLY=($(compgen -W "--yes --source --db --readonly --demo --verbose --help" -- "$current")) ;;
        import) COMPREPLY=($(compgen -f -W "--format --quiet --restore --unzip-limit --db --readonly --demo --verbose --help" -- "$current")) ;;
        export) COMPREPLY=($(compgen -W "--format --out --out-dir --force --source --model --since --until --pinned --db --readonly --demo --verbose --help" -- "$current")) ;;
        stats) COMPREPLY=($(compgen -W "--json --db --readonly --demo --verbose --help" -- "$current")) ;;
        check) COMPREPLY=($(compgen -W "--repair --db --readonly --demo --verbose --help" -- "$current")) ;;
        demo) COMPREPLY=($(compgen -W "--count --seed --yes --db --readonly --demo --verbose --help" -- "$current")) ;;
        sync) COMPREPLY=($(compgen -W "init status off key show import --force --json --db --readonly --demo --verbose --help" -- "$current")) ;;
        config) COMPREPLY=($(compgen -W "--print-default --check --db --readonly --demo --verbose --help" -- "$current")) ;;
        completions) COMPREPLY=($(compgen -W "bash zsh fish --db --readonly --demo --verbose --help" -- "$current")) ;;
    esac
}
complete -F _scrollback scrollback

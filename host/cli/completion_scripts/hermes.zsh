#compdef hermes
# zsh completion for hermes (printed by `hermes completion zsh`).
#
# Load it after compinit with: source <(hermes completion zsh)
# or save it as _hermes in a folder of $fpath.
#
# What hermes prints is data: each line becomes one element of an array
# (no eval, no word splitting, no globbing) and is handed to compadd, which
# quotes it if it is ever inserted.
_hermes() {
    local -a args lines names shown
    local cmd=${(Q)words[1]} line name
    args=("${(@Q)words[2,CURRENT-1]}")
    if [[ $cmd == "~/"* ]]; then
        cmd=$HOME/${cmd#"~/"}
    fi
    if [[ ${words[CURRENT]} == -* ]]; then
        args+=("${(Q)words[CURRENT]}")
    fi
    lines=("${(@f)$(command -- "$cmd" "${args[@]}" --generate-shell-completion 2>/dev/null)}")
    for line in "${lines[@]}"; do
        name=${line%%:*}
        [[ -n $name ]] || continue
        names+=("$name")
        if [[ $line == *:* ]]; then
            shown+=("$name  -- ${line#*:}")
        else
            shown+=("$name")
        fi
    done
    if (( ${#names} )); then
        compadd -l -d shown -- "${names[@]}"
    else
        _files
    fi
}

if [[ ${funcstack[1]} == _hermes ]]; then
    # Autoloaded from $fpath: this file is the function's body.
    _hermes "$@"
else
    compdef _hermes hermes
fi

# bash completion for hermes (printed by `hermes completion bash`).
#
# Load it with: source <(hermes completion bash)
#
# Plain bash is enough (the bash-completion package is not needed). What
# hermes prints is data: each line is read into an array as it is and
# matched against the word being completed by plain string comparison, so no
# candidate is ever split into words, globbed, expanded or run.
_hermes_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local cmd=${COMP_WORDS[0]}
    local -a args=("${COMP_WORDS[@]:1:COMP_CWORD-1}")
    local line token
    if [[ $cmd == "~/"* ]]; then
        cmd=$HOME/${cmd#"~/"}
    fi
    if [[ $cur == -* ]]; then
        args+=("$cur")
    fi
    COMPREPLY=()
    while IFS= read -r line; do
        token=${line%%:*}
        if [[ -n $token && $token == "$cur"* ]]; then
            COMPREPLY+=("$token")
        fi
    done < <(command "$cmd" "${args[@]}" --generate-shell-completion 2>/dev/null)
    return 0
}
complete -o bashdefault -o default -F _hermes_complete hermes

# fish completion for hermes (printed by `hermes completion fish`).
#
# Load it with: hermes completion fish > ~/.config/fish/completions/hermes.fish
#
# What hermes prints is data: fish takes each line of the command
# substitution as one candidate, and a candidate is never evaluated.
function __hermes_complete
    set -l args (commandline -opc)
    set -l cur (commandline -ct)
    set -l cmd $args[1]
    set -e args[1]
    if string match -q -- '-*' $cur
        set -a args $cur
    end
    for line in (command $cmd $args --generate-shell-completion 2>/dev/null)
        set -l parts (string split -m 1 -- ':' $line)
        if test -z "$parts[1]"
            continue
        end
        if set -q parts[2]
            printf '%s\t%s\n' $parts[1] $parts[2]
        else
            printf '%s\n' $parts[1]
        end
    end
end

complete -c hermes -e
complete -c hermes -f -a '(__hermes_complete)'

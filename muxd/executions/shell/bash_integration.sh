# muxd's bash integration: prompt marks (OSC 133) so muxd records each command line run in
# this pane as an execution with its exit status. Your own ~/.bashrc runs first, as usual.
if [ -f ~/.bashrc ]; then . ~/.bashrc; fi
__muxd_command() {
    local c
    c=$(HISTTIMEFORMAT= builtin history 1)
    [[ $c =~ ^[[:space:]]*[0-9]+[*[:space:]]+(.*)$ ]] && c=${BASH_REMATCH[1]}
    c=${c//%/%25}; c=${c//;/%3B}; c=${c//$'\n'/%0A}; c=${c//$'\a'/%07}; c=${c//$'\e'/%1B}
    printf '\e]133;C;cmdline_url=%s\a' "$c"
}
__muxd_prompt() {
    local status=$?
    printf '\e]133;D;%s\a\e]133;A\a' "$status"
    return $status
}
PS0="${PS0}"'$(__muxd_command)'
PROMPT_COMMAND="__muxd_prompt${PROMPT_COMMAND:+; $PROMPT_COMMAND}"

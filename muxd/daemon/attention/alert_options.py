"""The options of window alerts (tmux's, acted on as tmux 3.3a does: alerts.py) and of desktop
notifications (muxd's own: notifications.py), as rows daemon/panes/options.py makes Options of:
(name, scope, kind, default, help, choices)."""

from __future__ import annotations

ALERT_CHOICES = ("none", "any", "current", "other")
VISUAL_CHOICES = ("off", "on", "both")
NOTIFY_METHODS = ("auto", "osc9", "osc777", "bell", "all")

AlertOption = tuple[str, str, str, str, str, tuple[str, ...]]

# tmux's, with tmux 3.3a's defaults.
TMUX_ALERT_OPTIONS: tuple[AlertOption, ...] = (
    ("monitor-activity", "window", "flag", "off", "flag the window (#) when its panes write", ()),
    ("monitor-bell", "window", "flag", "on", "flag the window (!) when a pane rings the bell", ()),
    ("monitor-silence", "window", "number", "0",
     "flag the window (~) after this many seconds without output (0: never)", ()),
    ("activity-action", "session", "choice", "other",
     "which windows' activity alerts (a hook, a bell or message): any, none, current or other", ALERT_CHOICES),
    ("bell-action", "session", "choice", "any", "which windows' bells alert: any, none, current or other",
     ALERT_CHOICES),
    ("silence-action", "session", "choice", "other", "which windows' silence alerts: any, none, current or other",
     ALERT_CHOICES),
    ("visual-activity", "session", "choice", "off",
     "an activity alert is a bell to the terminal (off), a status message (on) or both", VISUAL_CHOICES),
    ("visual-bell", "session", "choice", "off",
     "a bell alert is a bell to the terminal (off), a status message (on) or both", VISUAL_CHOICES),
    ("visual-silence", "session", "choice", "off",
     "a silence alert is a bell to the terminal (off), a status message (on) or both", VISUAL_CHOICES),
    ("window-status-bell-style", "window", "style", "reverse",
     "the look of a window tab flagged ! (or an agent's ?, $, X)", ()),
    ("window-status-activity-style", "window", "style", "reverse",
     "the look of a window tab flagged # or ~ (or an agent's +)", ()),
)
# muxd's own: desktop notifications through the attached terminal.
NOTIFY_OPTION_ROWS: tuple[AlertOption, ...] = (
    ("notify-waiting", "session", "flag", "on", "notify when an agent elsewhere waits for you", ()),
    ("notify-failed", "session", "flag", "on", "notify when an agent elsewhere fails its turn", ()),
    ("notify-limited", "session", "flag", "on", "notify when an agent elsewhere hits a usage limit", ()),
    ("notify-finished", "session", "flag", "off", "notify when an agent elsewhere finishes its turn", ()),
    ("notify-method", "session", "choice", "auto",
     "how: auto (OSC 777 and a bell where the terminal takes 777, else OSC 9 and a bell), osc9, osc777, "
     "bell, all", NOTIFY_METHODS),
)
ALERT_OPTIONS = TMUX_ALERT_OPTIONS + NOTIFY_OPTION_ROWS

# 15: escape sequences for the terminal that shows the run: a window title, the clipboard
# (OSC 52), a cleared screen; then a failure, so that they land in the reason.
import sys

sys.stderr.write("\x1b]0;pwned title\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31mred\n")
sys.exit("\x1b]0;title again\x07last line\x1b[0m")

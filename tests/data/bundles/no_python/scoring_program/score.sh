#!/bin/sh
# Usage: score.sh INPUT OUTPUT. Accuracy and error count of INPUT/res/predictions.txt against
# INPUT/ref/truth.txt (one label a line), written to OUTPUT/scores.json.
set -eu
awk 'NR == FNR { truth[FNR] = $1; n = FNR; next }
     { seen++; if ($1 == truth[FNR]) hit++ }
     END { if (seen != n) { print "expected " n " predictions, got " seen > "/dev/stderr"; exit 1 }
           printf "{\"accuracy\": %.6f, \"errors\": %d}\n", hit / n, n - hit }' \
    "$1/ref/truth.txt" "$1/res/predictions.txt" > "$2/scores.json"

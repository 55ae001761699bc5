#!/bin/sh
# lit helper: imports $2 with $1 (joint-translate) into $3, prints the
# diagnostics, the exit code, and whether an output file was left behind.
rm -f "$3"
"$1" --import-joint-json "$2" -o "$3" 2>&1
echo "exit=$?"
if [ -e "$3" ]; then echo "partial output left: $3"; fi
exit 0

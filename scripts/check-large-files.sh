#!/usr/bin/env bash
# Fails when a file tracked by git is larger than 1 MiB, so built binaries,
# caches and data dumps do not end up in every clone. Prints one line per
# offending file. Files staged for deletion are not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((1024 * 1024))
status=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue # deleted in the working tree
  size=$(wc -c <"$f")
  size=${size//[[:space:]]/}
  if [ "$size" -gt "$limit" ]; then
    echo "$f: $((size / 1024)) KiB ($size bytes), over the 1 MiB limit for tracked files:" \
      "if it is build output, untrack it (git rm --cached -- '$f') and add a .gitignore rule;" \
      "otherwise shrink it or keep it out of the repository" >&2
    status=1
  fi
done < <(git ls-files -z --cached)
exit "$status"

#!/usr/bin/env bash
# Runs every fuzz target in the repository (every `func FuzzXxx(*testing.F)`
# in a _test.go file that git tracks or would track), each for FUZZTIME
# (default 20s), from inside the module that owns its package, so fuzzers in
# the sdk and plugin modules run too. New fuzzers are picked up without
# editing anything. Keeps going after a failure and exits 1 at the end if
# any target failed; a failing input is saved under the package's
# testdata/fuzz/ as go test does.
#
#   FUZZTIME=1m scripts/fuzz.sh          all targets, one minute each
#   scripts/fuzz.sh FuzzLoad             only targets whose name matches
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
go=${GO:-go}
fuzztime=${FUZZTIME:-20s}
only=${1:-}

# moduleOf prints the folder of the nearest go.mod at or above folder $1.
moduleOf() {
  local d=$1
  while [ "$d" != "." ] && [ ! -f "$d/go.mod" ]; do
    d=$(dirname "$d")
  done
  echo "$d"
}

failed=()
ran=0
while IFS= read -r -d "" -u 3 file; do
  [ -f "$file" ] || continue
  dir=$(dirname "$file")
  mod=$(moduleOf "$dir")
  if [ "$dir" = "$mod" ]; then
    pkg=.
  elif [ "$mod" = . ]; then
    pkg="./$dir"
  else
    pkg="./${dir#"$mod"/}"
  fi
  for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$file"); do
    if [ -n "$only" ] && [[ "$name" != *"$only"* ]]; then
      continue
    fi
    echo "== $name in $dir (module $mod, $fuzztime)"
    ran=$((ran + 1))
    if ! (cd "$root/$mod" && "$go" test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg"); then
      failed+=("$name in $dir")
    fi
  done
done 3< <(git ls-files -z -co --exclude-standard -- "*_test.go")

if [ "$ran" = 0 ]; then
  echo "no fuzz targets found${only:+ matching $only}" >&2
  exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz target failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "all $ran fuzz targets passed ($fuzztime each)"

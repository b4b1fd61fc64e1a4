#!/bin/sh
# check-static.sh DIR: fails when a binary in DIR (make build's bin/) is not
# statically linked: built without CGO_ENABLED=0 (go version -m records the
# setting), or an ELF file that names a dynamic loader (a PT_INTERP header,
# which `file` reports as "dynamically linked").
set -eu
dir=${1:-bin}
GO=${GO:-go}
status=0
found=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	found=1
	if ! "$GO" version -m "$f" | grep -q '^[[:space:]]*build[[:space:]]*CGO_ENABLED=0$'; then
		echo "$f was not built with CGO_ENABLED=0 (go version -m $f); make build links shipped binaries statically"
		status=1
	fi
	if command -v file >/dev/null 2>&1 && file -L "$f" | grep -q 'dynamically linked'; then
		echo "$f is dynamically linked ($(file -L "$f" | sed 's/^[^:]*: //'))"
		status=1
	fi
done
if [ "$found" = 0 ]; then
	echo "no binaries in $dir: run make build first"
	exit 1
fi
[ "$status" = 0 ] && echo "every binary in $dir is statically linked"
exit $status

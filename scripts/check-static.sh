#!/bin/sh
# check-static.sh FILE...: fails when one of the shipped binaries named (make
# build's) is not statically linked: built without CGO_ENABLED=0 (go version
# -m records the setting), or an ELF file that names a dynamic loader (a
# PT_INTERP header, which `file` reports as "dynamically linked"). Other
# files of bin/ (the conformance client, a test server) are not shipped and
# not checked.
set -eu
GO=${GO:-go}
status=0
found=0
for f in "$@"; do
	if [ ! -f "$f" ]; then
		echo "$f is missing: run make build first"
		status=1
		continue
	fi
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
	echo "usage: check-static.sh FILE...: name the shipped binaries"
	exit 1
fi
[ "$status" = 0 ] && echo "every shipped binary is statically linked: $*"
exit $status

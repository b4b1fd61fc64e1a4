package sandbox

import (
	"errors"
	"path/filepath"
	"strconv"

	"github.com/hashicorp/go-hclog"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/sandboxpath"
)

// pinRules opens each strict rule's path (a resolved path of the server's
// own folders) the way the launcher will, without following any symbolic
// link on the way, and records the object found, so that the launcher puts
// the rule on that object or fails. A path gone since it was resolved gets
// no rule; one that a link now stands in the way of refuses the start.
func pinRules(server string, rules []launcher.Rule) ([]launcher.Rule, error) {
	out := rules[:0]
	for _, r := range rules {
		if !r.Strict {
			out = append(out, r)
			continue
		}
		fd, err := unix.Openat2(unix.AT_FDCWD, r.Path, &unix.OpenHow{
			Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS})
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q refused: open %s without following links: %v (a symbolic link replaced part of it while the server was starting); start it again",
				server, r.Path, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q: stat %s: %v", server, r.Path, err)
		}
		r.Dev, r.Ino = uint64(st.Dev), st.Ino
		out = append(out, r)
	}
	return out, nil
}

// startGrants are the grants of one start, on resolved paths: / read-only;
// the install folder, the private temporary folder tmp and the writable
// paths that exist, writable and pinned (strict); /dev/null. It returns
// them with the number of writable paths granted.
func startGrants(plan *sandboxpath.Plan, tmp string, log hclog.Logger) ([]grant, int) {
	grants := []grant{{path: "/", access: launcher.ReadOnly}}
	if plan.InstallDir != "" && exists(plan.InstallDir) {
		grants = append(grants, grant{path: plan.InstallDir, access: launcher.ReadWrite, own: true, strict: true})
	}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	grants = append(grants, grant{path: tmp, access: launcher.ReadWrite, own: true, strict: true})
	n := 0
	for _, w := range plan.Writable {
		if w.Missing || !exists(w.Path) {
			log.Debug("sandbox: a writable path does not exist; skipped", "path", strconv.QuoteToASCII(w.Declared))
			continue
		}
		grants = append(grants, grant{path: w.Path, access: launcher.ReadWrite, own: true, strict: true})
		n++
	}
	return append(grants, grant{path: "/dev/null", access: launcher.DevNull, own: true}), n
}

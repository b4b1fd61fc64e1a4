// Package sandbox puts a stdio MCP server under the isolation the host asks
// for (transport.Sandbox). It owns three things: the decision of what to
// apply, made in the plugin from what the kernel can enforce (and the
// refusal when Enforce is set and something cannot be); the start of the
// launcher (hermes-stdio-launcher, a small binary installed beside the
// plugin that applies a plan to itself and then executes the server; the
// plan is package launcher's): finding it, building its plan (with the
// seccomp filters assembled here), handing it over and reading what it
// reports; and what a sandbox
// holds while its server runs (a private temporary folder, a pids cgroup,
// the filtering proxy of network: [hosts], hermes-stdio-proxy, a process
// of its own beside the plugin; package proxy), released by Close. It never
// reads or writes the server's messages.
package sandbox

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/sandboxpath"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// kernel is what this kernel (and this process's rights) can enforce.
type kernel struct {
	linux bool
	// landlockABI is the Landlock ABI version, 0 when Landlock is
	// unavailable (landlockErr says why).
	landlockABI int
	landlockErr error
	// seccompErr is why seccomp filters cannot be installed, or nil.
	seccompErr error
	// root: the server would run as uid 0, for which the kernel ignores
	// RLIMIT_NPROC.
	root bool
	// pidsErr is why no pids cgroup can bound the server's processes, or
	// nil (only asked as root).
	pidsErr error
	// pidsBase is the folder of the plugin's own pids cgroup, under which
	// the server's is made (when pidsErr is nil).
	pidsBase string
	// netnsErr is why the server cannot get a network namespace of its
	// own, or nil (only asked for network: hosts).
	netnsErr error
}

// decision is what will be applied, and what cannot be.
type decision struct {
	landlock bool
	// landlockNet: TCP connect/bind are handled by Landlock.
	landlockNet bool
	seccomp     bool
	netns       bool
	nproc       bool
	cgroup      bool
	// gaps are what was asked for and cannot be enforced here.
	gaps []string
	// notes are hardening this kernel lacks that was not asked for as
	// such; they are shown with the mechanisms.
	notes []string
}

// decide works out how to enforce sb with what k offers.
func decide(sb *transport.Sandbox, k kernel) decision {
	var d decision
	gap := func(format string, args ...any) { d.gaps = append(d.gaps, fmt.Sprintf(format, args...)) }
	mode := networkMode(sb)
	if !k.linux {
		gap("files: read-only and deny_read need Linux (Landlock)")
		if mode != transport.NetworkAll {
			gap("network %s: needs Linux (Landlock and seccomp)", mode)
		}
		if l := sb.Limits; l != (transport.Limits{}) {
			gap("limits: need Linux")
		}
		return d
	}
	d.landlock = k.landlockABI > 0
	d.seccomp = k.seccompErr == nil
	if !d.landlock {
		gap("files: Landlock is unavailable in this kernel (%v), so nothing can be made read-only or unreadable", k.landlockErr)
	} else {
		if k.landlockABI < launcher.ABITruncate {
			gap("files: Landlock ABI %d cannot stop the truncation of read-only files (needs ABI %d, Linux 6.2)", k.landlockABI, launcher.ABITruncate)
		}
		if k.landlockABI < launcher.ABIIoctl {
			d.notes = append(d.notes, "device ioctls not restricted (Landlock ABI < 5)")
		}
		if k.landlockABI < launcher.ABIScope {
			d.notes = append(d.notes, "signals to other processes not scoped (Landlock ABI < 6)")
		}
	}
	if !d.seccomp {
		d.notes = append(d.notes, fmt.Sprintf("no seccomp filter (%v)", k.seccompErr))
	}
	switch mode {
	case transport.NetworkNone:
		d.landlockNet = d.landlock && k.landlockABI >= launcher.ABINet
		if !d.seccomp {
			gap("network none: seccomp is unavailable (%v), so UDP, DNS and raw sockets cannot be blocked", k.seccompErr)
		}
		if !d.landlock || k.landlockABI < launcher.ABIScope {
			gap("network none: abstract Unix sockets of other programs cannot be blocked (needs Landlock ABI %d, Linux 6.12)", launcher.ABIScope)
		}
	case transport.NetworkHosts:
		d.landlockNet = d.landlock && k.landlockABI >= launcher.ABINet
		d.netns = k.netnsErr == nil
		if !d.seccomp {
			gap("network hosts: seccomp is unavailable (%v), so UDP, DNS and raw sockets cannot be blocked", k.seccompErr)
		}
		if !d.netns && !d.landlockNet {
			gap("network hosts: neither a network namespace (%v) nor Landlock TCP rules (needs ABI %d, Linux 6.7) can keep the server to the proxy", k.netnsErr, launcher.ABINet)
		}
		if !d.netns && (!d.landlock || k.landlockABI < launcher.ABIScope) {
			gap("network hosts: abstract Unix sockets of other programs cannot be blocked (needs Landlock ABI %d, Linux 6.12, or a network namespace)", launcher.ABIScope)
		}
	}
	if sb.Limits.Processes > 0 {
		if k.root {
			if k.pidsErr != nil {
				gap("limits.processes: the server would run as root, for which the kernel ignores RLIMIT_NPROC, and no pids cgroup can be made (%v)", k.pidsErr)
			} else {
				d.cgroup = true
			}
		} else {
			d.nproc = true
		}
	}
	return d
}

// networkMode is sb's network mode, NetworkAll when empty.
func networkMode(sb *transport.Sandbox) string {
	if sb.Network.Mode == "" {
		return transport.NetworkAll
	}
	return sb.Network.Mode
}

// checkSandbox refuses a Sandbox the plugin cannot even read.
func checkSandbox(server string, sb *transport.Sandbox) error {
	switch networkMode(sb) {
	case transport.NetworkAll, transport.NetworkNone:
	case transport.NetworkHosts:
		for _, h := range sb.Network.Hosts {
			if _, err := proxy.ParsePattern(h); err != nil {
				return sdk.NewError(sdk.CodeConfig, "sandbox of server %q: network host %q: %v; fix sandbox.network in config.yaml", server, clip(h, 80), err)
			}
		}
	default:
		return sdk.NewError(sdk.CodeConfig, "sandbox of server %q: unknown network mode %q; use all, none or a list of host names", server, clip(sb.Network.Mode, 40))
	}
	return nil
}

// refusal is the error for a sandbox this kernel cannot enforce.
func refusal(server string, gaps []string) error {
	return sdk.NewError(sdk.CodeSandbox, "the sandbox of server %q cannot be enforced here: %s; set sandbox: {enforce: false} in config.yaml to run it with what this kernel can enforce",
		server, strings.Join(gaps, "; "))
}

// report describes what is in force, in short lines.
func report(sb *transport.Sandbox, d decision, abi int, rules []launcher.Rule, writable, denied int, netns bool, proxyPort int) *transport.SandboxReport {
	r := &transport.SandboxReport{Gaps: slices.Clone(d.gaps)}
	if d.landlock {
		files := "files: read-only except a private temp folder"
		if sb.InstallDir != "" {
			files = "files: read-only except the install folder, a private temp folder"
		}
		if writable > 0 {
			files += fmt.Sprintf(" and %d writable path%s", writable, plural(writable))
		}
		r.Applied = append(r.Applied, files)
		if denied > 0 {
			r.Applied = append(r.Applied, fmt.Sprintf("never readable: %d path%s (%d Landlock rules in all)", denied, plural(denied), len(rules)))
		}
	}
	switch networkMode(sb) {
	case transport.NetworkAll:
		r.Applied = append(r.Applied, "network: all (untouched)")
	case transport.NetworkNone:
		var how []string
		if d.landlockNet {
			how = append(how, "Landlock TCP rules")
		}
		if d.seccomp {
			how = append(how, "seccomp: Unix and netlink sockets only")
		}
		if len(how) > 0 {
			r.Applied = append(r.Applied, "network: none ("+strings.Join(how, ", ")+")")
		}
	case transport.NetworkHosts:
		line := "network: only " + strings.Join(sb.Network.Hosts, ", ") + " through the plugin's filtering proxy"
		switch {
		case netns:
			line += fmt.Sprintf(", from a network namespace of its own (127.0.0.1:%d there)", proxyPort)
		case d.landlockNet:
			line += fmt.Sprintf(" at 127.0.0.1:%d (Landlock allows TCP to port %d only, on any address)", proxyPort, proxyPort)
		}
		r.Applied = append(r.Applied, line)
	}
	if l := limitsLine(sb.Limits, d); l != "" {
		r.Applied = append(r.Applied, l)
	}
	var mech []string
	if d.landlock {
		mech = append(mech, fmt.Sprintf("Landlock ABI %d", abi))
	}
	if d.seccomp {
		mech = append(mech, "seccomp")
	}
	if len(mech) > 0 {
		mech = append(mech, "no_new_privs", "no capabilities")
	}
	mech = append(mech, d.notes...)
	if len(mech) > 0 {
		r.Applied = append(r.Applied, "mechanisms: "+strings.Join(mech, ", "))
	}
	return r
}

// limitsLine is the limits part of the report, "" when none is set.
func limitsLine(l transport.Limits, d decision) string {
	var parts []string
	if l.MemoryBytes > 0 {
		parts = append(parts, "memory "+sizeText(l.MemoryBytes)+" per process (RLIMIT_DATA)")
	}
	if l.CPUSeconds > 0 {
		parts = append(parts, fmt.Sprintf("cpu %ds per process", l.CPUSeconds))
	}
	if l.OpenFiles > 0 {
		parts = append(parts, fmt.Sprintf("open files %d per process", l.OpenFiles))
	}
	switch {
	case l.Processes > 0 && d.cgroup:
		parts = append(parts, fmt.Sprintf("processes %d in all (pids cgroup)", l.Processes))
	case l.Processes > 0 && d.nproc:
		parts = append(parts, fmt.Sprintf("processes %d (RLIMIT_NPROC: counts every process and thread of this user)", l.Processes))
	}
	if len(parts) == 0 {
		return ""
	}
	return "limits: " + strings.Join(parts, ", ")
}

func sizeText(n uint64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dG", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	}
	return strconv.FormatUint(n, 10) + " bytes"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// clip bounds a string from config or a server before it is shown.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// startPaths resolves the sandbox's paths for this start, right before its
// rules are built (a server may have replaced a path it can write with a
// symbolic link since its last start), and refuses a writable path that
// resolves where the server must not write (sandboxpath.Check) with an
// sdk.CodeSandbox error naming the path and what it resolves to. No
// enforce: false overrides it: nothing in the kernel is missing, the entry
// asks for what the sandbox exists to prevent.
func startPaths(server string, sb *transport.Sandbox) (*sandboxpath.Plan, error) {
	plan, err := sandboxpath.Check(sb.InstallDir, sb.Writable, sb.DenyRead)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeSandbox, "sandbox of server %q refused: %v", server, err)
	}
	return plan, nil
}

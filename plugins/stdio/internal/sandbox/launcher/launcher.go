// Package launcher is the contract between the stdio plugin and its
// launcher, hermes-stdio-launcher (plugins/stdio/cmd/hermes-stdio-launcher):
// a small binary of its own, shipped beside the plugin, that applies a Plan
// to itself (pid namespace, network namespace loopback, resource limits, no
// capabilities, no_new_privs, Landlock, seccomp), reports on its status
// socket and executes the server, or stays as the init of the server's pid
// namespace. The package holds what both sides share: the Plan and its
// parts, the status message, their binary encoding, the launcher's name,
// modes and descriptors, the Landlock rights and ServerEnv.
//
// The launcher links this package, so it imports nothing but the standard
// library's errors (no fmt, no encoding/json, no strconv): every package it
// imports is code paged into every launcher, which stays resident as the
// init of its server's pid namespace (TestImportsStayLeaf in the launcher's
// command holds the whole binary to its allow-list).
package launcher

import "errors"

// Binary is the launcher's file name; the plugin finds it in its own
// executable's folder.
const Binary = "hermes-stdio-launcher"

// The plugin starts the launcher with one argument, the mode, and an
// environment of its own (none of the server's). The launcher reads its
// Plan, in the encoding of Plan.MarshalBinary, from PlanFD and reports on
// StatusFD (a SOCK_SEQPACKET socket that closes on a successful execve),
// one Status per message.
const (
	// ModeRun starts a server; ModeNetnsProbe only checks that a network
	// namespace can be set up (loopback up) and exits 0.
	ModeRun        = "run"
	ModeNetnsProbe = "netns-probe"
	PlanFD         = 3
	StatusFD       = 4
	// MaxPlanBytes bounds the plan the launcher reads.
	MaxPlanBytes = 16 << 20
	// MaxStatusBytes bounds one status message.
	MaxStatusBytes = 64 << 10
)

// Proceed is the one message the plugin sends the launcher (ModeRun), on
// StatusFD, once what the server must start inside is in place: the pids
// cgroup the plugin moved the launcher into. The launcher applies its plan
// meanwhile, and starts the server only once it has read Proceed; the
// plugin's end closing before that (it failed, or gave up) stops it. So
// the kernel's wait for the move overlaps the launcher's own work instead
// of preceding it.
const Proceed = "proceed"

// Status is one message from the launcher to the plugin.
type Status struct {
	// Listener: the message carries the listening socket of the proxy
	// inside the launcher's network namespace, on this port.
	Listener int
	// Step and Error: what failed; the launcher exits after it.
	Step  string
	Error string
	// Started: the launcher, the init of the server's pid namespace, has
	// executed the server (a launcher that executes the server itself
	// says so by its status socket closing instead).
	Started bool
	// Exit is the server's wait status (as wait4 gives it), sent by the
	// init just before it exits with the server.
	Exit *uint32
}

// Network modes of a Plan: the values of transport.NetworkAll,
// NetworkNone and NetworkHosts (the sdk's transport package is not
// imported here; a test in package sandbox keeps them equal).
const (
	NetworkAll   = "all"
	NetworkNone  = "none"
	NetworkHosts = "hosts"
)

// Plan is what the launcher applies before it executes the server. The
// plugin builds it and sends it to the launcher, encoded by MarshalBinary,
// over an inherited pipe; it never travels through the environment.
type Plan struct {
	// Path is the server's executable, Argv its arguments (Argv[0] is the
	// command as configured), Env its whole environment (without the
	// proxy variables, which the launcher adds once the port is known).
	Path string
	Argv []string
	Env  []string
	// ABI is the Landlock ABI to restrict with; 0 for no Landlock.
	ABI   int
	Rules []Rule
	// Net is NetworkAll, NetworkNone or NetworkHosts.
	Net string
	// ProxyPort is the port of the filtering proxy (network: hosts), the
	// only TCP port the server may connect to.
	ProxyPort int
	// NetNS: the launcher runs in a network namespace of its own; it
	// brings its loopback up and hands the plugin a listener there, which
	// the plugin hands its filtering proxy.
	NetNS bool
	// Seccomp are the seccomp filters to install, in order, as the plugin
	// assembled them (the launcher only loads them); none for no seccomp.
	Seccomp []Filter
	// Limits are set with setrlimit; Processes only when NProc is set (a
	// pids cgroup bounds them otherwise).
	Limits Limits
	NProc  bool
	// Bare: no sandbox at all (no limits, capabilities kept, no
	// no_new_privs, Landlock or seccomp); the launcher is there only to
	// be the init of the server's pid namespace (Init).
	Bare bool
	// Init: the launcher was started as the first process of a pid (and
	// mount) namespace of its own. It mounts that namespace's /proc,
	// starts the server as its child instead of becoming it, reaps
	// whatever is handed to it, passes the signals it gets on to the
	// server, and exits with the server, when the kernel kills every
	// process left in the namespace. It dies with the plugin (parent-death
	// signal), and so does everything in the namespace.
	Init bool
}

// Filter is one classic BPF program for seccomp(SECCOMP_SET_MODE_FILTER).
type Filter []Instruction

// Instruction is one struct sock_filter.
type Instruction struct {
	Code   uint16
	Jt, Jf uint8
	K      uint32
}

// Limits are the resource limits of a Plan: transport.Limits field for
// field (the plugin converts one to the other).
type Limits struct {
	MemoryBytes uint64
	CPUSeconds  uint64
	OpenFiles   uint64
	Processes   uint64
}

// Rule is one Landlock rule: access granted beneath Path.
type Rule struct {
	Path   string
	Access uint64
	// NoFollow: the path was found by listing a folder, and a symbolic
	// link put there since must not carry the rule to its target.
	NoFollow bool
	// Strict: Path was resolved when the plan was made (one of the
	// server's own folders): it is opened without following any symbolic
	// link on the way, and must still be the object Dev and Ino name; else
	// the start fails (a link swapped in since must not move the rule).
	Strict bool
	Dev    uint64
	Ino    uint64
}

// Landlock filesystem access rights (linux/landlock.h), defined here so the
// rule building is the same, and testable, on every platform.
const (
	accessExecute    = 1 << 0
	accessWriteFile  = 1 << 1
	accessReadFile   = 1 << 2
	accessReadDir    = 1 << 3
	accessRemoveDir  = 1 << 4
	accessRemoveFile = 1 << 5
	accessMakeChar   = 1 << 6
	accessMakeDir    = 1 << 7
	accessMakeReg    = 1 << 8
	accessMakeSock   = 1 << 9
	accessMakeFifo   = 1 << 10
	accessMakeBlock  = 1 << 11
	accessMakeSym    = 1 << 12
	accessRefer      = 1 << 13 // ABI 2
	accessTruncate   = 1 << 14 // ABI 3
	accessIoctlDev   = 1 << 15 // ABI 5
)

// Rights a Rule grants.
const (
	// ReadOnly lets a tree be read, listed and executed.
	ReadOnly = accessExecute | accessReadFile | accessReadDir
	// ReadWrite lets a tree be changed in every way as well.
	ReadWrite = ReadOnly | accessWriteFile | accessTruncate | accessRemoveDir | accessRemoveFile |
		accessMakeChar | accessMakeDir | accessMakeReg | accessMakeSock | accessMakeFifo |
		accessMakeBlock | accessMakeSym | accessRefer
	// DevNull is what /dev/null needs: shells redirect into it.
	DevNull = accessReadFile | accessWriteFile | accessTruncate
	// FileRights are the only rights a rule on something other than a
	// folder may carry (the kernel answers EINVAL otherwise).
	FileRights = accessExecute | accessWriteFile | accessReadFile | accessTruncate | accessIoctlDev
)

// Landlock ABI versions that add what the sandbox relies on.
const (
	ABITruncate = 3 // truncate(2) and O_TRUNC are handled
	ABINet      = 4 // TCP bind and connect rules
	ABIIoctl    = 5 // ioctl on devices (a terminal's TIOCSTI) is handled
	ABIScope    = 6 // abstract Unix sockets and signals are scoped
)

// HandledFS returns the filesystem rights Landlock ABI abi knows: every
// one of them is denied unless a rule grants it.
func HandledFS(abi int) uint64 {
	h := uint64(accessMakeSym<<1 - 1) // ABI 1: execute .. make_sym
	if abi >= 2 {
		h |= accessRefer
	}
	if abi >= 3 {
		h |= accessTruncate
	}
	if abi >= 5 {
		h |= accessIoctlDev
	}
	return h
}

// proxyVars are the variables that point a server's HTTP clients at the
// filtering proxy; noProxyVars are cleared so nothing bypasses it.
var (
	proxyVars   = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}
	noProxyVars = []string{"NO_PROXY", "no_proxy"}
	tempVars    = []string{"TMPDIR", "TMP", "TEMP"}
)

// ServerEnv is the server's environment: env, with the private temp folder
// tmp (when not "") as TMPDIR, TMP and TEMP and, with proxyPort, the proxy
// as every HTTP(S)_PROXY variable and no NO_PROXY; each variable set here
// replaces what env had. The plugin sets the temp folder, the launcher the
// proxy (it learns the port in its network namespace).
func ServerEnv(env []string, tmp string, proxyPort int) []string {
	drop := func(kv string) bool {
		if tmp != "" && named(kv, tempVars) {
			return true
		}
		return proxyPort > 0 && (named(kv, proxyVars) || named(kv, noProxyVars))
	}
	out := make([]string, 0, len(env)+len(tempVars)+len(proxyVars))
	for _, kv := range env {
		if !drop(kv) {
			out = append(out, kv)
		}
	}
	if tmp != "" {
		for _, k := range tempVars {
			out = append(out, k+"="+tmp)
		}
	}
	if proxyPort > 0 {
		// An IPv4 literal needs no brackets.
		u := "http://127.0.0.1:" + FormatUint(uint64(proxyPort))
		for _, k := range proxyVars {
			out = append(out, k+"="+u)
		}
	}
	return out
}

// named reports whether the variable kv ("NAME=value") has one of names.
func named(kv string, names []string) bool {
	for _, n := range names {
		if len(kv) > len(n) && kv[len(n)] == '=' && kv[:len(n)] == n {
			return true
		}
		if kv == n {
			return true
		}
	}
	return false
}

// FormatUint formats n in decimal, for this package and the launcher
// binary, which link no strconv.
func FormatUint(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// errPlan is what a plan that does not decode is wrapped in.
var errPlan = errors.New("malformed sandbox plan")

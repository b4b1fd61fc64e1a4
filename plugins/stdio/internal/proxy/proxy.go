// Package proxy is the contract between the stdio plugin and its filtering
// proxy, hermes-stdio-proxy (plugins/stdio/cmd/hermes-stdio-proxy): a small
// binary of its own, shipped beside the plugin, that the plugin starts
// outside the sandbox for a sandboxed server whose network is a list of
// hosts, and kills with that server. The package holds what both sides
// share: the allow-list of sandbox.network (its patterns, how a target is
// split and matched), the proxy's name, arguments and descriptors, and its
// one message to the plugin. It links no HTTP code: the plugin checks a
// server's hosts list with it, and only the proxy serves HTTP (net/http's
// server and httputil are about 1.5 MB of code, which every plugin process
// paged in while the proxy ran inside it).
package proxy

import (
	"errors"
	"strings"
)

// Binary is the proxy's file name; the plugin finds it in its own
// executable's folder.
const Binary = "hermes-stdio-proxy"

// The plugin starts the proxy with the arguments Args makes, an empty
// environment (it connects directly, and needs nothing of the plugin's),
// the plugin's log as its stderr (hclog JSON lines, which the host reads
// as the plugin's own) and two descriptors.
const (
	// ControlFD is a SOCK_SEQPACKET socket to the plugin. The proxy sends
	// one message on it for each target it turned away because no entry
	// of its allow-list names it: the target, "host:port" as SplitTarget
	// read it, at most MaxRefused distinct ones, each sent before the
	// client gets its 403. It exits when the plugin's end closes (the
	// plugin closed it, or died).
	ControlFD = 3
	// ListenerFD is the listening TCP socket to serve: on the loopback of
	// the server's network namespace (the launcher made it there), or on
	// the plugin's loopback.
	ListenerFD = 4
	// MaxRefused bounds the distinct targets the proxy reports.
	MaxRefused = 8
	// MaxMessageBytes bounds one message on ControlFD.
	MaxMessageBytes = 512
)

// argsVersion begins the arguments: a proxy of another build than the
// plugin's refuses them.
const argsVersion = "hermes-stdio-proxy/1"

// Args are the proxy's arguments (after its name): the name and level of
// its logger (the plugin's logger's, so that its lines read as the
// server's; the level as hclog names it, "off" for none) and the entries
// of the allow-list as configured.
func Args(logName, logLevel string, hosts []string) []string {
	return append([]string{argsVersion, logName, logLevel}, hosts...)
}

// ParseArgs reads the arguments Args made.
func ParseArgs(args []string) (logName, logLevel string, hosts []string, err error) {
	if len(args) < 3 || args[0] != argsVersion {
		return "", "", nil, errors.New("the stdio plugin and " + Binary + " are of different builds (arguments " + clip(strings.Join(args, " "), 80) + "): reinstall hermes")
	}
	return args[1], args[2], args[3:], nil
}

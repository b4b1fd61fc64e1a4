package main

import (
	"errors"
	"net"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run serves until the plugin's end of the control socket closes; it
// returns the exit status.
func run(args []string) int {
	ctl, err := controlConn()
	if err != nil {
		os.Stderr.WriteString(proxy.Binary + " is started by the stdio plugin (hermes-transport-stdio) for a sandboxed server with a hosts list; it does nothing by itself\n")
		return 2
	}
	name, level, hosts, err := proxy.ParseArgs(args)
	lv := hclog.LevelFromString(level)
	switch {
	case err != nil:
		lv = hclog.Error // said whatever the level
	case lv == hclog.NoLevel:
		lv = hclog.Off
	}
	log := hclog.New(&hclog.LoggerOptions{Name: name, Level: lv, Output: os.Stderr, JSONFormat: true})
	if err != nil {
		log.Error("cannot start the network proxy", "error", err)
		return 2
	}
	allow, err := proxy.NewAllowList(hosts)
	if err != nil {
		log.Error("cannot start the network proxy", "error", err)
		return 2
	}
	lf := os.NewFile(proxy.ListenerFD, "proxy-listener")
	ln, err := net.FileListener(lf)
	lf.Close()
	if err != nil {
		log.Error("cannot start the network proxy: no listening socket", "error", err)
		return 2
	}
	p := New(allow, log, func(target string) {
		_, _ = ctl.Write([]byte(target)) // a clean host:port, well under proxy.MaxMessageBytes
	})
	go func() { _ = p.Serve(ln) }()
	// The plugin writes nothing: a read returns when its end closes.
	var b [1]byte
	for {
		if _, err := ctl.Read(b[:]); err != nil {
			return 0
		}
	}
}

// controlConn is the control socket on proxy.ControlFD.
func controlConn() (net.Conn, error) {
	f := os.NewFile(proxy.ControlFD, "proxy-control")
	if f == nil {
		return nil, errors.New("no control socket")
	}
	defer f.Close()
	return net.FileConn(f)
}

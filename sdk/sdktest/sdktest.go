// Package sdktest helps plugin authors test a plugin the way the host runs
// it, with errors in a plugin author's terms:
//
//   - CheckTransport runs a built transport plugin binary (a separate
//     go-plugin process with the message socket the host passes) through the
//     whole contract against a reference MCP server (ServeReference, a small
//     raw JSON-RPC server over stdio).
//   - CheckAuth and CheckBridge run an auth or bridge plugin's Opener through
//     its contract in-process.
//   - CheckModel runs a model plugin's Opener through its contract
//     in-process, against an endpoint the test provides.
//   - TransportInProcess, AuthInProcess, BridgeInProcess and ModelInProcess
//     serve an Opener in the test's process and return the host's handle on
//     it (sdk/pluginhost), for unit tests without building a binary.
//
// It links neither mcp-go nor anything that pulls it in.
package sdktest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Plugin is a started transport plugin process.
type Plugin struct {
	// Handle opens connections through the plugin.
	Handle *pluginhost.Transport
	// Stream is the host's end of the message socket, for the first
	// connection (nil after Open used it).
	Stream net.Conn
	client *plugin.Client
}

// Start starts the transport plugin binary at path as the host does and
// completes the handshake. The plugin is killed when the test ends. Of the
// test's environment it passes PATH and sdk.KeepPagesEnv.
func Start(t testing.TB, path string) *Plugin {
	t.Helper()
	// Both ends close-on-exec, set under ForkLock (SOCK_CLOEXEC is not
	// on every unix).
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("message socket: %v", err)
	}
	hostFile := os.NewFile(uintptr(fds[0]), "host")
	child := os.NewFile(uintptr(fds[1]), "plugin")
	hostEnd, err := net.FileConn(hostFile)
	hostFile.Close()
	if err != nil {
		t.Fatalf("message socket: %v", err)
	}
	cmd := exec.Command(path)
	cmd.ExtraFiles = []*os.File{child}
	cmd.Env = []string{sdk.StreamFDEnv + "=3", "PATH=" + os.Getenv("PATH")}
	if v, ok := os.LookupEnv(sdk.KeepPagesEnv); ok {
		cmd.Env = append(cmd.Env, sdk.KeepPagesEnv+"="+v)
	}
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginhost.Handshake(sdk.KindTransport),
		VersionedPlugins: pluginhost.VersionedPlugins(map[string]plugin.Plugin{sdk.KindTransport: pluginhost.TransportPlugin{}}),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		SkipHostEnv:      true,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: hclog.DefaultOutput}),
	})
	t.Cleanup(c.Kill)
	proto, err := c.Client()
	child.Close()
	if err != nil {
		hostEnd.Close()
		t.Fatalf("start plugin %s: %v (is it a Hermes transport plugin built with this sdk, transport contract v%d?)", path, err, transport.ContractVersion)
	}
	raw, err := proto.Dispense(sdk.KindTransport)
	if err != nil {
		t.Fatalf("plugin %s serves no transport: %v (call transport.Serve in its main)", path, err)
	}
	h, ok := raw.(*pluginhost.Transport)
	if !ok {
		t.Fatalf("plugin %s dispensed %T, want a transport", path, raw)
	}
	return &Plugin{Handle: h, Stream: hostEnd, client: c}
}

// Open opens a connection through the plugin; the first Open uses the
// inherited message socket.
func (p *Plugin) Open(ctx context.Context, cfg transport.Config, opts pluginhost.TransportOptions) (*pluginhost.TransportConn, error) {
	if opts.Stream == nil {
		opts.Stream, p.Stream = p.Stream, nil
	}
	return p.Handle.Open(ctx, cfg, opts)
}

// Dial opens a connection through the plugin and returns it as a small
// JSON-RPC client (a Session), or the open error.
func (p *Plugin) Dial(ctx context.Context, cfg transport.Config) (*Session, error) {
	s := newSession()
	conn, err := p.Open(ctx, cfg, s.options())
	if err != nil {
		return nil, err
	}
	s.conn = conn
	return s, nil
}

// Exited reports whether the plugin process has exited.
func (p *Plugin) Exited() bool { return p.client.Exited() }

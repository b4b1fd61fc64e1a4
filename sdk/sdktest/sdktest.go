// Package sdktest helps plugin authors test a transport plugin binary the
// way the host runs it: a separate go-plugin process with the message socket
// the host passes, spoken to through the contract, with mcp-go's client on
// top (as the host does). CheckTransport runs a plugin through the whole
// contract against a reference MCP server and says what is wrong in terms a
// plugin author understands.
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
	"github.com/hermes-agent/hermes/sdk/mcpgo"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
)

// Plugin is a started plugin process.
type Plugin struct {
	// Handle opens connections through the plugin.
	Handle *transport.Handle
	// Stream is the host's end of the message socket, for the first
	// connection (nil after Dial used it).
	Stream net.Conn
	client *plugin.Client
}

// Start starts the transport plugin binary at path as the host does and
// completes the handshake. The plugin is killed when the test ends.
func Start(t testing.TB, path string) *Plugin {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
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
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.VersionedPlugins(map[string]plugin.Plugin{sdk.KindTransport: &transport.Plugin{}}),
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
		t.Fatalf("start plugin %s: %v (is it a Hermes plugin built with this sdk, contract v%d?)", path, err, sdk.ContractVersion)
	}
	raw, err := proto.Dispense(sdk.KindTransport)
	if err != nil {
		t.Fatalf("plugin %s serves no transport: %v (call transport.Serve in its main)", path, err)
	}
	h, ok := raw.(*transport.Handle)
	if !ok {
		t.Fatalf("plugin %s dispensed %T, want a transport", path, raw)
	}
	return &Plugin{Handle: h, Stream: hostEnd, client: c}
}

// Dial opens a connection through the plugin and returns it as an mcp-go
// transport (already connected) with the plugin connection, or the open
// error. The first Dial uses the inherited message socket.
func (p *Plugin) Dial(ctx context.Context, cfg transport.Config, opts mcpgo.DialOptions) (mcptransport.Interface, *transport.ClientConn, error) {
	if opts.Stream == nil {
		opts.Stream, p.Stream = p.Stream, nil
	}
	return mcpgo.Dial(ctx, p.Handle, cfg, opts)
}

// Exited reports whether the plugin process has exited.
func (p *Plugin) Exited() bool { return p.client.Exited() }

// DialTransport starts the plugin binary at path and opens a connection for
// cfg, failing the test on any error. Use the result with client.NewClient.
func DialTransport(t testing.TB, path string, cfg transport.Config, opts mcpgo.DialOptions) mcptransport.Interface {
	t.Helper()
	tr, _, err := Start(t, path).Dial(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("open a connection through %s: %v", path, err)
	}
	return tr
}

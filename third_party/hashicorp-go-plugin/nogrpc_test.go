// SPDX-License-Identifier: MPL-2.0

// This file is not upstream's: it tests what the copy without gRPC keeps
// (a net/rpc plugin process, its dispense, calls and MuxBroker streams)
// and what it refuses (a plugin announcing ProtocolGRPC). The plugin is
// this test binary, started again with nogrpcHelperEnv set.

package plugin

import (
	"errors"
	"net/rpc"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	hclog "github.com/hashicorp/go-hclog"
)

// nogrpcHelperEnv, when set, makes the test binary a plugin: "netrpc"
// serves echoPlugin, "grpc" prints a handshake line naming gRPC.
const nogrpcHelperEnv = "GO_PLUGIN_NOGRPC_HELPER"

var nogrpcHandshake = HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "GO_PLUGIN_NOGRPC_COOKIE",
	MagicCookieValue: "nogrpc",
}

func TestMain(m *testing.M) {
	switch os.Getenv(nogrpcHelperEnv) {
	case "":
		os.Exit(m.Run())
	case "netrpc":
		Serve(&ServeConfig{
			HandshakeConfig: nogrpcHandshake,
			Plugins:         PluginSet{"echo": echoPlugin{}},
		})
		os.Exit(0)
	case "grpc":
		// What a plugin built with upstream and serving gRPC prints: the
		// host must refuse it before dialling anything.
		os.Stdout.WriteString("1|1|unix|/nonexistent/plugin.sock|grpc|\n")
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop // until the host stops it (or kills it)
	}
	os.Exit(2)
}

// Echo is the plugin's net/rpc receiver.
type Echo struct{ broker *MuxBroker }

// Echo returns its argument.
func (Echo) Echo(in string, out *string) error {
	*out = in
	return nil
}

// Upper dials the host's broker stream id and asks the host's Upper
// receiver to upper-case "brokered", as a plugin calling back into its host
// over a stream the host accepts.
func (e Echo) Upper(id uint32, out *string) error {
	conn, err := e.broker.Dial(id)
	if err != nil {
		return err
	}
	c := rpc.NewClient(conn)
	defer func() { _ = c.Close() }()
	return c.Call("Plugin.Upper", "brokered", out)
}

// hostUpper is the receiver the host serves on a broker stream.
type hostUpper struct{}

// Upper upper-cases its argument.
func (hostUpper) Upper(in string, out *string) error {
	*out = strings.ToUpper(in)
	return nil
}

type echoPlugin struct{}

func (echoPlugin) Server(b *MuxBroker) (interface{}, error) { return Echo{broker: b}, nil }

func (echoPlugin) Client(b *MuxBroker, c *rpc.Client) (interface{}, error) {
	return &echoClient{broker: b, c: c}, nil
}

type echoClient struct {
	broker *MuxBroker
	c      *rpc.Client
}

func nogrpcClient(t *testing.T, mode string) *Client {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), nogrpcHelperEnv+"="+mode)
	c := NewClient(&ClientConfig{
		HandshakeConfig: nogrpcHandshake,
		Plugins:         PluginSet{"echo": echoPlugin{}},
		Cmd:             cmd,
		Logger:          hclog.NewNullLogger(),
	})
	t.Cleanup(c.Kill)
	return c
}

func TestNetRPCPluginProcess(t *testing.T) {
	c := nogrpcClient(t, "netrpc")
	proto, err := c.Client()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if got := c.Protocol(); got != ProtocolNetRPC {
		t.Fatalf("protocol %q, want %q", got, ProtocolNetRPC)
	}
	if err := proto.Ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	raw, err := proto.Dispense("echo")
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	ec := raw.(*echoClient)
	var out string
	if err := ec.c.Call("Plugin.Echo", "hi", &out); err != nil || out != "hi" {
		t.Fatalf("Echo: %q, %v; want \"hi\"", out, err)
	}
	id := ec.broker.NextId()
	go ec.broker.AcceptAndServe(id, hostUpper{})
	if err := ec.c.Call("Plugin.Upper", id, &out); err != nil || out != "BROKERED" {
		t.Fatalf("Upper through the broker: %q, %v; want \"BROKERED\"", out, err)
	}
}

func TestGRPCPluginRefused(t *testing.T) {
	c := nogrpcClient(t, "grpc")
	_, err := c.Start()
	if !errors.Is(err, ErrGRPCNotSupported) {
		t.Fatalf("start of a plugin announcing gRPC: %v, want ErrGRPCNotSupported", err)
	}
}

func TestGRPCReattachRefused(t *testing.T) {
	c := NewClient(&ClientConfig{
		HandshakeConfig: nogrpcHandshake,
		Plugins:         PluginSet{"echo": echoPlugin{}},
		Reattach: &ReattachConfig{
			Protocol:        ProtocolGRPC,
			ProtocolVersion: 1,
			Addr:            &testAddr{},
			Pid:             os.Getpid(),
		},
		Logger: hclog.NewNullLogger(),
	})
	if _, err := c.Client(); !errors.Is(err, ErrGRPCNotSupported) {
		t.Fatalf("reattach naming gRPC: %v, want ErrGRPCNotSupported", err)
	}
}

type testAddr struct{}

func (*testAddr) Network() string { return "unix" }
func (*testAddr) String() string  { return "/nonexistent/plugin.sock" }

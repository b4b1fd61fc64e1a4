package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
)

// The built binary serves the auth kind through go-plugin's real process
// client, started the way the host's supervisor starts it: no PATH in its
// environment (so the default one is used), and a message socket on fd 3
// that the command must not inherit.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hermes-auth-exec")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	d := script(t, `[ -e /dev/fd/3 ] && { echo 'fd 3 leaked' >&2; exit 7; }
env | grep -E '^(HERMES_PLUGIN|HERMES_PLUGIN_STREAM_FD|PLUGIN_[A-Z_]*|GOMAXPROCS)=' >&2 && exit 8
cat "$D/token"`)
	d.setToken(t, secret)

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	host, stream := os.NewFile(uintptr(fds[0]), "host"), os.NewFile(uintptr(fds[1]), "plugin")
	defer host.Close()
	cmd := exec.Command(bin)
	cmd.Env = []string{"HOME=" + os.Getenv("HOME"), sdk.StreamFDEnv + "=3", "GOMAXPROCS=1"}
	cmd.ExtraFiles = []*os.File{stream}

	logs := &lockedBuffer{}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginhost.Handshake(sdk.KindAuth),
		VersionedPlugins: pluginhost.VersionedPlugins(map[string]plugin.Plugin{sdk.KindAuth: pluginhost.AuthPlugin{}}),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		Cmd:              cmd,
		SkipHostEnv:      true,
		Logger:           hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug}),
	})
	defer client.Kill()
	proto, err := client.Client()
	stream.Close()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Dispense(sdk.KindAuth)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{"command": "sh", "args": []any{d.path("script")}, "lifetime": 600}
	ctx := context.Background()
	c, err := raw.(*pluginhost.Auth).Open(ctx, auth.Config{Server: "corp", Method: "exec", Settings: settings}, pluginhost.AuthOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h, err := c.Headers(ctx, auth.HeadersRequest{Method: "POST"})
		if err != nil || h.Headers["Authorization"] != "Bearer "+secret {
			t.Fatalf("Headers = %+v, %v", h, err)
		}
	}
	if n := d.runs(t); n != 1 {
		t.Errorf("the command ran %d times, want 1", n)
	}
	st, err := c.Status(ctx)
	if err != nil || !st.LoggedIn || st.Issuer != "sh "+d.path("script") {
		t.Errorf("Status = %+v, %v", st, err)
	}
	_, err = raw.(*pluginhost.Auth).Open(ctx, auth.Config{Server: "corp", Method: "exec"}, pluginhost.AuthOptions{})
	if sdk.ErrorCode(err) != sdk.CodeConfig {
		t.Errorf("Open without settings = %v", err)
	}
	client.Kill()
	if l := logs.String(); !strings.Contains(l, "ran command") || strings.Contains(l, secret) {
		t.Errorf("plugin log: want 'ran command' and no token:\n%s", l)
	}
}

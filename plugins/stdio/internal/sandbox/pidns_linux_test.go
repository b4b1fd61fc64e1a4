package sandbox

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// A launcher that the kernel would not start in a pid namespace (there is
// no probe ahead of the first start) makes its start fail with ErrNoPidNS,
// and every later start of the plugin goes without one: NewInit returns
// nil (the server is started directly) and New plans no init. Errors that
// say nothing about the namespace are left as they are.
func TestSpawnFailedRemembersNoPidNS(t *testing.T) {
	if noPidNS() != nil {
		t.Skipf("this kernel gives no pid namespace: %v", noPidNS())
	}
	t.Cleanup(func() { pidnsMu.Lock(); pidnsErr = nil; pidnsMu.Unlock() })
	l := &Launch{log: hclog.NewNullLogger(), plan: launcher.Plan{Init: true}}
	busy := &os.PathError{Op: "fork/exec", Path: "x", Err: syscall.EAGAIN}
	if err := l.SpawnFailed(busy); err != busy || noPidNS() != nil {
		t.Fatalf("EAGAIN: %v (remembered %v); want it as it is", err, noPidNS())
	}
	direct := &Launch{log: hclog.NewNullLogger()}
	refused := &os.PathError{Op: "fork/exec", Path: "x", Err: syscall.EPERM}
	if err := direct.SpawnFailed(refused); err != refused || noPidNS() != nil {
		t.Fatalf("a launcher without a namespace: %v; want the error as it is", err)
	}
	err := l.SpawnFailed(refused)
	if !errors.Is(err, ErrNoPidNS) || noPidNS() == nil {
		t.Fatalf("EPERM for an init: %v (remembered %v); want ErrNoPidNS", err, noPidNS())
	}
	cfg := transport.Config{Server: "s", Command: "true"}
	if li, err := NewInit(cfg, "/bin/true", nil, Options{}); li != nil || err != nil {
		t.Fatalf("NewInit after the refusal = %v, %v; want nil, nil", li, err)
	}
	cfg.Sandbox = &transport.Sandbox{Network: transport.Network{Mode: transport.NetworkAll}}
	ls, err := New(cfg, "/bin/true", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if ls.plan.Init {
		t.Fatal("New after the refusal plans an init")
	}
}

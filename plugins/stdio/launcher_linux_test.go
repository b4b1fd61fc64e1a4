package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// stackPrefixes are the import paths of what the plugin needs only to serve
// the host (gRPC, protobuf, go-plugin, the sdk): none of them may be
// initialized in a launcher, except launcherPrelude.
var stackPrefixes = []string{
	"google.golang.org/",
	"github.com/golang/protobuf/",
	"github.com/hashicorp/",
	"github.com/hermes-agent/hermes/sdk",
}

// launcherPrelude are the packages of that stack that are initialized
// before the launcher all the same: each needs only the standard library,
// one another, or packages with nothing to initialize, so each is ready
// before the last of the launcher's own imports is and, by Go's order, no
// import path can put the launcher ahead of them. Together they set a few
// variables (a random source, a hash of 8 samples of the executable).
var launcherPrelude = map[string]bool{
	"google.golang.org/grpc/internal/grpcrand":      true,
	"google.golang.org/grpc/internal/backoff":       true,
	"google.golang.org/protobuf/internal/detrand":   true,
	"google.golang.org/protobuf/internal/errors":    true,
	"google.golang.org/protobuf/encoding/protowire": true,
}

// The built plugin, started as a launcher, executes its server before the
// gRPC, protobuf and go-plugin packages are initialized: the launcher runs
// from package launcher's init, and GODEBUG=inittrace=1 lists every package
// initialized before it (the launcher's own init never returns).
func TestLauncherInitOrder(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hermes-transport-stdio")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to execute")
	}
	plan, err := json.Marshal(launcher.Plan{Path: truePath, Argv: []string{"true"}, Net: launcher.NetworkAll})
	if err != nil {
		t.Fatal(err)
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer planR.Close()
	defer planW.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	status, childStatus := os.NewFile(uintptr(fds[0]), "status"), os.NewFile(uintptr(fds[1]), "status")
	defer status.Close()
	defer childStatus.Close()

	cmd := exec.Command(bin)
	cmd.Args = []string{"hermes-sandbox-launcher"}
	cmd.Env = []string{launcher.EnvVar + "=" + launcher.ModeRun, "GODEBUG=inittrace=1"}
	cmd.ExtraFiles = []*os.File{planR, childStatus} // launcher.PlanFD, launcher.StatusFD
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	planR.Close()
	childStatus.Close()
	if _, err := planW.Write(plan); err != nil {
		t.Fatal(err)
	}
	planW.Close()
	// The status socket closes on execve; a message is a failure.
	buf := make([]byte, 64<<10)
	n, _ := status.Read(buf)
	werr := cmd.Wait()
	if n > 0 {
		t.Fatalf("launcher reported %s\nstderr:\n%s", buf[:n], stderr.String())
	}
	if werr != nil {
		t.Fatalf("launcher or true: %v\nstderr:\n%s", werr, stderr.String())
	}

	var inits []string
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	if !slices.Contains(inits, "runtime") {
		t.Fatalf("no init trace on stderr:\n%s", stderr.String())
	}
	for _, p := range inits {
		if launcherPrelude[p] {
			continue
		}
		for _, prefix := range stackPrefixes {
			if strings.HasPrefix(p, prefix) {
				t.Errorf("%s was initialized before the launcher executed the server (package launcher must import only what its doc allows, and main must import it)", p)
			}
		}
	}
	if t.Failed() {
		t.Logf("initialized before the server was executed: %s", strings.Join(inits, " "))
	}
}

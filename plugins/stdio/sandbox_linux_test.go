package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/proxy"
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// netProbeEnv makes this test binary a server that tries the network
// actions it lists ("name=dial:ADDR;name=udp:ADDR;name=get:URL") and
// prints one {"name":"ok"|"fail: why"} line for each.
const netProbeEnv = "HERMES_STDIO_TEST_NETPROBE"

// The sandbox launcher is this test binary too (the plugin re-executes
// itself): package launcher's init, which runs before this one, becomes it
// when asked.
func init() {
	netProbe()
}

func netProbe() {
	spec := os.Getenv(netProbeEnv)
	if spec == "" {
		return
	}
	for _, item := range strings.Split(spec, ";") {
		name, action, _ := strings.Cut(item, "=")
		kind, arg, _ := strings.Cut(action, ":")
		var err error
		switch kind {
		case "dial":
			var c net.Conn
			if c, err = net.DialTimeout("tcp", arg, 5*time.Second); err == nil {
				c.Close()
			}
		case "udp":
			var c net.Conn
			if c, err = net.Dial("udp", arg); err == nil {
				_, err = c.Write([]byte("x"))
				c.Close()
			}
		case "get":
			err = proxiedGet(arg)
		}
		res := "ok"
		if err != nil {
			res = "fail: " + err.Error()
		}
		b, _ := json.Marshal(map[string]string{name: res})
		fmt.Println(string(b))
	}
	os.Exit(0)
}

// proxiedGet fetches u through $HTTP_PROXY when set (for every host,
// loopback too, unlike net/http's default), directly otherwise.
func proxiedGet(u string) error {
	tr := &http.Transport{}
	if p := os.Getenv("HTTP_PROXY"); p != "" {
		pu, err := url.Parse(p)
		if err != nil {
			return err
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// runServer starts command under sb (nil: no sandbox) through the
// plugin's start, reads every {"name":"result"} line until it exits, and
// returns them with the connection.
func runServer(t *testing.T, sb *transport.Sandbox, env []string, command string, args ...string) (map[string]string, *conn) {
	t.Helper()
	cfg := transport.Config{Server: "sbx", Command: command, Args: args, Sandbox: sb,
		Env: append([]string{"PATH=" + os.Getenv("PATH")}, env...), StderrLog: filepath.Join(t.TempDir(), "stderr.log")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := start(ctx, cfg, &fakeHost{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("start %s: %v", command, err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	got := map[string]string{}
	for {
		line, err := c.Read(ctx)
		if err != nil {
			if !strings.Contains(err.Error(), "status 0") {
				t.Fatalf("server ended: %v (results so far %v)", err, got)
			}
			return got, c
		}
		m := map[string]string{}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("server wrote %q: %v", line, err)
		}
		for k, v := range m {
			got[k] = v
		}
	}
}

// fileChecks is a shell script that tries to read, list and write, and
// prints what it found; $H is the fake home, $HH the fake HERMES_HOME,
// $I the install folder, $W a writable path, $O a folder outside all.
const fileChecks = `
check() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then r=ok; else r=fail; fi; printf '{"%s":"%s"}\n' "$name" "$r"; }
put() { printf '{"%s":"%s"}\n' "$1" "$2"; }
check read_key cat "$H/.ssh/id_ed25519"
check list_ssh ls "$H/.ssh"
check read_env cat "$HH/.env"
check read_via_link cat "$H/sshlink/id_ed25519"
check read_readme cat "$H/README"
check read_etc cat /etc/passwd
check write_outside sh -c 'echo x > "$O/f"'
check write_home sh -c 'echo x > "$H/new"'
check truncate_readme sh -c ': > "$H/README"'
check write_install sh -c 'echo x > "$I/f"'
check write_writable sh -c 'echo x > "$W/f"'
check write_tmp sh -c 'echo x > "$TMPDIR/f"'
check devnull sh -c 'echo x > /dev/null'
put nofile "$(ulimit -n)"
put data "$(ulimit -d)"
put cpu "$(ulimit -t)"
put capeff "$(grep CapEff /proc/self/status | tr -d ' \t' | cut -d: -f2)"
put nnp "$(grep NoNewPrivs /proc/self/status | tr -d ' \t' | cut -d: -f2)"
put seccomp "$(grep '^Seccomp:' /proc/self/status | tr -d ' \t' | cut -d: -f2)"
put tmpdir "$TMPDIR"
put cgroup "$(grep pids /proc/self/cgroup | cut -d: -f3)"
`

// fileTree makes a fake home with a key and a fake HERMES_HOME with an
// install folder inside it, and returns the env the checks read.
func fileTree(t *testing.T) (env []string, install, writable string, deny []string) {
	root := t.TempDir()
	h := filepath.Join(root, "home")
	hh := filepath.Join(h, ".hermes")
	install = filepath.Join(hh, "mcp-installs", "sbx")
	writable = filepath.Join(root, "writable")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(h, ".ssh"), install, writable, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(h, ".ssh", "id_ed25519"): "PRIVATE KEY",
		filepath.Join(hh, ".env"):              "TOKEN=secret",
		filepath.Join(h, "README"):             "hello",
	} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".ssh", filepath.Join(h, "sshlink")); err != nil {
		t.Fatal(err)
	}
	env = []string{"H=" + h, "HH=" + hh, "I=" + install, "W=" + writable, "O=" + outside, "TMPDIR=" + t.TempDir()}
	return env, install, writable, []string{filepath.Join(h, ".ssh"), hh}
}

// Files: the keys and HERMES_HOME cannot be read or listed (not even
// through a symbolic link), nothing outside the server's folders can be
// written, its own folders can, even inside HERMES_HOME; the limits,
// capabilities, no_new_privs and seccomp are in force; the private temp
// folder is gone when the server is. Unsandboxed, the same script can do
// everything.
func TestSandboxFiles(t *testing.T) {
	env, install, writable, deny := fileTree(t)
	sb := &transport.Sandbox{Enforce: true, InstallDir: install, Writable: []string{writable}, DenyRead: deny,
		Network: transport.Network{Mode: transport.NetworkNone},
		Limits:  transport.Limits{MemoryBytes: 1 << 30, CPUSeconds: 60, OpenFiles: 100, Processes: 200}}
	free, _ := runServer(t, nil, env, "sh", "-c", fileChecks)
	got, c := runServer(t, sb, env, "sh", "-c", fileChecks)
	denied := []string{"read_key", "list_ssh", "read_env", "read_via_link", "write_outside", "write_home", "truncate_readme"}
	allowed := []string{"read_readme", "read_etc", "write_install", "write_writable", "write_tmp", "devnull"}
	for _, k := range denied {
		if free[k] != "ok" {
			t.Errorf("unsandboxed %s = %q; the check cannot fail the sandbox", k, free[k])
		}
		if got[k] != "fail" {
			t.Errorf("sandboxed %s = %q, want fail", k, got[k])
		}
	}
	for _, k := range allowed {
		if got[k] != "ok" {
			t.Errorf("sandboxed %s = %q, want ok", k, got[k])
		}
	}
	want := map[string]string{"nofile": "100", "data": strconv.Itoa(1 << 20), "cpu": "60", "capeff": "0000000000000000", "nnp": "1", "seccomp": "2"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("sandboxed %s = %q, want %q", k, got[k], v)
		}
		if free[k] == v && k != "nnp" {
			t.Logf("note: unsandboxed %s is %q too", k, v)
		}
	}
	if os.Getuid() == 0 && !strings.Contains(got["cgroup"], "hermes-sandbox-") {
		t.Errorf("root server's pids cgroup = %q, want one of the sandbox's", got["cgroup"])
	}
	tmp := c.sandbox.TempDir()
	if got["tmpdir"] != tmp || tmp == "" {
		t.Errorf("TMPDIR = %q, want the private %q", got["tmpdir"], tmp)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("private temp folder %s is still there after the server ended: %v", tmp, err)
	}
	if _, err := os.Stat(filepath.Join(install, "f")); err != nil {
		t.Errorf("what the server wrote to its install folder is gone: %v", err)
	}
	rep := c.Properties().Sandbox
	if rep == nil || len(rep.Gaps) != 0 || !strings.Contains(rep.String(), "Landlock ABI") || !strings.Contains(rep.String(), "never readable: 2 paths") {
		t.Errorf("report = %v", rep)
	}
}

// Network: with none, no TCP and no UDP; with hosts, only the allowed
// host, and only through the proxy, with and without a network namespace
// of its own. Unsandboxed, every attempt gets through.
func TestSandboxNetwork(t *testing.T) {
	service, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer service.Close()
	go func() {
		for {
			c, err := service.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	web := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hi") })}
	wl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = web.Serve(wl) }()
	defer web.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	svc, site := service.Addr().String(), wl.Addr().String()
	probe := []string{netProbeEnv + "=" + strings.Join([]string{
		"dial_service=dial:" + svc,
		"udp=udp:" + udp.LocalAddr().String(),
		"get_allowed=get:http://" + site + "/",
		"get_other=get:http://" + svc + "/",
	}, ";")}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	free, _ := runServer(t, nil, probe, self)
	for _, k := range []string{"dial_service", "udp", "get_allowed"} {
		if free[k] != "ok" {
			t.Fatalf("unsandboxed %s = %q; the check cannot fail the sandbox", k, free[k])
		}
	}
	for _, tc := range []struct {
		name      string
		mode      string
		noNetNS   bool
		wantAllow string
	}{
		{"none", transport.NetworkNone, false, "fail"},
		{"hosts in a namespace", transport.NetworkHosts, false, "ok"},
		{"hosts by port rule", transport.NetworkHosts, true, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxOptions = sandbox.Options{NoNetNS: tc.noNetNS}
			defer func() { sandboxOptions = sandbox.Options{} }()
			sb := &transport.Sandbox{Enforce: true, Network: transport.Network{Mode: tc.mode, Hosts: []string{site}}}
			got, c := runServer(t, sb, probe, self)
			for _, k := range []string{"dial_service", "udp", "get_other"} {
				if !strings.HasPrefix(got[k], "fail") {
					t.Errorf("%s = %q, want a failure", k, got[k])
				}
			}
			if !strings.HasPrefix(got["get_allowed"], tc.wantAllow) {
				t.Errorf("get_allowed = %q, want %s", got["get_allowed"], tc.wantAllow)
			}
			if tc.mode == transport.NetworkHosts && !strings.Contains(got["get_other"], "403") {
				t.Errorf("a host not allowed answered %q, want the proxy's 403", got["get_other"])
			}
			if tc.mode == transport.NetworkHosts {
				// The proxy, a process of its own, said what it
				// refused, and ended with the server.
				<-c.exited
				if want := "a connection to " + strconv.Quote(svc) + " (not in sandbox.network)"; !strings.Contains(c.exitErr.Error(), want) {
					t.Errorf("the server's end says %q, want it to name %s", c.exitErr, want)
				}
				if pids := proxies(t); len(pids) > 0 {
					t.Errorf("%s processes %v outlived their server", proxy.Binary, pids)
				}
			}
			t.Logf("report: %s", c.Properties().Sandbox)
		})
	}
}

// proxies returns the pids of this process's children that run the
// filtering proxy.
func proxies(t *testing.T) []int {
	t.Helper()
	var out []int
	for _, pid := range processTree()[os.Getpid()] {
		if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && filepath.Base(exe) == proxy.Binary {
			out = append(out, pid)
		}
	}
	return out
}

// A sandbox the kernel cannot enforce is refused with enforce set, saying
// what and how to override; without enforce the gap is reported.
func TestSandboxRefusal(t *testing.T) {
	many := t.TempDir()
	for i := range 40 {
		if err := os.Mkdir(filepath.Join(many, strconv.Itoa(i)), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	deny := filepath.Join(many, "0")
	// The folders above deny hold the entries of /, of the temp folder
	// (shared with everything else running), and the 39 beside it.
	sandboxOptions = sandbox.Options{MaxRules: 30}
	defer func() { sandboxOptions = sandbox.Options{} }()
	cfg := transport.Config{Server: "sbx", Command: "true", Env: []string{"PATH=" + os.Getenv("PATH")},
		Sandbox: &transport.Sandbox{Enforce: true, DenyRead: []string{deny}}}
	_, err := start(context.Background(), cfg, &fakeHost{}, hclog.NewNullLogger())
	if sdk.ErrorCode(err) != sdk.CodeSandbox || !strings.Contains(err.Error(), "set sandbox: {enforce: false} in config.yaml") || !strings.Contains(err.Error(), "deny_read: "+deny) {
		t.Fatalf("enforce with too many rules: %v", err)
	}
	cfg.Sandbox.Enforce = false
	c, err := start(context.Background(), cfg, &fakeHost{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rep := c.Properties().Sandbox
	if rep == nil || len(rep.Gaps) != 1 || !strings.Contains(rep.Gaps[0], deny) || strings.Contains(rep.String(), "never readable") {
		t.Fatalf("report without enforce = %v; want the deny_read gap and no never-readable line", rep)
	}
}

// A writable path swapped for a symbolic link between two starts (issue
// 22, item 2): with writable [W, W/data] the server replaces W/data, which
// it may write, with a link to $HERMES_HOME or to /. Its next start must
// not give it $HERMES_HOME: the start is refused with an error naming
// W/data and what it resolves to, and .env and config.yaml are untouched.
func TestSandboxWritableSwappedForLink(t *testing.T) {
	for _, to := range []string{"hermes_home", "root"} {
		t.Run(to, func(t *testing.T) {
			env, install, w, deny := fileTree(t)
			hh := filepath.Dir(filepath.Dir(install))
			data := filepath.Join(w, "data")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			cfgPath := filepath.Join(hh, "config.yaml")
			if err := os.WriteFile(cfgPath, []byte("mcp_servers: {}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			target := map[string]string{"hermes_home": hh, "root": "/"}[to]
			sb := &transport.Sandbox{Enforce: true, InstallDir: install, Writable: []string{w, data}, DenyRead: deny}
			// First start: the server makes the swap.
			swap := `rm -rf "$W/data" && ln -s "$T" "$W/data" && echo '{"swap":"ok"}'`
			got, _ := runServer(t, sb, append(env, "T="+target), "sh", "-c", swap)
			if got["swap"] != "ok" {
				t.Fatalf("the server could not replace its writable W/data with a link: %v", got)
			}
			if l, err := os.Readlink(data); err != nil || l != target {
				t.Fatalf("W/data after the first start: %q, %v", l, err)
			}
			// Second start: the same entry, W/data now a link.
			rel := ""
			if to == "root" {
				rel = hh // through / the way to $HERMES_HOME is its full path
			}
			steal := `
check() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then r=ok; else r=fail; fi; printf '{"%s":"%s"}\n' "$name" "$r"; }
check read_env cat "$W/data$R/.env"
check append_config sh -c 'echo "evil: 1" >> "$W/data$R/config.yaml"'`
			cfg := transport.Config{Server: "sbx", Command: "sh", Args: []string{"-c", steal}, Sandbox: sb,
				Env:       append([]string{"PATH=" + os.Getenv("PATH"), "R=" + rel}, env...),
				StderrLog: filepath.Join(t.TempDir(), "stderr.log")}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := start(ctx, cfg, &fakeHost{}, hclog.NewNullLogger())
			if err == nil {
				stolen := map[string]string{}
				for {
					line, rerr := c.Read(ctx)
					if rerr != nil {
						break
					}
					_ = json.Unmarshal(line, &stolen)
				}
				t.Fatalf("the start after the swap was not refused; the server got %v", stolen)
			}
			msg := err.Error()
			t.Logf("refused: %s", msg)
			resolved := map[string]string{"hermes_home": hh, "root": "/"}[to]
			if sdk.ErrorCode(err) != sdk.CodeSandbox || !strings.Contains(msg, data+" resolves to "+resolved) || strings.Contains(msg, "\n") {
				t.Errorf("refusal = %v (code %q); want a one-line sandbox error naming %s and %s", err, sdk.ErrorCode(err), data, resolved)
			}
			if b, _ := os.ReadFile(cfgPath); string(b) != "mcp_servers: {}\n" {
				t.Errorf("config.yaml changed: %q", b)
			}
		})
	}
}

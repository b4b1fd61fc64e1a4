package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// The rule of a writable path is pinned when the plan is made: a link
// swapped in for the folder after that (between the plugin's check and the
// launcher's rules) fails the start instead of carrying the rule to the
// link's target (the launcher is built beside this test binary).
func TestStrictRuleRefusesLinkSwappedAfterPlan(t *testing.T) {
	if abi, err := landlockABI(); abi < launcher.ABITruncate {
		t.Fatalf("this test needs Landlock ABI %d or later: %d, %v", launcher.ABITruncate, abi, err)
	}
	for _, how := range []string{"folder", "parent"} {
		t.Run(how, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			hh := filepath.Join(root, "hermes")
			w := filepath.Join(root, "p", "w")
			for _, d := range []string{hh, w} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(hh, ".env"), []byte("TOKEN=secret"), 0o600); err != nil {
				t.Fatal(err)
			}
			script := `cat "$W/.env"; echo evil >> "$W/config.yaml"`
			cfg := transport.Config{Server: "swap", Command: "sh", Args: []string{"-c", script},
				Env:     []string{"W=" + w, "PATH=" + os.Getenv("PATH")},
				Sandbox: &transport.Sandbox{Enforce: true, Writable: []string{w}, DenyRead: []string{hh}}}
			l, err := New(cfg, "/bin/sh", nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			// The swap, after the plan was made.
			switch how {
			case "folder": // w itself becomes a link
				if err := os.Rename(w, w+".old"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(hh, w); err != nil {
					t.Fatal(err)
				}
			case "parent": // a folder on the way becomes a link to one holding a w of its own
				p := filepath.Dir(w)
				if err := os.Rename(p, p+".old"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(root+"/q", p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(hh, root+"/q"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(".", hh+"/w"); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("/bin/sh")
			out, _ := os.Create(filepath.Join(root, "out"))
			defer out.Close()
			cmd.Stdout, cmd.Stderr = out, out
			if err := l.Wrap(cmd); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			serr := l.Started(ctx, cmd.Process.Pid)
			if serr != nil {
				_ = cmd.Process.Kill()
			}
			_ = cmd.Wait()
			b, _ := os.ReadFile(filepath.Join(root, "out"))
			if serr == nil || sdk.ErrorCode(serr) != sdk.CodeSandbox || !strings.Contains(serr.Error(), w) {
				t.Errorf("start after the swap: %v; want the launcher's refusal naming %s (server wrote %q)", serr, w, b)
			}
			if strings.Contains(string(b), "secret") {
				t.Errorf("the server read .env: %q", b)
			}
			if _, err := os.Stat(filepath.Join(hh, "config.yaml")); err == nil {
				t.Error("the server wrote into the link's target")
			}
		})
	}
}

// pinRules drops a strict rule whose path is gone and refuses one with a
// link on the way.
func TestPinRules(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(root+"/real", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", root+"/link"); err != nil {
		t.Fatal(err)
	}
	rules, err := pinRules("x", []launcher.Rule{{Path: root + "/real", Strict: true}, {Path: root + "/gone", Strict: true}, {Path: root + "/link"}})
	if err != nil || len(rules) != 2 || rules[0].Ino == 0 || rules[1].Path != root+"/link" {
		t.Fatalf("pinRules = %+v, %v", rules, err)
	}
	if _, err := pinRules("x", []launcher.Rule{{Path: root + "/link/", Strict: true}}); err == nil || sdk.ErrorCode(err) != sdk.CodeSandbox {
		t.Fatalf("a link on the way: %v", err)
	}
}

package supervisor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hermes-agent/hermes/host/supervisor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testwait"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func TestFindSearchOrderAndMissing(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	for _, d := range []string{first, second} {
		if err := os.WriteFile(filepath.Join(d, "hermes-transport-x"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HERMES_PLUGIN_PATH", first+string(os.PathListSeparator)+second)
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	got, err := s.Find(sdk.KindTransport, "x")
	if err != nil || got != filepath.Join(first, "hermes-transport-x") {
		t.Fatalf("Find = %q, %v; want the first folder's binary", got, err)
	}
	_, err = s.Find(sdk.KindTransport, "nope")
	if !errors.Is(err, supervisor.ErrNotFound) || !strings.Contains(err.Error(), first) {
		t.Fatalf("want ErrNotFound listing the searched folders, got %v", err)
	}
}

// A plugin runs in its own process group, with stdin on /dev/null and
// without the host's environment.
func TestLaunchIsolation(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	t.Setenv("HERMES_TEST_SECRET", "must-not-leak")
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	defer s.KillAll()
	p, err := s.Launch(stdioSpec("iso"))
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Fatalf("plugin pgid = %d (%v), want its own group %d", pgid, err, pid)
	}
	if target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0"); err != nil || target != "/dev/null" {
		t.Fatalf("plugin stdin = %q (%v), want /dev/null", target, err)
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "must-not-leak") {
		t.Fatal("host environment leaked into the plugin")
	}
	if !strings.Contains(string(env), sdk.StreamFDEnv+"=3") {
		t.Fatal("plugin was not told about its message socket")
	}
}

// Exited closes as soon as the plugin dies, whoever killed it; KillAll
// stops the rest.
func TestExitDetectionAndKillAll(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	a, err := s.Launch(stdioSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Launch(stdioSpec("b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(a.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Exited():
	case <-time.After(60 * time.Second):
		t.Fatal("Exited not closed after SIGKILL")
	}
	s.KillAll()
	select {
	case <-b.Exited():
	case <-time.After(60 * time.Second):
		t.Fatal("KillAll left a plugin running")
	}
	if _, err := s.Launch(stdioSpec("late")); err == nil {
		t.Fatal("Launch after KillAll succeeded")
	}
}

func stdioSpec(label string) supervisor.Spec {
	return supervisor.Spec{Kind: sdk.KindTransport, Name: "stdio", Label: label,
		Plugins: map[string]plugin.Plugin{sdk.KindTransport: pluginhost.TransportPlugin{}}}
}

// A plugin built for another contract version is refused at once, with
// both versions named and what to do.
func TestLaunchRefusesOtherContractVersion(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	defer s.KillAll()
	spec := stdioSpec("old")
	spec.Name = "oldcontract"
	_, err := s.Launch(spec)
	var ce *supervisor.ContractError
	if !errors.As(err, &ce) || ce.PluginVersion != 1 || ce.HostVersion != pluginhost.ContractVersion(sdk.KindTransport) {
		t.Fatalf("want a ContractError v1 vs v%d, got %v", pluginhost.ContractVersion(sdk.KindTransport), err)
	}
	for _, want := range []string{"contract v1", fmt.Sprintf("v%d", pluginhost.ContractVersion(sdk.KindTransport)), "rebuild"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A pinned sha256 is checked on the file that is executed: a mismatch is
// refused before anything runs, a match runs the very file that was hashed.
func TestLaunchChecksSHA256(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hermes-transport-stdio")
	data, err := os.ReadFile(testbin.Path(t, "hermes-transport-stdio"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	t.Setenv("HERMES_PLUGIN_PATH", t.TempDir()) // nothing there: only Dir has it
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	defer s.KillAll()

	spec := stdioSpec("pinned")
	spec.Dir = dir
	spec.SHA256 = strings.Repeat("0", 64)
	_, err = s.Launch(spec)
	var cse *supervisor.ChecksumError
	if !errors.As(err, &cse) || cse.Got != hex.EncodeToString(sum[:]) {
		t.Fatalf("want a ChecksumError with the real sum, got %v", err)
	}

	spec.SHA256 = strings.ToUpper(hex.EncodeToString(sum[:]))
	p, err := s.Launch(spec)
	if err != nil {
		t.Fatalf("a matching checksum was refused: %v", err)
	}
	if _, err := p.Dispense(); err != nil {
		t.Fatal(err)
	}
	// The process runs the inode that was hashed.
	var want, got syscall.Stat_t
	if err := syscall.Stat(bin, &want); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat("/proc/"+strconv.Itoa(p.Pid())+"/exe", &got); err != nil {
		t.Fatal(err)
	}
	if want.Ino != got.Ino || want.Dev != got.Dev {
		t.Fatal("the plugin process does not run the checked file")
	}
}

// socketDirs lists the plugin socket folders under tmp.
func socketDirs(t *testing.T, tmp string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(tmp, "hermes-plugins-*", "plugin-dir*"))
	return dirs
}

// A plugin's socket folder goes when the plugin exits, however it ends,
// and the supervisor's folder of them when it stops: killed and crashed
// plugins leave nothing in the temp folder (go-plugin removes the folder
// only when the host kills the plugin itself).
func TestSocketFoldersRemoved(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := supervisor.New(supervisor.Options{Home: t.TempDir()})
	a, err := s.Launch(stdioSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Launch(stdioSpec("b")); err != nil {
		t.Fatal(err)
	}
	if n := len(socketDirs(t, tmp)); n != 2 {
		t.Fatalf("%d socket folders for 2 plugins", n)
	}
	if err := syscall.Kill(a.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.Exited()
	testwait.For(t, 10*time.Second, "the crashed plugin's socket folder to go", func() bool { return len(socketDirs(t, tmp)) == 1 })
	s.KillAll()
	if left, _ := filepath.Glob(filepath.Join(tmp, "hermes-plugins-*")); len(left) != 0 {
		t.Fatalf("left after KillAll: %v", left)
	}
}

// A plugin hermes stops on purpose is not a crash: go-plugin does not log
// "[ERROR] plugin process exited" for it, and its exit reason says hermes
// stopped it instead of naming SIGKILL and the out-of-memory killer.
func TestStoppedPluginIsNoCrash(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	var logs syncBuffer
	s := supervisor.New(supervisor.Options{Home: t.TempDir(), Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	p, err := s.Launch(stdioSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	s.Interrupt() // SIGKILL to the group, no graceful quit
	select {
	case <-p.Exited():
	case <-time.After(60 * time.Second):
		t.Fatal("Interrupt left the plugin running")
	}
	if r := p.ExitReason(time.Minute); !strings.Contains(r, "was stopped by hermes") || strings.Contains(r, "memory") {
		t.Errorf("exit reason %q", r)
	}
	testwait.For(t, time.Minute, "go-plugin to log the plugin's exit", func() bool {
		return strings.Contains(logs.String(), "plugin process exited")
	})
	if strings.Contains(logs.String(), "[ERROR]") {
		t.Errorf("a plugin stopped on purpose was logged as an error:\n%s", logs.String())
	}
}

// A one-shot command detaches its plugins: each closes its connection and
// exits on its own, which is on purpose too. With hermes still running, as
// at the end of 'hermes -v mcp call' over HTTP, that end was logged as
// "[ERROR] plugin process exited ... signal: killed": the plugin's exit
// SIGKILLed its own process group, itself included. The sdk now spares the
// plugin on Linux; a plugin built on an older sdk, or on a system without
// /proc, still ends so, and hermes must not take that for a crash either.
func TestDetachedPluginIsNoCrash(t *testing.T) {
	t.Setenv("HERMES_PLUGIN_PATH", testbin.Dir(t))
	launch := func(t *testing.T, spec supervisor.Spec) (*supervisor.Plugin, *syncBuffer) {
		logs := &syncBuffer{}
		s := supervisor.New(supervisor.Options{Home: t.TempDir(), Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})})
		t.Cleanup(s.KillAll)
		p, err := s.Launch(spec)
		if err != nil {
			t.Fatal(err)
		}
		return p, logs
	}
	noError := func(t *testing.T, p *supervisor.Plugin, logs *syncBuffer) {
		t.Helper()
		select {
		case <-p.Exited():
		case <-time.After(60 * time.Second):
			t.Fatal("the detached plugin did not exit")
		}
		testwait.For(t, time.Minute, "go-plugin to log the plugin's exit", func() bool {
			return strings.Contains(logs.String(), "plugin process exited")
		})
		if strings.Contains(logs.String(), "[ERROR]") {
			t.Errorf("a plugin that finished on its own after a detach was logged as an error:\n%s", logs.String())
		}
		if r := p.ExitReason(time.Minute); strings.Contains(r, "memory") {
			t.Errorf("exit reason %q", r)
		}
	}

	// The HTTP plugin of a one-shot command, asked to finish on its own.
	t.Run("asked", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler()) // never reached: no preflight, no message
		defer srv.Close()
		spec := stdioSpec("a")
		spec.Name = "http"
		p, logs := launch(t, spec)
		raw, err := p.Dispense()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg := transport.Config{Server: "a", Transport: "http", URL: srv.URL + "/mcp", Extra: map[string]any{"skip_preflight": true}}
		conn, err := raw.(*pluginhost.Transport).Open(ctx, cfg, pluginhost.TransportOptions{Stream: p.Stream()})
		if err != nil {
			t.Fatal(err)
		}
		// What a session's Detach does: ask, then leave the plugin to it.
		if err := conn.Detach(ctx); err != nil {
			t.Fatal(err)
		}
		p.Detach()
		noError(t, p, logs)
	})

	// A detached plugin that ends by SIGKILL to its own group.
	t.Run("killed with its group", func(t *testing.T) {
		p, logs := launch(t, stdioSpec("b"))
		p.Detach()
		if err := syscall.Kill(-p.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		noError(t, p, logs)
	})

	// A plugin marked Ending that is gone before its detach's answer (the
	// SIGKILL to its group comes first) is no crash either.
	t.Run("gone before the answer", func(t *testing.T) {
		p, logs := launch(t, stdioSpec("c"))
		p.Ending()
		if err := syscall.Kill(-p.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		noError(t, p, logs)
	})
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

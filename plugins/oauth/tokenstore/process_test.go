package tokenstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The test binary plays a role when roleEnv is set (see playRole).
const (
	roleEnv  = "HERMES_TOKENSTORE_TEST_ROLE"
	dirEnv   = "HERMES_TOKENSTORE_TEST_DIR"
	spentEnv = "HERMES_TOKENSTORE_TEST_SPENT"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(playRole(role))
	}
	os.Exit(m.Run())
}

// playRole runs one role and returns the exit status:
//
//   - refresh: waits until its fd 3 (a pipe the test holds) reaches EOF, so
//     that every child starts at once; then runs RefreshLocked on the
//     server "srv" in $dirEnv with an fn that, when the token on disk has
//     expired, spends its refresh token (appends it as a line to $spentEnv)
//     and returns a new token; prints the access token it ends with.
func playRole(role string) int {
	if role != "refresh" {
		fmt.Fprintln(os.Stderr, "unknown role", role)
		return 2
	}
	s, err := New(os.Getenv(dirEnv), "srv")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	gate := os.NewFile(3, "gate")
	_, _ = io.Copy(io.Discard, gate)
	tok, err := s.RefreshLocked(context.Background(), func(cur *Token) (*Token, error) {
		if cur == nil {
			return nil, fmt.Errorf("no token on disk")
		}
		if !cur.Expired(time.Now(), 0) {
			return cur, nil // another process refreshed it
		}
		f, err := os.OpenFile(os.Getenv(spentEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintln(f, cur.RefreshToken)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return &Token{AccessToken: fmt.Sprintf("new-%d", os.Getpid()), RefreshToken: "r2", ExpiresIn: 3600}, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Print(tok.AccessToken)
	return 0
}

// TestRefreshLockedAcrossProcesses starts two processes that refresh one
// expired token at the same moment: the refresh token is spent once, and
// both end with the token the winner obtained.
func TestRefreshLockedAcrossProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ExtraFiles is not supported")
	}
	dir := t.TempDir()
	s := newStore(t, dir, "srv")
	if err := s.Save(&Token{AccessToken: "old", RefreshToken: "r1", ExpiresAt: 1}); err != nil {
		t.Fatal(err)
	}
	spent := dir + "/spent.log"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gateR, gateW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer gateW.Close()

	const n = 2
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	errs := make([]*bytes.Buffer, n)
	for i := range n {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), roleEnv+"=refresh", dirEnv+"="+dir, spentEnv+"="+spent)
		cmd.ExtraFiles = []*os.File{gateR}
		outs[i], errs[i] = new(bytes.Buffer), new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], errs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	gateR.Close()
	gateW.Close() // both children go
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v: %s", i, err, errs[i])
		}
	}

	log, err := os.ReadFile(spent)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(log)), "\n"); len(lines) != 1 || lines[0] != "r1" {
		t.Fatalf("refresh token spent %d times: %q", len(lines), log)
	}
	disk, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(disk.AccessToken, "new-") || disk.RefreshToken != "r2" {
		t.Fatalf("on disk: %+v", disk)
	}
	for i, out := range outs {
		if out.String() != disk.AccessToken {
			t.Fatalf("child %d ended with %q, the file holds %q", i, out, disk.AccessToken)
		}
	}
}

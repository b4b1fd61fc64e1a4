package model_test

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

func hi() model.Request { return model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}} }

// One plugin process makes every call of a client, concurrent ones too.
func TestOneProcessForManyCalls(t *testing.T) {
	srv := testmodel.New(t)
	srv.SetDefault(testmodel.Reply{Text: "again and again", ChunkSize: 3})
	c := client(t, settings(t, srv.URL))
	ctx := context.Background()
	if _, err := c.Chat(ctx, hi()); err != nil {
		t.Fatal(err)
	}
	pid := c.Pid()
	if pid == 0 {
		t.Fatal("no model plugin runs after a call")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got strings.Builder
			req := hi()
			req.OnText = func(d string) { got.WriteString(d) }
			res, err := c.Chat(ctx, req)
			if err != nil || res.Text != "again and again" || got.String() != res.Text {
				t.Errorf("call: %+v %v, streamed %q", res, err, got.String())
			}
		}()
	}
	wg.Wait()
	if c.Starts() != 1 || c.Pid() != pid {
		t.Fatalf("%d processes started (pid %d, then %d) for 9 calls", c.Starts(), pid, c.Pid())
	}
}

// A cancelled call ends in the plugin; the process stays for the next.
func TestCancelKeepsTheProcess(t *testing.T) {
	srv := testmodel.New(t)
	srv.Script(testmodel.Reply{Text: "first"}, testmodel.Reply{Text: "hanging", HangAfterText: true})
	srv.SetDefault(testmodel.Reply{Text: "after"})
	c := client(t, settings(t, srv.URL))
	if _, err := c.Chat(context.Background(), hi()); err != nil {
		t.Fatal(err)
	}
	pid := c.Pid()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := hi()
	var once sync.Once
	req.OnText = func(string) { once.Do(cancel) }
	if _, err := c.Chat(ctx, req); kindOf(t, err).Kind != model.KindTimeout {
		t.Fatalf("a cancelled call: %v", err)
	}
	res, err := c.Chat(context.Background(), hi())
	if err != nil || res.Text != "after" {
		t.Fatalf("the call after a cancel: %+v %v", res, err)
	}
	if c.Starts() != 1 || c.Pid() != pid {
		t.Fatalf("%d starts, pid %d then %d: a cancel must not end the process", c.Starts(), pid, c.Pid())
	}
}

// A plugin that died between calls is started again by the next call,
// which does not fail.
func TestRestartAfterTheProcessDied(t *testing.T) {
	srv := testmodel.New(t)
	c := client(t, settings(t, srv.URL))
	ctx := context.Background()
	if _, err := c.Chat(ctx, hi()); err != nil {
		t.Fatal(err)
	}
	p := c.Running()
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	res, err := c.Chat(ctx, hi())
	if err != nil || res.Text != "ok" {
		t.Fatalf("the call after the plugin died: %+v %v", res, err)
	}
	if c.Starts() != 2 || c.Pid() == p.Pid() {
		t.Fatalf("%d starts, pid %d (the dead one %d)", c.Starts(), c.Pid(), p.Pid())
	}
}

// A client without calls for IdleAfter lets its plugin go; the next call
// starts another.
func TestIdleStop(t *testing.T) {
	srv := testmodel.New(t)
	c := model.New(settings(t, srv.URL), model.Options{Supervisor: testmodel.Supervisor(t), IdleAfter: 1})
	t.Cleanup(c.Close)
	ctx := context.Background()
	if _, err := c.Chat(ctx, hi()); err != nil {
		t.Fatal(err)
	}
	// The idle timer was set when the call ended; the process it stops
	// was the one running then.
	if p := c.Running(); p != nil {
		<-p.Exited()
	}
	if _, err := c.Chat(ctx, hi()); err != nil {
		t.Fatal(err)
	}
	if c.Starts() != 2 {
		t.Fatalf("%d starts, want 2: one before the idle stop, one after", c.Starts())
	}
}

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk/rawio"
)

// The server's pipes are read and written with raw system calls (no
// runtime thread woken per message besides the one moving it), and a
// message larger than the pipe's buffer still crosses whole both ways.
func TestPipesAreRaw(t *testing.T) {
	c, _ := sh(t, `while read -r line; do printf '%s\n' "$line"; done`, 0)
	if !rawio.Raw(c.stdinW) {
		t.Errorf("the server's stdin is written through %T, not raw", c.stdinW)
	}
	if !rawio.Raw(rawio.Reader(c.stdout)) {
		t.Error("the server's stdout is not a polled non-blocking pipe, so it is not read raw")
	}
	msg := `{"big":"` + strings.Repeat("z", 1<<20) + `"}` // over the 64 KiB pipe buffer
	errc := make(chan error, 1)
	go func() { errc <- c.Write(context.Background(), []byte(msg)) }()
	got, err := c.Read(context.Background())
	if err != nil || string(got) != msg {
		t.Fatalf("echoed %d bytes, %v; want %d", len(got), err, len(msg))
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

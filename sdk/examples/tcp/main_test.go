package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// The example, built and run as its own process, passes the whole contract
// check against the sdk's reference server on a TCP socket.
func TestContract(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); sdktest.ServeReference(c, c) }()
		}
	}()
	bin := filepath.Join(t.TempDir(), "hermes-transport-tcp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sdktest.CheckTransport(t, bin, transport.Config{Server: "ref", Transport: "tcp", URL: "tcp://" + ln.Addr().String()})
}

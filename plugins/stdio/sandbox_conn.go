package main

import (
	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox"
	"github.com/hermes-agent/hermes/sdk/transport"
)

// Properties tells the host what the server runs under: the sandbox report
// when its entry asked for one (the host refuses a sandboxed server
// without a report).
func (c *conn) Properties() transport.Properties {
	return transport.Properties{Sandbox: c.report}
}

// sandboxOptions tune the sandboxes of this process's servers (tests
// turn the network namespace off to cover the fallback).
var sandboxOptions sandbox.Options

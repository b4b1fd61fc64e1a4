// Command hermes-testserver is the project's controllable MCP server for
// tests and benchmarks. Its flags are documented in package testserver.
package main

import (
	"os"

	"github.com/hermes-agent/hermes/internal/testserver"
)

func main() {
	os.Exit(testserver.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

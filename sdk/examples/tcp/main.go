// Command hermes-transport-tcp is an example transport plugin written
// against the sdk alone: it reaches an MCP server that speaks
// newline-delimited JSON-RPC on a TCP socket (url: tcp://host:port) and
// moves each message as the bytes it is. Build it as hermes-transport-tcp
// and put it on the plugin search path; a server entry with
// `transport: tcp` and `url: tcp://127.0.0.1:7000` then uses it.
package main

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"sync"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/transport"
)

func main() {
	transport.Serve(open)
}

// open connects to the server cfg.URL names.
func open(ctx context.Context, cfg transport.Config, _ transport.Host) (transport.Conn, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "tcp" || u.Host == "" {
		return nil, sdk.NewError(sdk.CodeConfig, "server %q: url must be tcp://host:port, not %q", cfg.Server, cfg.URL)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, sdk.NewError(sdk.CodeClosed, "server %q: connect to %s: %v", cfg.Server, u.Host, err)
	}
	in := bufio.NewScanner(c)
	max := int(cfg.MaxMessageBytes)
	if max <= 0 {
		max = transport.DefaultMaxMessageBytes
	}
	in.Buffer(make([]byte, 64<<10), max)
	return &conn{c: c, in: in}, nil
}

// conn is one connection: a line is a message.
type conn struct {
	c  net.Conn
	in *bufio.Scanner
	mu sync.Mutex // one Write at a time
}

func (c *conn) Read(ctx context.Context) ([]byte, error) {
	if c.in.Scan() {
		return c.in.Bytes(), nil
	}
	if err := c.in.Err(); err != nil {
		return nil, sdk.NewError(sdk.CodeClosed, "the connection to the server broke: %v", err)
	}
	return nil, sdk.NewError(sdk.CodeClosed, "the server closed the connection")
}

func (c *conn) Write(_ context.Context, msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.c.Write(append(append([]byte(nil), msg...), '\n')); err != nil {
		return sdk.NewError(sdk.CodeClosed, "write to the server: %v", err)
	}
	return nil
}

func (c *conn) Close() error      { return c.c.Close() }
func (c *conn) SessionID() string { return "" }

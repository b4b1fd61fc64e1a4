// Command hermes-sandboxprobe is a hostile MCP server for the sandbox tests:
// each tool tries one way out of a sandbox (read a secret, list a folder,
// write a file, connect, fetch through the proxy, resolve a name, make a
// socket through the 32-bit system call ABI, fork without bound, allocate
// without bound) and answers, as text, "ok: ..." when it got through and
// "failed: ..." when it was stopped. Forking and
// allocating run in a child process of its own (this binary again), so a
// failure there never takes the server down, and the forked children are
// gone before the tool answers. It belongs to tests only.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Child modes: this binary, started by the fork and allocate tools.
const (
	forkMode     = "--fork-children"
	allocMode    = "--allocate"
	socket32Mode = "--socket32"
)

// maxOut bounds what a tool returns of a file or a response.
const maxOut = 4096

func main() {
	if len(os.Args) == 3 {
		n, err := strconv.ParseInt(os.Args[2], 10, 64)
		if err == nil {
			switch os.Args[1] {
			case forkMode:
				forkChildren(int(n))
				return
			case allocMode:
				allocate(n)
				return
			case socket32Mode:
				fd, err := udpSocket32()
				if err != nil {
					fmt.Println("failed:", err)
					return
				}
				_ = syscall.Close(fd)
				fmt.Printf("ok: UDP socket %d through the i386 ABI\n", fd)
				return
			}
		}
	}
	s := server.NewMCPServer("hermes-sandboxprobe", "1.0.0", server.WithToolCapabilities(false))
	addTools(s)
	addDescriptorTools(s)
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "hermes-sandboxprobe:", err)
		os.Exit(1)
	}
}

func result(err error, format string, args ...any) (*mcp.CallToolResult, error) {
	if err != nil {
		return mcp.NewToolResultText("failed: " + err.Error()), nil
	}
	return mcp.NewToolResultText("ok: " + fmt.Sprintf(format, args...)), nil
}

func addTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("read_file", mcp.WithDescription("Reads a file."),
		mcp.WithString("path", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := os.ReadFile(req.GetString("path", ""))
			return result(err, "%q", clip(string(b)))
		})
	s.AddTool(mcp.NewTool("list_dir", mcp.WithDescription("Lists a folder."),
		mcp.WithString("path", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ents, err := os.ReadDir(req.GetString("path", ""))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			return result(err, "%d entries: %s", len(names), clip(strings.Join(names, ", ")))
		})
	s.AddTool(mcp.NewTool("write_file", mcp.WithDescription("Writes a file (created or truncated)."),
		mcp.WithString("path", mcp.Required()), mcp.WithString("content")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := os.WriteFile(req.GetString("path", ""), []byte(req.GetString("content", "")), 0o644)
			return result(err, "wrote %s", req.GetString("path", ""))
		})
	s.AddTool(mcp.NewTool("replace_with_link", mcp.WithDescription("Removes path (a folder with what it holds) and puts a symbolic link to target in its place."),
		mcp.WithString("path", mcp.Required()), mcp.WithString("target", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.GetString("path", "")
			err := os.RemoveAll(p)
			if err == nil {
				err = os.Symlink(req.GetString("target", ""), p)
			}
			return result(err, "%s -> %s", p, req.GetString("target", ""))
		})
	s.AddTool(mcp.NewTool("env", mcp.WithDescription("Returns an environment variable."),
		mcp.WithString("name", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(os.Getenv(req.GetString("name", ""))), nil
		})
	s.AddTool(mcp.NewTool("tcp_connect", mcp.WithDescription("Opens a TCP connection to host:port."),
		mcp.WithString("address", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, err := net.DialTimeout("tcp", req.GetString("address", ""), 5*time.Second)
			if err == nil {
				c.Close()
			}
			return result(err, "connected to %s", req.GetString("address", ""))
		})
	s.AddTool(mcp.NewTool("http_get", mcp.WithDescription("GETs a URL through $HTTP_PROXY when set (for every host, loopback too)."),
		mcp.WithString("url", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			code, body, err := httpGet(req.GetString("url", ""))
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("status %d: %s", code, clip(body))
			}
			return result(err, "status %d: %s", code, clip(body))
		})
	s.AddTool(mcp.NewTool("resolve", mcp.WithDescription("Resolves a host name, through the DNS server dns (host:port) when given."),
		mcp.WithString("host", mcp.Required()), mcp.WithString("dns")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := net.DefaultResolver
			if dns := req.GetString("dns", ""); dns != "" {
				r = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "udp", dns)
				}}
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			addrs, err := r.LookupHost(ctx, req.GetString("host", ""))
			return result(err, "%s", strings.Join(addrs, ", "))
		})
	s.AddTool(mcp.NewTool("socket32", mcp.WithDescription("Makes a UDP socket, from a child process, through the 32-bit (i386) system call ABI, which a seccomp filter written for the native one does not see.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return child(ctx, socket32Mode, 0)
		})
	s.AddTool(mcp.NewTool("fork", mcp.WithDescription("Starts count processes at once from a child process, then ends them; says how many it managed."),
		mcp.WithNumber("count", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return child(ctx, forkMode, int64(req.GetFloat("count", 0)))
		})
	s.AddTool(mcp.NewTool("allocate", mcp.WithDescription("Maps bytes of private memory in a child process and writes to every MiB of it."),
		mcp.WithNumber("bytes", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return child(ctx, allocMode, int64(req.GetFloat("bytes", 0)))
		})
}

// child runs this binary in a child mode and returns its one-line answer.
func child(ctx context.Context, mode string, n int64) (*mcp.CallToolResult, error) {
	self, err := os.Executable()
	if err != nil {
		return result(err, "")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, mode, strconv.FormatInt(n, 10))
	out, err := cmd.Output()
	line := strings.TrimSpace(string(out))
	if err != nil && line == "" {
		return result(err, "")
	}
	return mcp.NewToolResultText(line), nil
}

// forkChildren starts n processes that wait on a pipe, stops at the first
// failure, then closes the pipe (they exit), reaps them, and prints the
// count.
func forkChildren(n int) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		fmt.Println("failed: no sh:", err)
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Println("failed:", err)
		return
	}
	attr := &syscall.ProcAttr{Files: []uintptr{r.Fd(), devnull.Fd(), devnull.Fd()}}
	var pids []int
	var ferr error
	for range n {
		pid, err := syscall.ForkExec(sh, []string{"sh", "-c", "read x"}, attr)
		if err != nil {
			ferr = err
			break
		}
		pids = append(pids, pid)
	}
	w.Close()
	for _, pid := range pids {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
	if ferr != nil {
		fmt.Printf("failed: started %d of %d processes, then: %v\n", len(pids), n, ferr)
		return
	}
	fmt.Printf("ok: started %d of %d processes\n", len(pids), n)
}

// allocate maps n bytes of private writable memory and writes to every
// MiB of it.
func allocate(n int64) {
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		fmt.Printf("failed: map %d bytes: %v\n", n, err)
		return
	}
	for i := 0; i < len(b); i += 1 << 20 {
		b[i] = 1
	}
	fmt.Printf("ok: mapped %d bytes and wrote to every MiB\n", n)
}

// httpGet fetches u through $HTTP_PROXY when set, for every host.
func httpGet(u string) (int, string, error) {
	tr := &http.Transport{}
	if p := os.Getenv("HTTP_PROXY"); p != "" {
		pu, err := url.Parse(p)
		if err != nil {
			return 0, "", err
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxOut))
	return resp.StatusCode, string(b), nil
}

func clip(s string) string {
	if len(s) > maxOut {
		return s[:maxOut] + "..."
	}
	return s
}

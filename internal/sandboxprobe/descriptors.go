package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// addDescriptorTools adds the tools that look for what the server was
// handed besides stdin, stdout and stderr: an open descriptor inherited from
// whoever started hermes (`hermes mcp call ... 7<secret`), and its whole
// environment.
func addDescriptorTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("descriptors", mcp.WithDescription("Lists every open descriptor above 2 with what it points to, and reads what each one that is a regular file holds from its start.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(descriptors()), nil
		})
	s.AddTool(mcp.NewTool("read_fd", mcp.WithDescription("Reads from an open descriptor by number, at its start."),
		mcp.WithNumber("fd", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := preadFD(int(req.GetFloat("fd", -1)))
			return result(err, "%q", clip(string(b)))
		})
	s.AddTool(mcp.NewTool("environ", mcp.WithDescription("Returns the whole environment, one NAME=value a line, as the kernel holds it (/proc/self/environ).")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := os.ReadFile("/proc/self/environ")
			return result(err, "%s", strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", "\n"))
		})
}

// descriptors lists /proc/self/fd (less the descriptor the listing itself
// uses) as "N -> target", and for a regular file what it holds.
func descriptors() string {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return "failed: " + err.Error()
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return "failed: " + err.Error()
	}
	var fds []int
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd > 2 && fd != int(d.Fd()) {
			fds = append(fds, fd)
		}
	}
	sort.Ints(fds)
	var b strings.Builder
	b.WriteString("ok: ")
	for _, fd := range fds {
		target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		fmt.Fprintf(&b, "%d -> %s", fd, target)
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
			if data, err := preadFD(fd); err == nil {
				fmt.Fprintf(&b, " holds %q", clip(string(data)))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// preadFD reads up to maxOut bytes of fd from offset 0.
func preadFD(fd int) ([]byte, error) {
	if fd < 0 {
		return nil, fmt.Errorf("no descriptor number")
	}
	buf := make([]byte, maxOut)
	n, err := syscall.Pread(fd, buf, 0)
	if err != nil {
		return nil, fmt.Errorf("descriptor %d: %w", fd, err)
	}
	return buf[:n], nil
}

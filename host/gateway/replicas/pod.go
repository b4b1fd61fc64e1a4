package replicas

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Pod is how one replica runs the image, as a Deployment's pod template
// says: its mounts, its extra environment (a Secret's keys as variables)
// and its arguments after the entrypoint (the image's Cmd when nil).
type Pod struct {
	Image *Image
	// Mounts maps a folder of the container (/etc/hermes, /var/lib/hermes,
	// /tmp) to the host folder standing for it.
	Mounts map[string]string
	// Env is added after the image's environment (a later key wins).
	Env []string
	// Args replace the image's Cmd when not nil.
	Args []string
	// Listen replaces the address of --http: each pod has its own network
	// on a cluster, so the image's :8080 becomes a free loopback port.
	Listen string
}

// HostPath is where the container's path p is on the host: under a mount
// when one holds it, else under the image's root.
func (p *Pod) HostPath(cpath string) string {
	best := ""
	for m := range p.Mounts {
		if (cpath == m || strings.HasPrefix(cpath, strings.TrimSuffix(m, "/")+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best != "" {
		return filepath.Join(p.Mounts[best], strings.TrimPrefix(cpath, best))
	}
	return filepath.Join(p.Image.Root, cpath)
}

// command is the replica's command line and environment, with every
// container path the image or the pod names made a host path.
func (p *Pod) command() (argv, env []string, err error) {
	if len(p.Image.Entrypoint) == 0 {
		return nil, nil, errors.New("the image has no entrypoint")
	}
	args := p.Image.Cmd
	if p.Args != nil {
		args = p.Args
	}
	argv = append([]string{p.HostPath(p.Image.Entrypoint[0])}, p.Image.Entrypoint[1:]...)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--http" && p.Listen != "" && i+1 < len(args):
			argv = append(argv, a, p.Listen)
			i++
			continue
		case strings.HasPrefix(a, "/"):
			a = p.HostPath(a)
		}
		argv = append(argv, a)
	}
	seen := map[string]int{}
	for _, kv := range append(append([]string{}, p.Image.Env...), p.Env...) {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH":
			var dirs []string
			for _, d := range filepath.SplitList(v) {
				dirs = append(dirs, p.HostPath(d))
			}
			v = strings.Join(dirs, string(filepath.ListSeparator))
		case strings.HasPrefix(v, "/"):
			v = p.HostPath(v)
		}
		if i, ok := seen[k]; ok {
			env[i] = k + "=" + v
			continue
		}
		seen[k] = len(env)
		env = append(env, k+"="+v)
	}
	return argv, env, nil
}

// Replica is one running replica: a gateway process started from the
// image.
type Replica struct {
	// URL is where it serves MCP (http://127.0.0.1:PORT/mcp).
	URL string
	// Addr is its HOST:PORT.
	Addr string
	cmd  *exec.Cmd
	// Stdout holds what it wrote to stdout (audit lines, with
	// audit.stdout), Stderr its log.
	Stdout, Stderr *SyncBuffer
	exited         chan struct{}
	waitErr        error
}

// Start starts a replica of p and returns once it says where it serves,
// or with its log when it exits first.
func (p *Pod) Start() (*Replica, error) {
	argv, env, err := p.command()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = p.HostPath(p.Image.WorkingDir)
	// A process group of its own: the test ends the replica's plugins
	// and servers with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &Replica{cmd: cmd, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout = r.Stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	served := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			r.Stderr.Write([]byte(line + "\n"))
			if _, after, ok := strings.Cut(line, " at http://"); ok && strings.HasPrefix(line, "hermes mcp gateway: serving") {
				select {
				case served <- after:
				default:
				}
			}
		}
		_, _ = io.Copy(r.Stderr, pipe)
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()
	select {
	case at := <-served:
		addr, _, _ := strings.Cut(at, "/")
		r.Addr, r.URL = addr, "http://"+at
		return r, nil
	case <-r.exited:
		return nil, fmt.Errorf("the replica exited before serving (%v):\n%s", r.waitErr, r.Stderr.String())
	}
}

// Pid is the replica's process id.
func (r *Replica) Pid() int { return r.cmd.Process.Pid }

// Signal sends sig to the replica's process (not its group: its plugins
// are ended by their parent's death, as in a container).
func (r *Replica) Signal(sig syscall.Signal) error { return r.cmd.Process.Signal(sig) }

// Exited is closed when the replica's process has exited.
func (r *Replica) Exited() <-chan struct{} { return r.exited }

// ExitErr is how the process ended, once Exited is closed.
func (r *Replica) ExitErr() error { <-r.exited; return r.waitErr }

// Stop kills what is left of the replica's process group and waits for
// the process.
func (r *Replica) Stop() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.exited
}

// RSS is the resident memory of the replica's process, in bytes, and of
// its whole process tree (its plugins, their launchers and servers).
func (r *Replica) RSS() (own, tree int64, err error) {
	own, err = rss(r.Pid())
	if err != nil {
		return 0, 0, err
	}
	tree = own
	for _, pid := range descendants(r.Pid()) {
		if n, err := rss(pid); err == nil {
			tree += n
		}
	}
	return own, tree, nil
}

// rss is VmRSS of pid.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// descendants are the processes below pid, from /proc/PID/task/*/children.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}

// SyncBuffer is a bytes.Buffer safe for a writer and readers at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

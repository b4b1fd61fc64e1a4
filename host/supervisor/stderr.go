package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// maxInternalLine caps one line of a StderrRoute; the rest of a longer line
// is passed on as further lines.
const maxInternalLine = 16 << 10

// closeWait bounds how long StderrRoute.Close waits for the last lines to
// be passed on (a child process could hold the pipe open).
const closeWait = time.Second

// StderrRoute takes what the process writes to os.Stderr away from the
// terminal. go-plugin's connection multiplexer (yamux) logs its errors
// ("[ERR] yamux: Failed to write header: ... broken pipe" when a plugin's
// connection breaks as it exits) to the os.Stderr of the moment each
// plugin connection is made, through no logger the host can give it; and
// go-plugin itself touches os.Stderr from its background goroutines. So
// the route is made once per process, before the first plugin starts, and
// after that only its destination changes (To), never os.Stderr again. The
// host's own output must use the stderr it had before (RouteStderr returns
// it as Original).
type StderrRoute struct {
	orig *os.File
	w    *os.File
	dest atomic.Pointer[io.Writer]
	done chan struct{}
}

// RouteStderr makes os.Stderr a pipe whose lines go wherever To says,
// the original stderr until then.
func RouteStderr() (*StderrRoute, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	rt := &StderrRoute{orig: os.Stderr, w: w, done: make(chan struct{})}
	os.Stderr = w
	go func() {
		defer close(rt.done)
		rt.pump(bufio.NewReaderSize(r, maxInternalLine))
		r.Close()
	}()
	return rt, nil
}

// Original is the stderr the process had before the route.
func (rt *StderrRoute) Original() *os.File { return rt.orig }

// To sends the lines written to os.Stderr from now on to logger, each
// with the level it announces ("[ERR]", "[WARN]", ...; a leading log
// timestamp is dropped). A nil logger sends them to the original stderr
// again.
func (rt *StderrRoute) To(logger hclog.Logger) {
	if logger == nil {
		rt.dest.Store(nil)
		return
	}
	w := logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true, InferLevelsWithTimestamp: true})
	rt.dest.Store(&w)
}

// Close puts the original os.Stderr back and returns once what was written
// before has been passed on (waiting closeWait at most). Only for a
// process that no longer runs plugins (tests): go-plugin reads os.Stderr
// from its own goroutines.
func (rt *StderrRoute) Close() {
	os.Stderr = rt.orig
	rt.w.Close()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-rt.done:
	case <-t.C:
	}
}

// pump passes each line read from r on, one Write per line.
func (rt *StderrRoute) pump(r *bufio.Reader) {
	for {
		line, err := r.ReadSlice('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if d := rt.dest.Load(); d != nil {
				_, _ = (*d).Write(line)
			} else {
				_, _ = rt.orig.Write(line)
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

package logfile

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// Defaults of a Limiter and a LineWriter.
const (
	// DefaultRate is how many lines a second one source may log, on
	// average.
	DefaultRate = 100
	// DefaultBurst is how many lines one source may log at once before
	// the rate applies.
	DefaultBurst = 1000
	// MaxLineBytes caps one line a LineWriter passes; the rest of a
	// longer line is dropped and the line ends in "…".
	MaxLineBytes = 64 << 10
)

// Limiter is a token bucket per source: each source may log Burst lines
// at once and Rate lines a second after that; lines over that are dropped
// and counted. It is safe for concurrent use.
type Limiter struct {
	rate, burst float64
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time

	mu      sync.Mutex
	sources map[string]*bucket
}

type bucket struct {
	tokens  float64
	last    time.Time
	dropped int
}

// NewLimiter returns a Limiter passing rate lines a second per source with
// bursts of burst; zero or less means DefaultRate, DefaultBurst.
func NewLimiter(rate, burst int) *Limiter {
	if rate <= 0 {
		rate = DefaultRate
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return &Limiter{rate: float64(rate), burst: float64(burst), sources: map[string]*bucket{}}
}

// Rate returns the lines a second a source may log.
func (l *Limiter) Rate() int { return int(l.rate) }

// Burst returns the lines a source may log at once.
func (l *Limiter) Burst() int { return int(l.burst) }

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Allow reports whether source may log one more line now. When it may and
// lines of source were dropped since its last allowed line, dropped says
// how many (the count starts again): the caller logs that first.
func (l *Limiter) Allow(source string) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.sources[source]
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.sources[source] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(l.burst, b.tokens+el*l.rate)
	}
	b.last = now
	if b.tokens < 1 {
		b.dropped++
		return false, 0
	}
	b.tokens--
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// Flush returns and forgets the lines of source dropped since its last
// allowed line, for a last note when the source ends.
func (l *Limiter) Flush(source string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.sources[source]
	if b == nil {
		return 0
	}
	delete(l.sources, source)
	return b.dropped
}

// DroppedNote is the line that reports n dropped lines of source.
func DroppedNote(source string, n int, rate int) string {
	unit := "lines"
	if n == 1 {
		unit = "line"
	}
	return fmt.Sprintf("[hermes] %d %s from %s dropped: more than %d lines a second", n, unit, source, rate)
}

// LineWriter passes the whole lines written to it on to W, at most as
// many as its Limiter allows for its source; a line that follows dropped
// lines is preceded by DroppedNote, and Close writes the note for lines
// dropped at the end. Lines longer than MaxLineBytes are cut. It is safe
// for concurrent use.
type LineWriter struct {
	// Hint, when set, ends every dropped-lines note: how to raise the
	// limit (e.g. the config keys that set it).
	Hint string
	// Stamp, when set, appends the start of every line written (its time,
	// its source's name) to dst and returns it: lines of several sources
	// in one file can then be told apart. Each line and its stamp go out
	// in one write.
	Stamp func(dst []byte) []byte

	w      io.Writer
	source string
	lim    *Limiter

	mu      sync.Mutex
	out     []byte // a stamped line being written
	partial []byte // the start of a line not ended yet
	cut     bool   // the current line passed MaxLineBytes
	closed  bool
}

// NewLineWriter returns a LineWriter for the lines of source into w.
func NewLineWriter(w io.Writer, source string, lim *Limiter) *LineWriter {
	return &LineWriter{w: w, source: source, lim: lim}
}

// Write takes any bytes; whole lines go out as the limit allows. It
// always reports len(p): a log never pushes back on its source.
func (lw *LineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n := len(p)
	if lw.closed {
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			lw.add(p)
			return n, nil
		}
		lw.add(p[:i+1])
		lw.emit()
		p = p[i+1:]
	}
	return n, nil
}

// add appends to the current line, up to MaxLineBytes.
func (lw *LineWriter) add(p []byte) {
	if lw.cut {
		return
	}
	if room := MaxLineBytes - len(lw.partial); len(p) > room {
		lw.partial = append(lw.partial, p[:room]...)
		lw.cut = true
		return
	}
	lw.partial = append(lw.partial, p...)
}

// emit passes the current line if the limit allows.
func (lw *LineWriter) emit() {
	line := lw.partial
	if lw.cut {
		line = append(bytes.TrimRight(line, "\n"), "…\n"...)
	}
	lw.partial, lw.cut = lw.partial[:0], false
	ok, dropped := lw.lim.Allow(lw.source)
	if !ok {
		return
	}
	if dropped > 0 {
		lw.write([]byte(lw.note(dropped)))
	}
	lw.write(line)
	if cap(lw.partial) > 4*MaxLineBytes {
		lw.partial = nil
	}
}

// Close passes a last unfinished line (as the limit allows) and notes
// lines dropped since the last one passed. It does not close W.
func (lw *LineWriter) Close() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return nil
	}
	if len(lw.partial) > 0 {
		lw.partial = append(lw.partial, '\n')
		lw.emit()
	}
	lw.closed = true
	if n := lw.lim.Flush(lw.source); n > 0 {
		lw.write([]byte(lw.note(n)))
	}
	return nil
}

// write writes one whole line, stamped when Stamp is set, in one write.
func (lw *LineWriter) write(line []byte) {
	if lw.Stamp == nil {
		_, _ = lw.w.Write(line)
		return
	}
	lw.out = append(lw.Stamp(lw.out[:0]), line...)
	_, _ = lw.w.Write(lw.out)
	if cap(lw.out) > 4*MaxLineBytes {
		lw.out = nil
	}
}

// note is the dropped-lines note for n lines, with the hint.
func (lw *LineWriter) note(n int) string {
	s := DroppedNote(lw.source, n, lw.lim.Rate())
	if lw.Hint != "" {
		s += "; " + lw.Hint
	}
	return s + "\n"
}

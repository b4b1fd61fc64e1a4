// Package audit is the gateway's record of who called what: one JSON line
// per tool call and per call refused, with the time, the person (subject)
// and their client, the server and tool, the policy's decision and the rule
// that made it, the sha256 of the call's arguments in canonical form, the
// outcome class and the duration.
//
// The values of the arguments are never written unless the deployment opts
// in (Options.Arguments, the config's audit.redact: false): a hash is
// enough to tell whether two calls were the same, and the audit trail does
// not become a second copy of what people sent. Every string is escaped
// as JSON and cut to a bound, so a hostile name cannot forge a line or grow
// one without limit.
//
// Lines go to a file, rotated by size with a fixed number of old files
// kept, or to any writer (standard output). A Log is safe for concurrent
// use; each line is written whole, with one write.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/offered"
)

// Outcome is the class of a call's end.
type Outcome string

// The outcome classes.
const (
	// OutcomeOK: the tool answered with a result.
	OutcomeOK Outcome = "ok"
	// OutcomeToolError: the tool answered with isError.
	OutcomeToolError Outcome = "tool_error"
	// OutcomeError: the call failed (the server, the transport, the
	// gateway).
	OutcomeError Outcome = "error"
	// OutcomeDenied: the policy refused the call.
	OutcomeDenied Outcome = "denied"
	// OutcomeLimited: a rate or concurrency limit refused the call.
	OutcomeLimited Outcome = "limited"
	// OutcomeTimeout: the call ran out of time.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeCancelled: the client cancelled the call.
	OutcomeCancelled Outcome = "cancelled"
)

// Bounds of a line.
const (
	// MaxFieldBytes bounds each name of a line (subject, client, server,
	// tool); a longer one is cut and ends in "…".
	MaxFieldBytes = 256
	// MaxReasonBytes bounds the policy's reason.
	MaxReasonBytes = 1024
	// MaxArgumentsBytes bounds the arguments written with
	// Options.Arguments; larger ones are left out, and the line says so.
	MaxArgumentsBytes = 64 << 10
)

// Record is one call, or one call refused.
type Record struct {
	// Time is when the call arrived; zero is now.
	Time time.Time
	// Subject is the person; Client the client they called through
	// (its clientInfo name, or the OAuth client id).
	Subject, Client string
	// Server and Tool are the server and the model-visible tool name;
	// for a request other than a tool call (Method), Tool is what it
	// named: the prompt's served name, the resource's URI.
	Server, Tool string
	// Method is the request when it is not tools/call (prompts/get,
	// resources/read); "" for a tool call.
	Method string
	// Allow is the policy's decision; Rule the index of the rule that
	// made it and Reason its words, as the policy's Decision says them
	// (Rule -1: no rule matched; 0 is the first rule, not "unset").
	Allow  bool
	Rule   int
	Reason string
	// Arguments are the call's arguments as the client sent them (JSON);
	// only their hash is written, unless Options.Arguments.
	Arguments json.RawMessage
	// Outcome is the class of the call's end; Duration how long it took.
	Outcome  Outcome
	Duration time.Duration
}

// line is a Record as written: the field names of the audit format.
type line struct {
	Time       string          `json:"time"`
	Subject    string          `json:"subject"`
	Client     string          `json:"client,omitempty"`
	Server     string          `json:"server"`
	Method     string          `json:"method,omitempty"`
	Tool       string          `json:"tool"`
	Decision   string          `json:"decision"`
	Rule       int             `json:"rule"`
	Reason     string          `json:"reason,omitempty"`
	ArgsSHA256 string          `json:"args_sha256"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	ArgsOmit   string          `json:"arguments_omitted,omitempty"`
	Outcome    Outcome         `json:"outcome"`
	DurationMS float64         `json:"duration_ms"`
}

// Options say where a Log writes.
type Options struct {
	// File is the audit file, created 0600 (its folder 0700) and appended
	// to; "" writes to Writer.
	File string
	// MaxBytes rotates File when a line would take it past this size
	// (at least one line is always written to a new file); Keep is the
	// number of rotated files kept (File.1 the newest, up to File.Keep).
	MaxBytes int64
	Keep     int
	// Writer receives the lines when File is "" (standard output).
	Writer io.Writer
	// Arguments writes the arguments' values (canonical JSON, up to
	// MaxArgumentsBytes) besides their hash: the opt-in of
	// audit.redact: false.
	Arguments bool
}

// FromConfig returns the Options of the config's audit: block; stdout is
// where stdout: true writes.
func FromConfig(a config.GatewayAudit, stdout io.Writer) Options {
	o := Options{MaxBytes: int64(a.MaxSizeMB) << 20, Keep: a.Keep, Arguments: !a.Redact}
	if a.Stdout || a.File == "" {
		o.Writer = stdout
	} else {
		o.File = a.File
	}
	return o
}

// Log writes audit lines.
type Log struct {
	args bool
	mu   sync.Mutex
	w    io.Writer
	file *rotatingFile
}

// Open returns a Log writing where o says.
func Open(o Options) (*Log, error) {
	l := &Log{args: o.Arguments}
	if o.File == "" {
		if o.Writer == nil {
			return nil, fmt.Errorf("audit: no file and no writer to write to")
		}
		l.w = o.Writer
		return l, nil
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = int64(config.DefaultAuditMaxSizeMB) << 20
	}
	f, err := openRotating(o.File, o.MaxBytes, max(o.Keep, 0))
	if err != nil {
		return nil, err
	}
	l.file, l.w = f, f
	return l, nil
}

// Write writes r as one line.
func (l *Log) Write(r Record) error {
	// The line is made outside the lock (hashing the arguments is the
	// costly part), with the options it will be written under: a Swap
	// that changed them meanwhile has it made again.
	l.mu.Lock()
	args := l.args
	l.mu.Unlock()
	b, err := encode(r, args)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return fmt.Errorf("audit: the log is closed")
	}
	if l.args != args {
		if b, err = encode(r, l.args); err != nil {
			return err
		}
	}
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("audit: write: %w", err)
	}
	return nil
}

// Close closes the file; later writes fail. A Log on a Writer leaves the
// writer open.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = nil
	if l.file != nil {
		return l.file.close()
	}
	return nil
}

// Swap makes l write where n writes, with n's options, from its next line
// on, then closes the file l wrote to before (a writer is left open); n is
// left closed. Each line goes whole to the old place or the new one, so a
// swap loses none: a line written while Swap runs is in the old file, which
// is closed only once the new one takes the lines. It is how a reload takes
// up a changed audit: block, and how a file moved away (by logrotate) is
// reopened.
func (l *Log) Swap(n *Log) error {
	if n == l {
		return nil
	}
	n.mu.Lock()
	w, file, args := n.w, n.file, n.args
	n.w, n.file = nil, nil
	n.mu.Unlock()
	if w == nil {
		return fmt.Errorf("audit: swap to a closed log")
	}
	l.mu.Lock()
	old := l.file
	l.w, l.file, l.args = w, file, args
	l.mu.Unlock()
	if old != nil {
		if err := old.close(); err != nil {
			return fmt.Errorf("audit: close the file before the swap: %w", err)
		}
	}
	return nil
}

// encode is r's line, newline included; args writes the arguments' values
// (Options.Arguments).
func encode(r Record, args bool) ([]byte, error) {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	decision := "deny"
	if r.Allow {
		decision = "allow"
	}
	canon := canonical(r.Arguments)
	sum := sha256.Sum256(canon)
	ln := line{
		Time:       t.UTC().Format(time.RFC3339Nano),
		Subject:    cut(r.Subject, MaxFieldBytes),
		Client:     cut(r.Client, MaxFieldBytes),
		Server:     cut(r.Server, MaxFieldBytes),
		Method:     cut(r.Method, MaxFieldBytes),
		Tool:       cut(r.Tool, MaxFieldBytes),
		Decision:   decision,
		Rule:       max(r.Rule, -1),
		Reason:     cut(r.Reason, MaxReasonBytes),
		ArgsSHA256: hex.EncodeToString(sum[:]),
		Outcome:    Outcome(cut(string(r.Outcome), MaxFieldBytes)),
		DurationMS: float64(r.Duration.Microseconds()) / 1000,
	}
	if args {
		switch {
		case len(canon) > MaxArgumentsBytes:
			ln.ArgsOmit = "larger than " + strconv.Itoa(MaxArgumentsBytes) + " bytes"
		case json.Valid(canon):
			ln.Arguments = canon
		default:
			ln.ArgsOmit = "not JSON"
		}
	}
	b, err := json.Marshal(ln)
	if err != nil {
		return nil, fmt.Errorf("audit: encode: %w", err)
	}
	return append(b, '\n'), nil
}

// canonical is the form of a call's arguments that is hashed: canonical
// JSON (object keys sorted, no insignificant space, numbers as written,
// as the drift records' digests); no arguments are {}; arguments that are
// not JSON are hashed as they came.
func canonical(args json.RawMessage) []byte {
	if len(args) == 0 {
		return []byte("{}")
	}
	c, err := offered.Canonical(args)
	if err != nil {
		return args
	}
	return c
}

// cut bounds s to n bytes on a rune boundary, ending a cut string in "…".
// Invalid UTF-8 is left to encoding/json, which writes U+FFFD for it.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

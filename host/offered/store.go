package offered

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/atomicfile"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// Dir is the store's folder under $HERMES_HOME.
const Dir = homedir.OfferedName

// DefaultMaxBytes bounds a file of the store when the server's entry does
// not say (config.DefaultMaxMessageMB).
const DefaultMaxBytes = int64(config.DefaultMaxMessageMB) << 20

// ErrNotFound: the store holds no record (or baseline) for the server.
var ErrNotFound = errors.New("nothing stored")

// ErrStale: the stored record was made with other connection settings
// (its SettingsDigest differs from the entry's).
var ErrStale = errors.New("stored for other connection settings")

// UnusableError is a stored file the store refuses to read: damaged,
// oversized, owned by another user, a symbolic link, not a regular file,
// or of another format version. The store logs it once per process. An
// unusable Record is treated as absent; the next Save replaces it. An
// unusable Baseline (Approved) is not: its server's tools are withheld
// until the person approves them again (Approve replaces it).
type UnusableError struct {
	Path   string
	Reason string
	// Approved: the file is a Baseline, of the server with state key
	// Server.
	Approved bool
	Server   string
}

func (e *UnusableError) Error() string {
	if !e.Approved {
		return fmt.Sprintf("ignoring %s: %s; hermes rebuilds it at the next connection", e.Path, e.Reason)
	}
	name, _, project := strings.Cut(e.Server, "@")
	todo := fmt.Sprintf("review and approve them again with: hermes mcp configure %s --accept-changes", name)
	if project {
		todo = fmt.Sprintf("to trust the tools of the project's '%s' afresh, delete that file (its next listing is then approved as on first use)", name)
	}
	return fmt.Sprintf("cannot read the approved tools of '%s' in %s: %s; its tools are withheld until approved again; %s", name, e.Path, e.Reason, todo)
}

// Store is the store under one $HERMES_HOME. Its methods are safe for
// concurrent use, and against other hermes processes using the same home.
type Store struct {
	dir string
	log hclog.Logger
	now func() time.Time

	mu       sync.Mutex
	reported map[string]bool
}

// Open returns the store of home; nothing is read or created until used.
// log receives the one warning per unusable file (nil: none).
func Open(home string, log hclog.Logger) *Store {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Store{dir: homedir.Dir(home).Offered(), log: log, now: time.Now, reported: map[string]bool{}}
}

// RecordPath is the file of server's Record.
func (s *Store) RecordPath(server string) string { return filepath.Join(s.dir, server+".json") }

// BaselinePath is the file of server's Baseline.
func (s *Store) BaselinePath(server string) string {
	return filepath.Join(s.dir, server+".approved.json")
}

// MaxBytes is the bound of srv's files: its max_message_mb.
func MaxBytes(srv *config.Server) int64 {
	if srv != nil && srv.MaxMessageBytes > 0 {
		return int64(srv.MaxMessageBytes)
	}
	return DefaultMaxBytes
}

// checkName refuses a key that is not a state key: a server name, or one
// followed by @ and 12 hex digits. Neither holds a path separator or "..",
// so a key is a safe file name in the store's folder.
func checkName(server string) error {
	if !config.ValidStateKey(server) {
		return fmt.Errorf("server key %q is not a server name (letters, digits, \"_\" and \"-\"), optionally followed by @ and 12 hex digits (a project's server)", server)
	}
	return nil
}

// Load returns what srv offered at its last listing made with srv's
// current connection settings. It returns ErrNotFound when nothing is
// stored, ErrStale when the record was made with other settings, an
// *UnusableError when the file is refused (logged once), or another error
// when the file cannot be read.
func (s *Store) Load(srv *config.Server) (*Record, error) {
	r, err := s.LoadAny(srv.StateKey(), MaxBytes(srv))
	if err != nil {
		return nil, err
	}
	if r.SettingsDigest != SettingsDigest(srv) {
		return nil, fmt.Errorf("%s: %w", s.RecordPath(srv.StateKey()), ErrStale)
	}
	return r, nil
}

// LoadAny returns server's record whatever settings it was made with (a
// listing may say how old a stale cache is), reading at most maxBytes.
func (s *Store) LoadAny(server string, maxBytes int64) (*Record, error) {
	if err := checkName(server); err != nil {
		return nil, err
	}
	path := s.RecordPath(server)
	data, err := s.read(path, maxBytes)
	if err != nil {
		return nil, err
	}
	r, err := DecodeRecord(data)
	if err == nil && r.Server != server {
		err = fmt.Errorf("it is the record of server %q", r.Server)
	}
	if err != nil {
		return nil, s.unusable(path, err.Error())
	}
	if r.Upgraded() {
		s.upgradeRecord(path, data, r)
	}
	return r, nil
}

// upgradeRecord rewrites the record r, read from data at path in an older
// format version, as FormatVersion, unless the file changed since it was
// read. Its digests are those of its tools (a tool's digest is the same
// in every version). A failure leaves the old file, read again next time.
func (s *Store) upgradeRecord(path string, data []byte, r *Record) {
	up := *r
	if err := up.fill(); err != nil {
		s.log.Warn("cannot rewrite in the current format", "path", path, "error", err)
		return
	}
	out, err := encodeCompact(&up)
	if err != nil {
		s.log.Warn("cannot rewrite in the current format", "path", path, "error", err)
		return
	}
	err = s.locked(path, func() error {
		now, err := s.read(path, int64(len(data)))
		if err != nil || !bytes.Equal(now, data) {
			return nil
		}
		return replaceFile(path, out)
	})
	if err != nil {
		s.log.Warn("cannot rewrite in the current format", "path", path, "error", err)
		return
	}
	*r = up
}

// Save writes rec (filling its Version and Digests) as its server's
// record, replacing the file atomically under its lock. A record already
// stored that was fetched later is kept: another process listed the
// server after this one did.
func (s *Store) Save(rec *Record) error {
	if err := checkName(rec.Server); err != nil {
		return err
	}
	if err := rec.fill(); err != nil {
		return fmt.Errorf("record of %s: %w", rec.Server, err)
	}
	if rec.FetchedAt.IsZero() {
		rec.FetchedAt = s.now()
	}
	data, err := encodeCompact(rec)
	if err != nil {
		return fmt.Errorf("record of %s: %w", rec.Server, err)
	}
	path := s.RecordPath(rec.Server)
	return s.locked(path, func() error {
		if old, err := s.read(path, int64(len(data))+DefaultMaxBytes); err == nil {
			if o, err := DecodeRecord(old); err == nil && o.FetchedAt.After(rec.FetchedAt) {
				return nil
			}
		}
		return replaceFile(path, data)
	})
}

// replaceFile writes data to path atomically, 0600. A symbolic link or
// anything but a regular file at path is removed first, so the write never
// lands where a link points.
func replaceFile(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("replace %s: %w", path, err)
		}
	}
	return atomicfile.Write(path, data, 0o600, nil)
}

// Baseline returns server's approved tools (server is a state key,
// config.Server.StateKey), read bounded by MaxBaselineBytes: ErrNotFound
// when none were approved yet, and an *UnusableError (logged once) when a
// baseline exists but cannot be read: refused (damaged, oversized, a
// symbolic link, another user's), or an error reading it. A caller never
// takes an unusable baseline for a missing one: the person approved
// something hermes can no longer compare with.
func (s *Store) Baseline(server string) (*Baseline, error) {
	b, data, err := s.baseline(server)
	if err != nil {
		return nil, err
	}
	if b.upgraded {
		s.upgradeBaseline(server, data, b)
	}
	return b, nil
}

// baseline is Baseline without the rewrite of an older version, and the
// file's content: for callers that hold the file's lock.
func (s *Store) baseline(server string) (*Baseline, []byte, error) {
	if err := checkName(server); err != nil {
		return nil, nil, err
	}
	path := s.BaselinePath(server)
	data, err := s.readAs(path, MaxBaselineBytes, server)
	if err != nil {
		var ue *UnusableError
		if errors.Is(err, ErrNotFound) || errors.As(err, &ue) {
			return nil, nil, err
		}
		return nil, nil, s.unusableBaseline(server, path, err.Error())
	}
	b, err := DecodeBaseline(data)
	if err == nil && b.Server != server {
		err = fmt.Errorf("it is the baseline of server %q", b.Server)
	}
	if err != nil {
		return nil, nil, s.unusableBaseline(server, path, err.Error())
	}
	return b, data, nil
}

// upgradeBaseline rewrites the baseline b, read from data at path in an
// older format version, as BaselineVersion, unless the file changed since
// it was read. A failure leaves the old file, read again next time.
// The caller does not hold the file's lock.
func (s *Store) upgradeBaseline(server string, data []byte, b *Baseline) {
	path := s.BaselinePath(server)
	out, err := encodeCompact(b)
	if err == nil {
		err = s.locked(path, func() error {
			now, err := s.readAs(path, MaxBaselineBytes, server)
			if err != nil || !bytes.Equal(now, data) {
				return nil
			}
			return replaceFile(path, out)
		})
	}
	if err != nil {
		s.log.Warn("cannot rewrite in the current format", "path", path, "error", err)
		return
	}
	b.upgraded = false
}

// Trust records tools as server's baseline when it has none (trust on
// first use) and returns the baseline in force, and whether it was made
// now. A baseline that exists is never changed by Trust, and one that
// cannot be read is not replaced: Trust returns its *UnusableError.
func (s *Store) Trust(server string, tools []mcpvalue.Tool) (*Baseline, bool, error) {
	var out *Baseline
	var made bool
	err := s.changeBaseline(server, false, func(b *Baseline, found bool) (bool, error) {
		out = b
		if found {
			return false, nil
		}
		made = true
		return true, b.approve(tools, nil, "first use", s.now())
	})
	if err != nil && !made {
		out = nil
	}
	return out, made, err
}

// Approve makes the current definitions of server's tools (tools, as the
// server lists them now) its approved ones: of the tools named in only,
// or of every tool when only is empty, in which case tools approved before
// that the server no longer lists are forgotten. A name in only that tools
// lacks is forgotten too (its removal is accepted). how says how they were
// approved ("add", "configure", ...). A baseline that cannot be read is
// replaced: the person approves afresh.
func (s *Store) Approve(server string, tools []mcpvalue.Tool, only []string, how string) (*Baseline, error) {
	var out *Baseline
	err := s.changeBaseline(server, true, func(b *Baseline, _ bool) (bool, error) {
		out = b
		return true, b.approve(tools, only, how, s.now())
	})
	return out, err
}

func (b *Baseline) approve(tools []mcpvalue.Tool, only []string, how string, now time.Time) error {
	want := map[string]bool{}
	for _, n := range only {
		want[ToolKey(n)] = true
	}
	listed := map[string]bool{}
	for _, t := range tools {
		key := ToolKey(t.Name)
		listed[key] = true
		if len(only) > 0 && !want[key] {
			continue
		}
		d, err := ToolDigest(t)
		if err != nil {
			return err
		}
		if old, ok := b.Tools[key]; ok && old.Digest == d {
			continue
		}
		a, err := approvedTool(t, how, now)
		if err != nil {
			return err
		}
		b.Tools[key] = a
	}
	for key := range b.Tools {
		if !listed[key] && (len(only) == 0 || want[key]) {
			delete(b.Tools, key)
		}
	}
	if len(b.Tools) > MaxTools {
		return fmt.Errorf("%d tools, more than %d (offered.MaxTools); hermes keeps approvals of at most that many tools per server", len(b.Tools), MaxTools)
	}
	return nil
}

// changeBaseline runs change on server's baseline (an empty one, found
// false, when none is stored) under its lock, and writes it when change
// says so. A baseline that cannot be read is an error, unless replace
// is set: then change gets an empty one.
func (s *Store) changeBaseline(server string, replace bool, change func(b *Baseline, found bool) (bool, error)) error {
	if err := checkName(server); err != nil {
		return err
	}
	path := s.BaselinePath(server)
	return s.locked(path, func() error {
		b, _, err := s.baseline(server)
		found := err == nil
		var ue *UnusableError
		switch {
		case err == nil:
		case errors.Is(err, ErrNotFound) || replace && errors.As(err, &ue):
			b = &Baseline{Version: BaselineVersion, Server: server, Tools: map[string]ApprovedTool{}}
		default:
			return err
		}
		b.Version = BaselineVersion
		write, err := change(b, found)
		if err != nil || !write {
			return err
		}
		data, err := encodeCompact(b)
		if err != nil {
			return fmt.Errorf("baseline of %s: %w", server, err)
		}
		if len(data) > MaxBaselineBytes {
			// Unreachable by the bounds of an approved tool; kept so that
			// a baseline written is always one that can be read.
			return fmt.Errorf("the approved tools of %s take %d bytes, over hermes's limit of %d MiB (offered.MaxBaselineBytes); approve fewer tools (hermes mcp configure %s --include ...)", server, len(data), MaxBaselineBytes>>20, server)
		}
		return replaceFile(path, data)
	})
}

// encodeCompact is v as JSON without HTML escaping (json.Marshal writes
// "<" as six bytes), so a file's size is close to what it holds.
func encodeCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// RemoveServer deletes server's record and baseline (hermes mcp remove).
func (s *Store) RemoveServer(server string) error {
	if err := checkName(server); err != nil {
		return err
	}
	var errs []error
	for _, p := range []string{s.RecordPath(server), s.BaselinePath(server)} {
		err := s.locked(p, func() error { return os.Remove(p) })
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		_ = os.Remove(atomicfile.LockPath(p))
	}
	return errors.Join(errs...)
}

// Servers lists the state keys (config.Server.StateKey) of the servers
// that have a record, sorted.
func (s *Store) Servers() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if filepath.Ext(n) != ".json" {
			continue
		}
		n = n[:len(n)-len(".json")]
		if filepath.Ext(n) == ".approved" || !config.ValidStateKey(n) {
			continue
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// locked runs fn under path's lock, in the store's folder (created 0700).
func (s *Store) locked(path string, fn func() error) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	return atomicfile.WithLock(path, fn)
}

// ensureDir creates the store's folder 0700, and narrows a folder of ours
// that is wider.
func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", s.dir, err)
	}
	fi, err := os.Lstat(s.dir)
	if err != nil {
		return fmt.Errorf("create %s: %w", s.dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder; remove it (hermes recreates it)", s.dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(s.dir, 0o700); err != nil {
			return fmt.Errorf("narrow %s to 0700: %w", s.dir, err)
		}
	}
	return nil
}

// read returns the content of path when it is a regular file of ours of at
// most maxBytes: fs.ErrNotExist (wrapped in ErrNotFound) when it is
// missing, an *UnusableError (logged once) when refused.
func (s *Store) read(path string, maxBytes int64) ([]byte, error) {
	return s.readAs(path, maxBytes, "")
}

// readAs is read of a Record (baseline empty) or of the Baseline of the
// server with state key baseline, whose refusals say so.
func (s *Store) readAs(path string, maxBytes int64, baseline string) ([]byte, error) {
	return s.readInto(path, maxBytes, baseline, nil)
}

// readInto is readAs into buf (nil: a new buffer), which it grows when
// the file needs more.
func (s *Store) readInto(path string, maxBytes int64, baseline string, buf []byte) ([]byte, error) {
	unusable := func(path, reason string) error {
		if baseline != "" {
			return s.unusableBaseline(baseline, path, reason)
		}
		return s.unusable(path, reason)
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if di, err := os.Lstat(s.dir); err == nil && !di.IsDir() {
		return nil, unusable(path, "its folder "+s.dir+" is not a folder (a symbolic link?); remove it and hermes recreates it")
	}
	if !openRefusesLinks {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, unusable(path, "it is a symbolic link")
		}
	}
	f, err := openNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if err != nil {
		if isLoop(err) {
			return nil, unusable(path, "it is a symbolic link")
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, unusable(path, "it is not a regular file")
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return nil, unusable(path, fmt.Sprintf("it is owned by another user (uid %d)", uid))
	}
	if fi.Size() > maxBytes {
		return nil, unusable(path, tooLarge(maxBytes, baseline != ""))
	}
	// One read of the size the file says (and one more byte, to see a
	// file that grew past the bound since), not io.ReadAll's doubling.
	data := buf[:0]
	if need := int(min(fi.Size(), maxBytes) + 1); cap(data) < need {
		data = make([]byte, 0, need)
	}
	data, err = readAll(f, data, maxBytes+1)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, unusable(path, tooLarge(maxBytes, baseline != ""))
	}
	return data, nil
}

// readAll appends what r holds to buf, at most limit bytes.
func readAll(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func tooLarge(max int64, baseline bool) string {
	if baseline {
		return fmt.Sprintf("it is over %d MiB, hermes's limit for approved tools (offered.MaxBaselineBytes); it was not written by this version of hermes", max>>20)
	}
	return fmt.Sprintf("it is over %d MiB, the server's max_message_mb; raise max_message_mb in its entry in config.yaml if its tools need more", (max+(1<<20)-1)>>20)
}

// unusable returns the error of a refused record, logging it the first
// time.
func (s *Store) unusable(path, reason string) error {
	return s.report(&UnusableError{Path: path, Reason: reason})
}

// unusableBaseline returns the error of the refused baseline of server,
// logging it the first time.
func (s *Store) unusableBaseline(server, path, reason string) error {
	return s.report(&UnusableError{Path: path, Reason: reason, Approved: true, Server: server})
}

func (s *Store) report(err *UnusableError) error {
	s.mu.Lock()
	seen := s.reported[err.Error()]
	s.reported[err.Error()] = true
	s.mu.Unlock()
	if !seen {
		s.log.Warn(err.Error())
	}
	return err
}

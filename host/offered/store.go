package offered

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/atomicfile"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/mark3labs/mcp-go/mcp"
)

// Dir is the store's folder under $HERMES_HOME.
const Dir = "offered"

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
// or of another format version. The store logs it once per process and
// treats it as absent; the next Save replaces it.
type UnusableError struct {
	Path   string
	Reason string
}

func (e *UnusableError) Error() string {
	return fmt.Sprintf("ignoring %s: %s; hermes rebuilds it at the next connection", e.Path, e.Reason)
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
	return &Store{dir: filepath.Join(home, Dir), log: log, now: time.Now, reported: map[string]bool{}}
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

func checkName(server string) error {
	if !config.ValidStateKey(server) {
		return fmt.Errorf("server name %q may only contain letters, digits, \"_\" and \"-\"", server)
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
	return r, nil
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
	data, err := json.Marshal(rec)
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
		return replace(path, data)
	})
}

// replace writes data to path atomically, 0600. A symbolic link or
// anything but a regular file at path is removed first, so the write never
// lands where a link points.
func replace(path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("replace %s: %w", path, err)
		}
	}
	return atomicfile.Write(path, data, 0o600, nil)
}

// Baseline returns server's approved tools: ErrNotFound when none were
// approved yet, an *UnusableError when the file is refused (logged once;
// the registry then trusts the next listing, as on first use).
func (s *Store) Baseline(server string, maxBytes int64) (*Baseline, error) {
	if err := checkName(server); err != nil {
		return nil, err
	}
	path := s.BaselinePath(server)
	data, err := s.read(path, maxBytes)
	if err != nil {
		return nil, err
	}
	b, err := DecodeBaseline(data)
	if err == nil && b.Server != server {
		err = fmt.Errorf("it is the baseline of server %q", b.Server)
	}
	if err != nil {
		return nil, s.unusable(path, err.Error())
	}
	return b, nil
}

// Trust records tools as server's baseline when it has none (trust on
// first use) and returns the baseline in force, and whether it was made
// now. A baseline that exists is never changed by Trust.
func (s *Store) Trust(server string, tools []mcp.Tool, maxBytes int64) (*Baseline, bool, error) {
	var out *Baseline
	var made bool
	err := s.changeBaseline(server, maxBytes, func(b *Baseline, found bool) (bool, error) {
		out = b
		if found {
			return false, nil
		}
		made = true
		return true, b.approve(tools, nil, "first use", s.now())
	})
	return out, made, err
}

// Approve makes the current definitions of server's tools (tools, as the
// server lists them now) its approved ones: of the tools named in only,
// or of every tool when only is empty, in which case tools approved before
// that the server no longer lists are forgotten. A name in only that tools
// lacks is forgotten too (its removal is accepted). how says how they were
// approved ("add", "configure", ...).
func (s *Store) Approve(server string, tools []mcp.Tool, only []string, how string, maxBytes int64) (*Baseline, error) {
	var out *Baseline
	err := s.changeBaseline(server, maxBytes, func(b *Baseline, _ bool) (bool, error) {
		out = b
		return true, b.approve(tools, only, how, s.now())
	})
	return out, err
}

func (b *Baseline) approve(tools []mcp.Tool, only []string, how string, now time.Time) error {
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	listed := map[string]bool{}
	for _, t := range tools {
		listed[t.Name] = true
		if len(only) > 0 && !want[t.Name] {
			continue
		}
		d, err := ToolDigest(t)
		if err != nil {
			return err
		}
		if old, ok := b.Tools[t.Name]; ok && old.Digest == d {
			continue
		}
		b.Tools[t.Name] = ApprovedTool{Digest: d, ApprovedAt: now.UTC(), How: how, Tool: t}
	}
	for name := range b.Tools {
		if !listed[name] && (len(only) == 0 || want[name]) {
			delete(b.Tools, name)
		}
	}
	if len(b.Tools) > MaxTools {
		return fmt.Errorf("%d tools, more than %d", len(b.Tools), MaxTools)
	}
	return nil
}

// changeBaseline runs change on server's baseline (an empty one, found
// false, when none is stored or the stored one is unusable) under its
// lock, and writes it when change says so.
func (s *Store) changeBaseline(server string, maxBytes int64, change func(b *Baseline, found bool) (bool, error)) error {
	if err := checkName(server); err != nil {
		return err
	}
	path := s.BaselinePath(server)
	return s.locked(path, func() error {
		b, err := s.Baseline(server, maxBytes)
		found := err == nil
		var ue *UnusableError
		switch {
		case err == nil:
		case errors.Is(err, ErrNotFound) || errors.As(err, &ue):
			b = &Baseline{Version: FormatVersion, Server: server, Tools: map[string]ApprovedTool{}}
		default:
			return err
		}
		write, err := change(b, found)
		if err != nil || !write {
			return err
		}
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("baseline of %s: %w", server, err)
		}
		return replace(path, data)
	})
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

// Servers lists the servers that have a record, sorted.
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
		if filepath.Ext(n) == ".approved" || !config.ValidName(n) {
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
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if di, err := os.Lstat(s.dir); err == nil && !di.IsDir() {
		return nil, s.unusable(path, "its folder "+s.dir+" is not a folder (a symbolic link?); remove it and hermes recreates it")
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, s.unusable(path, "it is a symbolic link")
	}
	f, err := openNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	if err != nil {
		if isLoop(err) {
			return nil, s.unusable(path, "it is a symbolic link")
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, s.unusable(path, "it is not a regular file")
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return nil, s.unusable(path, fmt.Sprintf("it is owned by another user (uid %d)", uid))
	}
	if fi.Size() > maxBytes {
		return nil, s.unusable(path, tooLarge(maxBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > maxBytes {
		return nil, s.unusable(path, tooLarge(maxBytes))
	}
	return data, nil
}

func tooLarge(max int64) string {
	return fmt.Sprintf("it is over %d MiB, the server's max_message_mb; raise max_message_mb in its entry in config.yaml if its tools need more", (max+(1<<20)-1)>>20)
}

// unusable returns the error of a refused file, logging it the first time.
func (s *Store) unusable(path, reason string) error {
	err := &UnusableError{Path: path, Reason: reason}
	s.mu.Lock()
	seen := s.reported[err.Error()]
	s.reported[err.Error()] = true
	s.mu.Unlock()
	if !seen {
		s.log.Warn(err.Error())
	}
	return err
}

package tokenstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/sdk/auth"
)

// Store is one server's credential files in a token folder. Its methods
// are safe for concurrent use; across processes, writers that may race
// (refreshes) go through Lock or RefreshLocked.
type Store struct {
	dir    string
	server string
	stem   string

	// sem makes Lock exclusive within this Store: a flock is per open
	// file, and this Store opens a new one per Lock.
	sem chan struct{}

	// sealer, when set, seals and opens every file (NewSealed).
	sealer *sealer

	mu   sync.Mutex
	seen fileKey // the token file as last read or written by this Store
}

// fileKey identifies one version of a file; the zero value is "no file".
type fileKey struct {
	exists   bool
	size     int64
	mtime    int64 // ns
	dev, ino uint64
}

func keyOf(fi os.FileInfo) fileKey {
	if fi == nil {
		return fileKey{}
	}
	dev, ino := fileIdentity(fi)
	return fileKey{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), dev: dev, ino: ino}
}

// New returns the store of server's files in dir (Config.TokenDir,
// $HERMES_HOME/mcp-tokens). The files are named after
// auth.FileStem(server), so no server name reaches outside dir. Nothing is
// created until the first write or Lock; dir must not be "".
func New(dir, server string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("tokenstore: no token folder")
	}
	return &Store{
		dir:    filepath.Clean(dir),
		server: server,
		stem:   auth.FileStem(server),
		sem:    make(chan struct{}, 1),
	}, nil
}

// Dir returns the token folder.
func (s *Store) Dir() string { return s.dir }

// Server returns the server name the store was made for.
func (s *Store) Server() string { return s.server }

func (s *Store) path(suffix string) string { return filepath.Join(s.dir, s.stem+suffix) }

// TokenPath returns the token file, <stem>.json.
func (s *Store) TokenPath() string { return s.path(".json") }

// ClientPath returns the client file, <stem>.client.json.
func (s *Store) ClientPath() string { return s.path(".client.json") }

// ClientBackupPath returns where PoisonClient sets a client aside,
// <stem>.client.json.bak.
func (s *Store) ClientBackupPath() string { return s.path(".client.json.bak") }

// MetaPath returns the discovery file, <stem>.meta.json.
func (s *Store) MetaPath() string { return s.path(".meta.json") }

// LockPath returns the lock file, <stem>.lock.
func (s *Store) LockPath() string { return s.path(".lock") }

func (s *Store) remember(k fileKey) {
	s.mu.Lock()
	s.seen = k
	s.mu.Unlock()
}

// Load reads the token file. No file: (nil, nil). A corrupt file: nil and
// an error wrapping ErrCorrupt that names the file (log it and carry on as
// without a token; the file is left in place). A symbolic link: nil and
// ErrSymlink. A legacy file without expires_at gets ExpiresAt = the file's
// mtime + expires_in. Load records the file's version for Changed.
func (s *Store) Load() (*Token, error) {
	path := s.TokenPath()
	data, fi, err := s.readInfo(path)
	s.remember(keyOf(fi))
	if err != nil || data == nil {
		return nil, err
	}
	t, problem := decodeToken(data, fi.ModTime())
	if problem != "" {
		return nil, corruptError(path, problem)
	}
	return t, nil
}

// Save writes t to the token file atomically (0600, folder 0700). It first
// fills in, on t itself, ExpiresAt (now + ExpiresIn) and ObtainedAt (now)
// when they are 0, so t matches the file. t needs an access token. Save
// records the file's version for Changed. Use RefreshLocked, or Lock
// around Load and Save, when another process may refresh the same token.
func (s *Store) Save(t *Token) error {
	path := s.TokenPath()
	if t == nil || t.AccessToken == "" {
		return fmt.Errorf("tokenstore: save %s: the token has no access token", path)
	}
	now := time.Now().Unix()
	if t.ExpiresAt == 0 && t.ExpiresIn > 0 {
		t.ExpiresAt = addSeconds(now, t.ExpiresIn)
	}
	if t.ObtainedAt == 0 {
		t.ObtainedAt = now
	}
	data, err := t.encode()
	if err != nil {
		return fmt.Errorf("tokenstore: save %s: %w", path, err)
	}
	fi, err := s.write(path, data)
	if fi != nil {
		s.remember(keyOf(fi))
	}
	return err
}

// Changed reports whether the token file differs (mtime, size, inode, or
// existence) from the version this Store last read or wrote: another
// process (a `hermes mcp login` in another terminal, a refresh by another
// hermes) wrote it. Load to pick the change up. Before the first Load or
// Save, an existing file counts as changed.
func (s *Store) Changed() bool {
	var now fileKey
	fi, err := os.Lstat(s.TokenPath())
	switch {
	case err == nil:
		now = keyOf(fi)
	case !errors.Is(err, fs.ErrNotExist):
		return true // cannot tell: Load will say what is wrong
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return now != s.seen
}

// LoadClient reads the client file: (nil, nil) when there is none, errors
// as for Load (a file without client_id is corrupt).
func (s *Store) LoadClient() (*Client, error) {
	path := s.ClientPath()
	data, err := s.read(path)
	if err != nil || data == nil {
		return nil, err
	}
	c, problem := decodeClient(data)
	if problem != "" {
		return nil, corruptError(path, problem)
	}
	return c, nil
}

// SaveClient writes the client file atomically (0600). c needs a client
// ID.
func (s *Store) SaveClient(c *Client) error {
	path := s.ClientPath()
	if c == nil || c.ClientID == "" {
		return fmt.Errorf("tokenstore: save %s: the client has no client_id", path)
	}
	data, err := c.encode()
	if err != nil {
		return fmt.Errorf("tokenstore: save %s: %w", path, err)
	}
	_, err = s.write(path, data)
	return err
}

// LoadMeta reads the discovery file: (nil, nil) when there is none, errors
// as for Load. A file the original Hermes wrote (the authorization
// server's metadata itself) reads as Meta{Issuer, AuthServer}.
func (s *Store) LoadMeta() (*Meta, error) {
	path := s.MetaPath()
	data, err := s.read(path)
	if err != nil || data == nil {
		return nil, err
	}
	m, problem := decodeMeta(data)
	if problem != "" {
		return nil, corruptError(path, problem)
	}
	return m, nil
}

// SaveMeta writes the discovery file atomically (0600). m.AuthServer, when
// set, must be a JSON object.
func (s *Store) SaveMeta(m *Meta) error {
	path := s.MetaPath()
	if m == nil {
		return fmt.Errorf("tokenstore: save %s: no metadata", path)
	}
	data, err := m.encode()
	if err != nil {
		return fmt.Errorf("tokenstore: save %s: %w", path, err)
	}
	_, err = s.write(path, data)
	return err
}

// PoisonClient sets aside a client the authorization server rejected
// (invalid_client at the token endpoint): it moves <stem>.client.json to
// <stem>.client.json.bak (replacing an older backup) and removes
// <stem>.meta.json, so the next flow discovers and registers again. The
// token file is kept. A preregistered client (from the config) is never
// poisoned. It reports whether a client was set aside. A corrupt client
// file is set aside too. It does not take the lock: call it from inside
// RefreshLocked or Lock when that is where invalid_client was seen.
func (s *Store) PoisonClient() (bool, error) {
	c, err := s.LoadClient()
	switch {
	case err != nil && !errors.Is(err, ErrCorrupt):
		return false, err
	case err == nil && c == nil:
		return false, nil
	case c != nil && c.Kind == KindPreregistered:
		return false, nil
	}
	path, bak := s.ClientPath(), s.ClientBackupPath()
	if err := os.Rename(path, bak); err != nil {
		if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
			return false, nil
		}
		return false, fmt.Errorf("tokenstore: set aside %s: %w", path, unwrapPath(err))
	}
	var errs []error
	if err := os.Remove(s.MetaPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("tokenstore: %w", err))
	}
	if err := syncDir(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("tokenstore: sync folder %s: %w", s.dir, unwrapPath(err)))
	}
	return true, errors.Join(errs...)
}

// Remove deletes all of the server's files (token, client, client backup,
// meta, DPoP key, lock, and temp files an interrupted write left behind)
// and reports how many of the first six existed. A missing file is not an error. To
// keep a refresh in another process from writing the token back right
// after, call it under Lock (removing the lock file while holding it is
// safe: a waiter notices and locks the new file).
func (s *Store) Remove() (int, error) {
	n := 0
	var errs []error
	paths := []string{s.TokenPath(), s.ClientPath(), s.ClientBackupPath(), s.MetaPath(), s.DPoPKeyPath(), s.LockPath()}
	for _, p := range paths {
		err := os.Remove(p)
		switch {
		case err == nil:
			n++
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("tokenstore: %w", err))
		}
	}
	if entries, err := os.ReadDir(s.dir); err == nil {
		for _, e := range entries {
			for _, p := range paths[:len(paths)-1] { // all but the lock
				if strings.HasPrefix(e.Name(), filepath.Base(p)+".tmp.") {
					if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
						errs = append(errs, fmt.Errorf("tokenstore: %w", err))
					}
				}
			}
		}
	}
	s.remember(fileKey{})
	if n > 0 {
		if err := syncDir(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("tokenstore: sync folder %s: %w", s.dir, unwrapPath(err)))
		}
	}
	return n, errors.Join(errs...)
}

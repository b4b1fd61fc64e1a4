package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/hermes-agent/hermes/statedb"
)

// File names inside HERMES_HOME that the store reads.
const (
	// DBFile is the agent's SQLite session database.
	DBFile = statedb.FileName
	// IndexFile is the gateway's session index, relative to HERMES_HOME.
	IndexFile = "sessions/sessions.json"
	// DirectoryFile is the gateway's cached channel directory.
	DirectoryFile = "channel_directory.json"
)

// BusyTimeout is how long a query waits for a lock held by a writer before it
// fails with "database is locked" (statedb's).
const BusyTimeout = statedb.BusyTimeout

// Errors a caller can test with errors.Is.
var (
	// ErrNoHome means the HERMES_HOME folder does not exist.
	ErrNoHome = errors.New("hermes home not found")
	// ErrNoDatabase means state.db does not exist (yet): the agent has not
	// run in this HERMES_HOME. The store never creates it.
	ErrNoDatabase = statedb.ErrNoDatabase
)

// Home returns the agent's home folder: $HERMES_HOME when set, else
// ~/.hermes.
func Home() (string, error) {
	if h := os.Getenv("HERMES_HOME"); h != "" {
		return h, nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("hermes home: %w; set HERMES_HOME to the agent's home folder", err)
	}
	return filepath.Join(dir, ".hermes"), nil
}

// Store reads the session store under one HERMES_HOME. Its methods are safe
// for concurrent use. The database is opened on first use, so a state.db
// that appears after Open is found; Close releases it.
type Store struct {
	home   string
	dbPath string

	mu     sync.Mutex
	ro     *sql.DB   // read-only pool for sessions and messages
	rw     *sql.DB   // read-write pool for mcp_approvals, one connection
	watch  *sql.Conn // pinned read-only connection for PRAGMA data_version
	closed bool
}

// Open returns the store of the HERMES_HOME folder home. It fails only when
// home is not a folder (ErrNoHome); a missing state.db is reported by the
// calls that need it (ErrNoDatabase), so the sessions.json fallback still
// works.
func Open(home string) (*Store, error) {
	abs, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("hermes home %q: %w", home, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist; set HERMES_HOME to the agent's home folder", ErrNoHome, abs)
		}
		return nil, fmt.Errorf("hermes home %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder; set HERMES_HOME to the agent's home folder", ErrNoHome, abs)
	}
	return &Store{home: abs, dbPath: filepath.Join(abs, DBFile)}, nil
}

// Home returns the absolute HERMES_HOME folder of the store.
func (s *Store) Home() string { return s.home }

// DBPath returns the absolute path of state.db (which may not exist).
func (s *Store) DBPath() string { return s.dbPath }

// Close releases the database connections. The store is unusable after.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	if s.watch != nil {
		errs = append(errs, s.watch.Close())
		s.watch = nil
	}
	if s.ro != nil {
		errs = append(errs, s.ro.Close())
		s.ro = nil
	}
	if s.rw != nil {
		errs = append(errs, s.rw.Close())
		s.rw = nil
	}
	return errors.Join(errs...)
}

var errClosed = errors.New("session store closed")

// readDB returns the read-only pool, opening it on first use.
func (s *Store) readDB() (*sql.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.ro != nil {
		return s.ro, nil
	}
	// Read-only: never creates the file, never writes it. A WAL reader
	// may still create the -shm index, which SQLite needs to read a WAL
	// database.
	db, err := statedb.OpenRead(s.dbPath)
	if err != nil {
		return nil, err
	}
	s.ro = db
	return db, nil
}

// writeDB returns the read-write pool used for mcp_approvals only.
func (s *Store) writeDB() (*sql.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.rw != nil {
		return s.rw, nil
	}
	// Writable, but never creates state.db; one connection whose
	// transactions begin IMMEDIATE, so a decision is atomic across
	// processes.
	db, err := statedb.OpenWrite(s.dbPath)
	if err != nil {
		return nil, err
	}
	s.rw = db
	return db, nil
}

// columns returns the column names of table (empty when the table does
// not exist).
func columns(ctx context.Context, q statedb.Queryer, table string) (map[string]bool, error) {
	return statedb.Columns(ctx, q, table)
}

package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// FileName is the database's name inside HERMES_HOME.
const FileName = "state.db"

// DriverName is the database/sql driver every connection uses.
const DriverName = "sqlite"

// BusyTimeout is how long a statement waits for a lock another connection
// (another process) holds before it fails with "database is locked".
const BusyTimeout = 5 * time.Second

// ErrNoDatabase means state.db does not exist (yet). Readers never create
// it.
var ErrNoDatabase = errors.New("session database not found")

// Mode is how a connection opens the file.
type Mode string

// The modes of DSN.
const (
	// ReadOnly never writes and never creates the file (query_only too).
	ReadOnly Mode = "ro"
	// ReadWrite writes but never creates the file.
	ReadWrite Mode = "rw"
	// Create writes and creates the file when it is missing.
	Create Mode = "rwc"
)

// DSN returns the driver's file: URI for path in mode, with the busy
// timeout; writable modes begin their transactions IMMEDIATE (the write
// lock is taken first, so a read-then-write sees one state across
// processes).
func DSN(path string, mode Mode) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), OmitHost: true}
	params := url.Values{"mode": {string(mode)}}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	if mode == ReadOnly {
		params.Add("_pragma", "query_only(1)")
	} else {
		params.Set("_txlock", "immediate")
	}
	u.RawQuery = params.Encode()
	return u.String()
}

// CheckFile reports ErrNoDatabase when path does not exist, and an error
// when it is not a regular file.
func CheckFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s does not exist; run the agent once in this HERMES_HOME to create it", ErrNoDatabase, path)
		}
		return fmt.Errorf("session database %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("session database %s is not a regular file; move it aside and run the agent to recreate it", path)
	}
	return nil
}

// OpenRead opens an existing database read-only (a pool of up to four
// connections). The file must exist (ErrNoDatabase).
func OpenRead(path string) (*sql.DB, error) {
	if err := CheckFile(path); err != nil {
		return nil, err
	}
	db, err := sql.Open(DriverName, DSN(path, ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("open %s read-only: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	return db, nil
}

// OpenWrite opens an existing database for writing on one connection
// (writes to SQLite serialise anyway). The file must exist
// (ErrNoDatabase).
func OpenWrite(path string) (*sql.DB, error) {
	if err := CheckFile(path); err != nil {
		return nil, err
	}
	db, err := sql.Open(DriverName, DSN(path, ReadWrite))
	if err != nil {
		return nil, fmt.Errorf("open %s read-write: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Queryer is what *sql.DB, *sql.Conn and *sql.Tx have in common for reads.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Execer is what *sql.DB, *sql.Conn and *sql.Tx have in common for writes.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Columns returns the column names of table (empty when the table does not
// exist).
func Columns(ctx context.Context, q Queryer, table string) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", table, err)
		}
		cols[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", table, err)
	}
	return cols, nil
}

// Now is the current time as the agent stores it: float seconds since the
// epoch.
func Now() float64 { return UnixSeconds(time.Now()) }

// UnixSeconds converts t to float seconds since the epoch.
func UnixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

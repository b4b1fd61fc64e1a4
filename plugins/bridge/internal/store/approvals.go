package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The decisions permissions_respond accepts.
const (
	DecisionAllowOnce   = "allow-once"
	DecisionAllowAlways = "allow-always"
	DecisionDeny        = "deny"
)

// Approval kinds the agent asks for.
const (
	KindExec   = "exec"
	KindPlugin = "plugin"
)

// Approval is one row of the mcp_approvals table: a request of the agent
// for permission, open until a decision is recorded.
type Approval struct {
	ID          string
	Kind        string
	Description string
	SessionKey  string
	// CreatedAt is when the agent asked, in float seconds since the epoch.
	CreatedAt float64
	// Decision is "" while the approval is open.
	Decision string
	// DecidedAt is when the decision was recorded, 0 while open.
	DecidedAt float64
}

// Errors of Respond, for errors.Is.
var (
	// ErrApprovalNotFound matches a Respond to an id that is not open:
	// unknown, or already decided.
	ErrApprovalNotFound = errors.New("approval not found")
	// ErrAlreadyDecided matches a Respond to an approval that was decided
	// before (it matches ErrApprovalNotFound too).
	ErrAlreadyDecided = errors.New("approval already decided")
	// ErrInvalidDecision matches a decision other than allow-once,
	// allow-always and deny.
	ErrInvalidDecision = errors.New("invalid decision")
)

// NotFoundError is the error of a Respond to an approval that is not open.
// Its text is the bridge's tool error: "Approval not found: <id>" for an
// unknown id (as in the original bridge), and for one decided before
// "Approval <id> was already decided (<decision>); ...", since a client
// that answers twice must learn that its first answer stood. Decided and
// errors.Is(err, ErrAlreadyDecided) tell the second case apart.
type NotFoundError struct {
	ID string
	// Decided is true when the approval exists and was decided before,
	// with Decision.
	Decided  bool
	Decision string
}

// Error returns "Approval not found: <id>", or for a decided approval the
// decision that stands and where the open ones are listed.
func (e *NotFoundError) Error() string {
	if e.Decided {
		return "Approval " + e.ID + " was already decided (" + e.Decision + "); only open approvals can be answered: list them with permissions_list_open"
	}
	return "Approval not found: " + e.ID
}

// Is matches ErrApprovalNotFound, and ErrAlreadyDecided when Decided.
func (e *NotFoundError) Is(target error) bool {
	return target == ErrApprovalNotFound || (e.Decided && target == ErrAlreadyDecided)
}

// InvalidDecisionError is the error of a decision that is not allow-once,
// allow-always or deny; its text is the bridge's tool error.
type InvalidDecisionError struct{ Decision string }

// Error returns "Invalid decision: X. Must be allow-once, allow-always, or
// deny".
func (e *InvalidDecisionError) Error() string {
	return "Invalid decision: " + e.Decision + ". Must be allow-once, allow-always, or deny"
}

// Is matches ErrInvalidDecision.
func (e *InvalidDecisionError) Is(target error) bool { return target == ErrInvalidDecision }

// ValidateDecision returns an *InvalidDecisionError unless decision is one
// of the three decisions.
func ValidateDecision(decision string) error {
	switch decision {
	case DecisionAllowOnce, DecisionAllowAlways, DecisionDeny:
		return nil
	}
	return &InvalidDecisionError{Decision: decision}
}

const approvalsSchema = `CREATE TABLE IF NOT EXISTS mcp_approvals (
	id TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	session_key TEXT NOT NULL DEFAULT '',
	created_at REAL NOT NULL,
	decision TEXT,
	decided_at REAL
);
CREATE INDEX IF NOT EXISTS idx_mcp_approvals_open ON mcp_approvals (decision, created_at)`

const approvalColumns = "id, kind, description, session_key, created_at, decision, decided_at"

// EnsureApprovals creates the mcp_approvals table in state.db when it is
// missing. Create and Respond call it; the bridge may call it at start so
// the agent finds the table.
func (s *Store) EnsureApprovals(ctx context.Context) error {
	db, err := s.writeDB()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, approvalsSchema); err != nil {
		return fmt.Errorf("create mcp_approvals in %s: %w", s.dbPath, err)
	}
	return nil
}

// CreateApproval records a new open approval. An empty ID gets a random
// one and a zero CreatedAt the current time; Decision and DecidedAt are
// ignored. It returns the approval as stored. This is the agent's side of
// the table; the bridge itself only lists and decides.
func (s *Store) CreateApproval(ctx context.Context, a Approval) (Approval, error) {
	if a.ID == "" {
		var b [12]byte
		if _, err := rand.Read(b[:]); err != nil {
			return Approval{}, fmt.Errorf("new approval id: %w", err)
		}
		a.ID = hex.EncodeToString(b[:])
	}
	if a.CreatedAt == 0 {
		a.CreatedAt = float64(time.Now().UnixNano()) / 1e9
	}
	a.Decision, a.DecidedAt = "", 0
	if err := s.EnsureApprovals(ctx); err != nil {
		return Approval{}, err
	}
	db, err := s.writeDB()
	if err != nil {
		return Approval{}, err
	}
	_, err = db.ExecContext(ctx,
		"INSERT INTO mcp_approvals (id, kind, description, session_key, created_at) VALUES (?, ?, ?, ?, ?)",
		a.ID, a.Kind, a.Description, a.SessionKey, a.CreatedAt)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return Approval{}, fmt.Errorf("approval %q already exists; create it with another id", a.ID)
		}
		return Approval{}, fmt.Errorf("create approval %q in %s: %w", a.ID, s.dbPath, err)
	}
	return a, nil
}

// OpenApprovals lists the approvals without a decision, oldest first. A
// database without the mcp_approvals table has none.
func (s *Store) OpenApprovals(ctx context.Context) ([]Approval, error) {
	return s.queryApprovals(ctx, "WHERE decision IS NULL ORDER BY created_at, id")
}

// ApprovalsSince lists the approvals created or decided at or after since
// (float seconds since the epoch), in the order of their latest change: a
// watcher turns them into approval_requested and approval_resolved
// events, keeping the ids and decisions it has already reported.
func (s *Store) ApprovalsSince(ctx context.Context, since float64) ([]Approval, error) {
	return s.queryApprovals(ctx,
		"WHERE created_at >= ? OR decided_at >= ? ORDER BY MAX(created_at, COALESCE(decided_at, created_at)), id",
		since, since)
}

// Approval returns the approval with id id; found is false when there is
// none.
func (s *Store) Approval(ctx context.Context, id string) (a Approval, found bool, err error) {
	list, err := s.queryApprovals(ctx, "WHERE id = ?", id)
	if err != nil || len(list) == 0 {
		return Approval{}, false, err
	}
	return list[0], true, nil
}

func (s *Store) queryApprovals(ctx context.Context, tail string, args ...any) ([]Approval, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	cols, err := columns(ctx, db, "mcp_approvals")
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return []Approval{}, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT "+approvalColumns+" FROM mcp_approvals "+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("approvals in %s: %w", s.dbPath, err)
	}
	list, err := scanApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("approvals in %s: %w", s.dbPath, err)
	}
	return list, nil
}

func scanApprovals(rows *sql.Rows) ([]Approval, error) {
	defer rows.Close()
	out := []Approval{}
	for rows.Next() {
		var id, kind, desc, key, created, decision, decided any
		if err := rows.Scan(&id, &kind, &desc, &key, &created, &decision, &decided); err != nil {
			return nil, err
		}
		out = append(out, Approval{
			ID:          sqlString(id),
			Kind:        sqlString(kind),
			Description: sqlString(desc),
			SessionKey:  sqlString(key),
			CreatedAt:   NewTimestamp(created).Unix(),
			Decision:    sqlString(decision),
			DecidedAt:   NewTimestamp(decided).Unix(),
		})
	}
	return out, rows.Err()
}

// Respond records decision for the open approval id, atomically: of two
// responders (in this or another process) exactly one succeeds, the other
// gets a *NotFoundError with Decided set. An invalid decision is an
// *InvalidDecisionError, an unknown id a *NotFoundError. It returns the
// decided approval.
func (s *Store) Respond(ctx context.Context, id, decision string) (Approval, error) {
	if err := ValidateDecision(decision); err != nil {
		return Approval{}, err
	}
	if err := s.EnsureApprovals(ctx); err != nil {
		return Approval{}, err
	}
	db, err := s.writeDB()
	if err != nil {
		return Approval{}, err
	}
	// The DSN makes this BEGIN IMMEDIATE: the write lock is taken first,
	// so the check and the update see one state across processes.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q in %s: %w", id, s.dbPath, err)
	}
	defer tx.Rollback()
	now := float64(time.Now().UnixNano()) / 1e9
	res, err := tx.ExecContext(ctx,
		"UPDATE mcp_approvals SET decision = ?, decided_at = ? WHERE id = ? AND decision IS NULL",
		decision, now, id)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q in %s: %w", id, s.dbPath, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q in %s: %w", id, s.dbPath, err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+approvalColumns+" FROM mcp_approvals WHERE id = ?", id)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q in %s: %w", id, s.dbPath, err)
	}
	list, err := scanApprovals(rows)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q in %s: %w", id, s.dbPath, err)
	}
	if n == 0 || len(list) == 0 {
		if len(list) == 0 {
			return Approval{}, &NotFoundError{ID: id}
		}
		return Approval{}, &NotFoundError{ID: id, Decided: true, Decision: list[0].Decision}
	}
	if err := tx.Commit(); err != nil {
		return Approval{}, fmt.Errorf("decide approval %q in %s: %w", id, s.dbPath, err)
	}
	return list[0], nil
}

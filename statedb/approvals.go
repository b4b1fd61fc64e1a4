package statedb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The decisions permissions_respond accepts.
const (
	DecisionAllowOnce   = "allow-once"
	DecisionAllowAlways = "allow-always"
	DecisionDeny        = "deny"
)

// Approval kinds: the original agent asks for exec and plugin approvals;
// the host asks for KindTool (a call of an MCP server's tool).
const (
	KindExec   = "exec"
	KindPlugin = "plugin"
	KindTool   = "tool"
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

const approvalColumns = "id, kind, description, session_key, created_at, decision, decided_at"

// EnsureApprovals creates the mcp_approvals and mcp_tool_grants tables when
// they are missing (db must be writable).
func EnsureApprovals(ctx context.Context, db Execer) error {
	if _, err := db.ExecContext(ctx, approvalsDDL); err != nil {
		return fmt.Errorf("create mcp_approvals: %w", err)
	}
	return nil
}

// NewApprovalID returns a fresh random approval id (24 hex digits).
func NewApprovalID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new approval id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ErrApprovalExists matches CreateApproval of an id that is taken.
var ErrApprovalExists = errors.New("approval already exists")

// CreateApproval records a new open approval through db (a writable
// connection of OpenWrite or a Writer's DB). An empty ID gets a random one
// and a zero CreatedAt the current time; Decision and DecidedAt are
// ignored. It returns the approval as stored.
func CreateApproval(ctx context.Context, db *sql.DB, a Approval) (Approval, error) {
	if a.ID == "" {
		id, err := NewApprovalID()
		if err != nil {
			return Approval{}, err
		}
		a.ID = id
	}
	if a.CreatedAt == 0 {
		a.CreatedAt = Now()
	}
	a.Decision, a.DecidedAt = "", 0
	if err := EnsureApprovals(ctx, db); err != nil {
		return Approval{}, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return Approval{}, fmt.Errorf("create approval %q: %w", a.ID, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM mcp_approvals WHERE id = ?", a.ID).Scan(&n); err != nil {
		return Approval{}, fmt.Errorf("create approval %q: %w", a.ID, err)
	}
	if n > 0 {
		return Approval{}, fmt.Errorf("%w: %q; create it with another id", ErrApprovalExists, a.ID)
	}
	if _, err := tx.ExecContext(ctx,
		"INSERT INTO mcp_approvals (id, kind, description, session_key, created_at) VALUES (?, ?, ?, ?, ?)",
		a.ID, a.Kind, a.Description, a.SessionKey, a.CreatedAt); err != nil {
		return Approval{}, fmt.Errorf("create approval %q: %w", a.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return Approval{}, fmt.Errorf("create approval %q: %w", a.ID, err)
	}
	return a, nil
}

// OpenApprovals lists the approvals without a decision, oldest first. A
// database without the mcp_approvals table has none.
func OpenApprovals(ctx context.Context, q Queryer) ([]Approval, error) {
	return queryApprovals(ctx, q, "WHERE decision IS NULL ORDER BY created_at, id")
}

// ApprovalsSince lists the approvals created or decided at or after since
// (float seconds since the epoch), in the order of their latest change.
func ApprovalsSince(ctx context.Context, q Queryer, since float64) ([]Approval, error) {
	return queryApprovals(ctx, q,
		"WHERE created_at >= ? OR decided_at >= ? ORDER BY MAX(created_at, COALESCE(decided_at, created_at)), id",
		since, since)
}

// GetApproval returns the approval with id id; found is false when there
// is none.
func GetApproval(ctx context.Context, q Queryer, id string) (a Approval, found bool, err error) {
	list, err := queryApprovals(ctx, q, "WHERE id = ?", id)
	if err != nil || len(list) == 0 {
		return Approval{}, false, err
	}
	return list[0], true, nil
}

func queryApprovals(ctx context.Context, q Queryer, tail string, args ...any) ([]Approval, error) {
	cols, err := Columns(ctx, q, "mcp_approvals")
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return []Approval{}, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT "+approvalColumns+" FROM mcp_approvals "+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	list, err := scanApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
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

// Respond records decision for the open approval id through db (a
// writable connection whose transactions begin IMMEDIATE, as OpenWrite's
// and a Writer's do), atomically: one conditional UPDATE (decision IS
// NULL), so of two responders (in this or another process) exactly one
// succeeds and the other gets a *NotFoundError with Decided set and the
// decision that stood. An invalid decision is an *InvalidDecisionError, an
// unknown id a *NotFoundError. It returns the decided approval.
func Respond(ctx context.Context, db *sql.DB, id, decision string) (Approval, error) {
	if err := ValidateDecision(decision); err != nil {
		return Approval{}, err
	}
	if err := EnsureApprovals(ctx, db); err != nil {
		return Approval{}, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx,
		"UPDATE mcp_approvals SET decision = ?, decided_at = ? WHERE id = ? AND decision IS NULL",
		decision, Now(), id)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+approvalColumns+" FROM mcp_approvals WHERE id = ?", id)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q: %w", id, err)
	}
	list, err := scanApprovals(rows)
	if err != nil {
		return Approval{}, fmt.Errorf("decide approval %q: %w", id, err)
	}
	if n == 0 || len(list) == 0 {
		if len(list) == 0 {
			return Approval{}, &NotFoundError{ID: id}
		}
		return Approval{}, &NotFoundError{ID: id, Decided: true, Decision: list[0].Decision}
	}
	if err := tx.Commit(); err != nil {
		return Approval{}, fmt.Errorf("decide approval %q: %w", id, err)
	}
	return list[0], nil
}

// Grant is a remembered allow-always of one tool of one server (a row of
// mcp_tool_grants): its calls no longer ask.
type Grant struct {
	Server string
	// Tool is the tool's name as the server names it.
	Tool string
	// GrantedAt is when it was granted, float seconds since the epoch.
	GrantedAt float64
	// ApprovalID is the approval whose allow-always granted it.
	ApprovalID string
}

// AddGrant remembers allow-always for server's tool (replacing an earlier
// grant of it).
func AddGrant(ctx context.Context, db *sql.DB, g Grant) error {
	if err := EnsureApprovals(ctx, db); err != nil {
		return err
	}
	if g.GrantedAt == 0 {
		g.GrantedAt = Now()
	}
	if _, err := db.ExecContext(ctx,
		"INSERT OR REPLACE INTO mcp_tool_grants (server, tool, granted_at, approval_id) VALUES (?, ?, ?, ?)",
		g.Server, g.Tool, g.GrantedAt, g.ApprovalID); err != nil {
		return fmt.Errorf("remember allow-always of %s/%s: %w", g.Server, g.Tool, err)
	}
	return nil
}

// Grants lists the grants of server ("" for every server), by server and
// tool. A database without the table has none.
func Grants(ctx context.Context, q Queryer, server string) ([]Grant, error) {
	cols, err := Columns(ctx, q, "mcp_tool_grants")
	if err != nil || len(cols) == 0 {
		return nil, err
	}
	query := "SELECT server, tool, granted_at, approval_id FROM mcp_tool_grants"
	var args []any
	if server != "" {
		query += " WHERE server = ?"
		args = append(args, server)
	}
	rows, err := q.QueryContext(ctx, query+" ORDER BY server, tool", args...)
	if err != nil {
		return nil, fmt.Errorf("allow-always grants: %w", err)
	}
	defer rows.Close()
	var out []Grant
	for rows.Next() {
		var s, t, at, id any
		if err := rows.Scan(&s, &t, &at, &id); err != nil {
			return nil, fmt.Errorf("allow-always grants: %w", err)
		}
		out = append(out, Grant{Server: sqlString(s), Tool: sqlString(t), GrantedAt: NewTimestamp(at).Unix(), ApprovalID: sqlString(id)})
	}
	return out, rows.Err()
}

// RevokeGrants forgets the grants of server: of the tools named, or all of
// them when none is named. It returns how many it removed.
func RevokeGrants(ctx context.Context, db *sql.DB, server string, tools ...string) (int64, error) {
	if err := EnsureApprovals(ctx, db); err != nil {
		return 0, err
	}
	query := "DELETE FROM mcp_tool_grants WHERE server = ?"
	args := []any{server}
	if len(tools) > 0 {
		query += " AND tool IN (?" + strings.Repeat(", ?", len(tools)-1) + ")"
		for _, t := range tools {
			args = append(args, t)
		}
	}
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("revoke allow-always of %s: %w", server, err)
	}
	return res.RowsAffected()
}

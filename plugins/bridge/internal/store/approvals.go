package store

import (
	"context"

	"github.com/hermes-agent/hermes/statedb"
)

// The decisions permissions_respond accepts (statedb's).
const (
	DecisionAllowOnce   = statedb.DecisionAllowOnce
	DecisionAllowAlways = statedb.DecisionAllowAlways
	DecisionDeny        = statedb.DecisionDeny
)

// Approval kinds (statedb's).
const (
	KindExec   = statedb.KindExec
	KindPlugin = statedb.KindPlugin
	KindTool   = statedb.KindTool
)

// Approval is one row of the mcp_approvals table (statedb.Approval).
type Approval = statedb.Approval

// NotFoundError is the error of a Respond to an approval that is not open
// (statedb.NotFoundError); its text is the bridge's tool error.
type NotFoundError = statedb.NotFoundError

// InvalidDecisionError is the error of an invalid decision
// (statedb.InvalidDecisionError); its text is the bridge's tool error.
type InvalidDecisionError = statedb.InvalidDecisionError

// Errors of Respond, for errors.Is (statedb's).
var (
	ErrApprovalNotFound = statedb.ErrApprovalNotFound
	ErrAlreadyDecided   = statedb.ErrAlreadyDecided
	ErrInvalidDecision  = statedb.ErrInvalidDecision
)

// ValidateDecision returns an *InvalidDecisionError unless decision is one
// of the three decisions.
func ValidateDecision(decision string) error { return statedb.ValidateDecision(decision) }

// EnsureApprovals creates the approval tables in state.db when they are
// missing.
func (s *Store) EnsureApprovals(ctx context.Context) error {
	db, err := s.writeDB()
	if err != nil {
		return err
	}
	return statedb.EnsureApprovals(ctx, db)
}

// CreateApproval records a new open approval (statedb.CreateApproval):
// the agent's side of the table, which the bridge's tests use; the bridge
// itself only lists and decides.
func (s *Store) CreateApproval(ctx context.Context, a Approval) (Approval, error) {
	db, err := s.writeDB()
	if err != nil {
		return Approval{}, err
	}
	return statedb.CreateApproval(ctx, db, a)
}

// OpenApprovals lists the approvals without a decision, oldest first. A
// database without the mcp_approvals table has none.
func (s *Store) OpenApprovals(ctx context.Context) ([]Approval, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	return statedb.OpenApprovals(ctx, db)
}

// ApprovalsSince lists the approvals created or decided at or after since
// (float seconds since the epoch), in the order of their latest change: a
// watcher turns them into approval_requested and approval_resolved
// events, keeping the ids and decisions it has already reported.
func (s *Store) ApprovalsSince(ctx context.Context, since float64) ([]Approval, error) {
	db, err := s.readDB()
	if err != nil {
		return nil, err
	}
	return statedb.ApprovalsSince(ctx, db, since)
}

// Approval returns the approval with id id; found is false when there is
// none.
func (s *Store) Approval(ctx context.Context, id string) (a Approval, found bool, err error) {
	db, err := s.readDB()
	if err != nil {
		return Approval{}, false, err
	}
	return statedb.GetApproval(ctx, db, id)
}

// Respond records decision for the open approval id, atomically
// (statedb.Respond): of two responders (in this or another process)
// exactly one succeeds, the other gets a *NotFoundError with Decided set.
func (s *Store) Respond(ctx context.Context, id, decision string) (Approval, error) {
	if err := ValidateDecision(decision); err != nil {
		return Approval{}, err
	}
	db, err := s.writeDB()
	if err != nil {
		return Approval{}, err
	}
	return statedb.Respond(ctx, db, id, decision)
}

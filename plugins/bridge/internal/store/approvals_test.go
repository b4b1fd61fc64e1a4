package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestApprovalsLifecycle(t *testing.T) {
	s := open(t, home(t, "current", false))
	if pending, err := s.OpenApprovals(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("before the table exists: %v %v, want none", pending, err)
	}
	a, err := s.CreateApproval(ctx, Approval{ID: "a1", Kind: KindExec, Description: "rm -rf build", SessionKey: "agent:main:telegram:dm:123456", CreatedAt: 200})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateApproval(ctx, Approval{ID: "a0", Kind: KindPlugin, Description: "install x", CreatedAt: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateApproval(ctx, Approval{ID: "a1", Kind: KindExec}); err == nil {
		t.Fatal("duplicate id: no error")
	}
	gen, err := s.CreateApproval(ctx, Approval{Kind: KindExec})
	if err != nil || gen.ID == "" || gen.CreatedAt == 0 {
		t.Fatalf("generated id and time: %+v %v", gen, err)
	}
	pending, err := s.OpenApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 3 || pending[0].ID != "a0" || pending[1] != a {
		t.Fatalf("open approvals = %+v, want a0, a1, %s by created_at", pending, gen.ID)
	}

	got, err := s.Respond(ctx, "a1", DecisionAllowOnce)
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision != DecisionAllowOnce || got.DecidedAt == 0 || got.Description != a.Description {
		t.Fatalf("decided approval = %+v", got)
	}
	_, err = s.Respond(ctx, "a1", DecisionDeny)
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != "Approval a1 was already decided (allow-once); only open approvals can be answered: list them with permissions_list_open" || !errors.Is(err, ErrAlreadyDecided) || !errors.Is(err, ErrApprovalNotFound) || nf.Decision != DecisionAllowOnce {
		t.Fatalf("second decision = %v (%+v), want \"already decided\" matching ErrAlreadyDecided", err, nf)
	}
	_, err = s.Respond(ctx, "zzz", DecisionDeny)
	if err == nil || err.Error() != "Approval not found: zzz" || errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("unknown id = %v", err)
	}
	_, err = s.Respond(ctx, "a0", "maybe")
	if err == nil || err.Error() != "Invalid decision: maybe. Must be allow-once, allow-always, or deny" || !errors.Is(err, ErrInvalidDecision) {
		t.Fatalf("invalid decision = %v", err)
	}
	if pending, _ := s.OpenApprovals(ctx); len(pending) != 2 {
		t.Fatalf("after one decision %d open, want 2", len(pending))
	}
	if got, found, err := s.Approval(ctx, "a1"); err != nil || !found || got.Decision != DecisionAllowOnce {
		t.Fatalf("Approval(a1) = %+v %v %v", got, found, err)
	}
	changed, err := s.ApprovalsSince(ctx, 150)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range changed {
		ids[c.ID] = true
	}
	if !ids["a1"] || !ids[gen.ID] || ids["a0"] {
		t.Fatalf("ApprovalsSince(150) = %+v, want a1 and %s", changed, gen.ID)
	}
	// The table is in state.db, where another reader (the agent) finds it.
	other := open(t, s.Home())
	if got, found, err := other.Approval(ctx, "a1"); err != nil || !found || got.Decision != DecisionAllowOnce {
		t.Fatalf("from another store: %+v %v %v", got, found, err)
	}
}

// TestRespondRace decides one approval from many stores at once (as many
// processes would, each with its own connections): exactly one wins.
func TestRespondRace(t *testing.T) {
	dir := home(t, "current", false)
	s := open(t, dir)
	const rounds, responders = 5, 8
	stores := make([]*Store, responders)
	for i := range stores {
		stores[i] = open(t, dir)
	}
	decisions := []string{DecisionAllowOnce, DecisionAllowAlways, DecisionDeny}
	for r := 0; r < rounds; r++ {
		id := fmt.Sprintf("race-%d", r)
		if _, err := s.CreateApproval(ctx, Approval{ID: id, Kind: KindExec}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([]error, responders)
		winners := make([]Approval, responders)
		for i := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				winners[i], results[i] = stores[i].Respond(ctx, id, decisions[i%len(decisions)])
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range results {
			switch {
			case err == nil:
				if won >= 0 {
					t.Fatalf("round %d: responders %d and %d both won", r, won, i)
				}
				won = i
			case !errors.Is(err, ErrAlreadyDecided):
				t.Fatalf("round %d responder %d: %v, want ErrAlreadyDecided", r, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: nobody won", r)
		}
		got, _, err := s.Approval(ctx, id)
		if err != nil || got.Decision != winners[won].Decision {
			t.Fatalf("round %d: stored %+v, winner %+v (%v)", r, got, winners[won], err)
		}
	}
}

package cmdkit

import (
	"context"
	"errors"

	"github.com/hermes-agent/hermes/host/approval"
	"github.com/hermes-agent/hermes/statedb"
)

// ApprovalSettings reads config.yaml's approval: block. The chat's gate
// (chatApprover) is built from them, asking at this run's terminal
// through the prompter that elicitation uses (so the two take turns) and
// recording in state.db; /reload-mcp reads them again.
func ApprovalSettings(e *Env) (approval.Settings, error) {
	return e.F.Requests().ApprovalSettings()
}

// AlwaysAllowed returns the tools of server (its config.Server.StateKey)
// whose calls no longer ask for
// approval (allow-always, remembered in state.db); none when state.db does
// not exist: reading never creates it.
func AlwaysAllowed(e *Env, ctx context.Context, server string) ([]string, error) {
	db, err := statedb.OpenRead(e.F.Home.StateDB())
	if errors.Is(err, statedb.ErrNoDatabase) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	grants, err := statedb.Grants(ctx, db, server)
	if err != nil {
		return nil, err
	}
	var tools []string
	for _, g := range grants {
		tools = append(tools, g.Tool)
	}
	return tools, nil
}

// RevokeAlways forgets allow-always of server's tools (every tool for
// "all") and returns how many were forgotten.
func RevokeAlways(e *Env, ctx context.Context, server string, tools []string) (int64, error) {
	db, err := statedb.OpenWrite(e.F.Home.StateDB())
	if errors.Is(err, statedb.ErrNoDatabase) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer db.Close()
	for _, t := range tools {
		if t == "all" {
			tools = nil
			break
		}
	}
	return statedb.RevokeGrants(ctx, db, server, tools...)
}

package project

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"os"
	"time"

	"github.com/hermes-agent/hermes/host/atomicfile"
	"github.com/hermes-agent/hermes/host/config"
)

// ApprovalsFile is the file in $HERMES_HOME that holds the person's
// decisions on project entries. It is hermes's own state (0600, replaced
// atomically under a lock): a repository cannot approve itself.
const ApprovalsFile = homedir.ProjectApprovalsName

// maxApprovalsBytes bounds the approvals file.
const maxApprovalsBytes = 4 << 20

// Decision is the person's decision on one project entry.
type Decision struct {
	// Digest is the entry's digest when it was decided; the decision
	// holds for that digest only.
	Digest string `json:"digest"`
	// Decision is config.ApprovalApproved or config.ApprovalRejected.
	Decision string `json:"decision"`
	// Unsandboxed: approved to run without the project sandbox.
	Unsandboxed bool `json:"unsandboxed,omitempty"`
	// At is when it was decided.
	At time.Time `json:"at"`
}

// decisions is the approvals file: project root → server name → Decision.
type decisions struct {
	Version  int                            `json:"version"`
	Projects map[string]map[string]Decision `json:"projects"`
}

func (d *decisions) lookup(root, name string) (Decision, bool) {
	if d == nil {
		return Decision{}, false
	}
	x, ok := d.Projects[root][name]
	return x, ok
}

func approvalsPath(home string) string { return homedir.Dir(home).ProjectApprovals() }

// readDecisions reads the approvals file; a missing file holds none. A
// file that does not read back is an error naming it: a decision is never
// guessed.
func readDecisions(home string) (*decisions, error) {
	b, err := atomicfile.ReadSmall(approvalsPath(home), maxApprovalsBytes)
	if isNotExist(err) {
		return &decisions{}, nil
	}
	if err != nil {
		return nil, err
	}
	d := &decisions{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("%s does not read back (%v); delete it and approve the project servers again", approvalsPath(home), err)
	}
	return d, nil
}

// Decide records decision (config.ApprovalApproved or
// config.ApprovalRejected) on srv, a project entry, for its current digest.
// unsandboxed approves it to run without the project sandbox. An entry in
// error (srv.Err: it could not be read, or a project file may not declare
// it so) is never approved, and one without a digest gets no decision.
func Decide(home string, srv *config.Server, decision string, unsandboxed bool) error {
	if !srv.FromProject() {
		return fmt.Errorf("server '%s' is not a project server; it needs no approval", srv.Name)
	}
	if decision != config.ApprovalApproved && decision != config.ApprovalRejected {
		return fmt.Errorf("decision %q: want %s or %s", decision, config.ApprovalApproved, config.ApprovalRejected)
	}
	if decision == config.ApprovalApproved && srv.Err != nil {
		return fmt.Errorf("server '%s' cannot be approved: %s", srv.Name, srv.Err)
	}
	if srv.Origin.Digest == "" {
		return fmt.Errorf("server '%s' of %s cannot be identified, so no decision on it can be kept; fix its entry in the project file", srv.Name, srv.Origin.File)
	}
	return update(home, func(d *decisions) {
		m := d.Projects[srv.Origin.Project]
		if m == nil {
			m = map[string]Decision{}
			d.Projects[srv.Origin.Project] = m
		}
		m[srv.Name] = Decision{Digest: srv.Origin.Digest, Decision: decision, Unsandboxed: unsandboxed && decision == config.ApprovalApproved, At: time.Now().UTC()}
	})
}

// Forget drops every decision on the project at root (hermes mcp
// reset-project-choices) and returns how many there were.
func Forget(home, root string) (int, error) {
	n := 0
	err := update(home, func(d *decisions) {
		n = len(d.Projects[root])
		delete(d.Projects, root)
	})
	return n, err
}

// update changes the approvals file under its lock.
func update(home string, change func(*decisions)) error {
	path := approvalsPath(home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", home, err)
	}
	return atomicfile.Update(path, maxApprovalsBytes, func(old []byte) ([]byte, error) {
		d := &decisions{}
		if len(old) > 0 {
			if err := json.Unmarshal(old, d); err != nil {
				return nil, fmt.Errorf("%s does not read back (%v); delete it and approve the project servers again", path, err)
			}
		}
		if d.Projects == nil {
			d.Projects = map[string]map[string]Decision{}
		}
		d.Version = 1
		change(d)
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, errors.New("encode the approvals: " + err.Error())
		}
		return append(b, '\n'), nil
	})
}

package login

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/urfave/cli/v3"
)

// StatusTimeout bounds asking one auth plugin for its status (starting it
// included).
const StatusTimeout = 30 * time.Second

// Auth states, as 'hermes mcp auth-status --json' reports them.
const (
	// authOK: credentials are there and current, or the plugin gets them
	// without the user (exec, client credentials).
	AuthOK = "ok"
	// authExpiredRefreshable: expired, but the plugin renews them itself.
	AuthExpiredRefreshable = "expired_refreshable"
	// authLoginNeeded: only 'hermes mcp login' helps.
	AuthLoginNeeded = "login_needed"
	// authError: the plugin could not say (Error has why).
	AuthError = "error"
	// authUnused: credential files of a server without an auth: method.
	AuthUnused = "unused"
	// authNotApproved: a project server the person has not approved, or
	// rejected: its plugin is not started and nothing is contacted.
	AuthNotApproved = "not_approved"
)

// AuthStatusEntry is one server in 'hermes mcp auth-status --json'. It
// never holds a token. AuthState is the credentials' state, not a
// connection state: nothing is connected.
type AuthStatusEntry struct {
	Name string `json:"name"`
	// Method is the auth: method, or "none" for a server that has only
	// credential files left.
	Method    string            `json:"auth"`
	AuthState string            `json:"auth_state"`
	Error     *cmdkit.JSONError `json:"error,omitempty"`
	Account   string            `json:"account,omitempty"`
	Scopes    []string          `json:"scopes"`
	// ExpiresAt and LastRefresh are RFC 3339; ExpiresInSeconds is negative
	// once expired.
	ExpiresAt        string `json:"expires_at,omitempty"`
	ExpiresInSeconds *int64 `json:"expires_in_seconds,omitempty"`
	LastRefresh      string `json:"last_refresh,omitempty"`
	LoggedIn         bool   `json:"logged_in"`
	CanRefresh       bool   `json:"can_refresh"`
	Issuer           string `json:"issuer,omitempty"`
	Detail           string `json:"detail,omitempty"`
	// TokenFiles counts the credential files stored under the server's
	// name in $HERMES_HOME/mcp-tokens.
	TokenFiles int `json:"token_files"`

	expires, refreshed time.Time
	// refused: the plugin checked the grant and the server refused it
	// (auth_state login_needed).
	refused bool
}

// AuthStatusOptions are what 'hermes mcp auth-status' needs: the run and
// its --json output.
type AuthStatusOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
}

// NewCmdAuthStatus is 'hermes mcp auth-status'; runF, when not nil, is
// called with the parsed options instead of authStatusRun (the tests'
// seam).
func NewCmdAuthStatus(e *cmdkit.Env, runF func(context.Context, *AuthStatusOptions) error) *cli.Command {
	opts := &AuthStatusOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:  "auth-status",
		Usage: "show each server's credentials: method, account, scopes, expiry, state (never a token)",
		Description: `Lists every server with an auth: method, and any server with credential
files left under $HERMES_HOME/mcp-tokens. Each auth plugin is asked
without a UI: nothing opens a browser or prompts. The OAuth plugin checks
the grant with the authorization server (introspection, or a refresh of a
token about to expire, or a request to the MCP server), so a revoked or
expired grant says "expired or revoked", never ok. A project server not
approved (or rejected) is not asked about: nothing starts or contacts it.
States: ok, expired (refreshable), login needed, error, unused (files of a
server without auth:), not approved.`,
		Flags: []cli.Flag{j.Flag("print a JSON array (see docs/JSON.md)")},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 0 {
				return cmdkit.Usagef("usage: hermes mcp auth-status [--json]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return authStatusRun(ctx, opts)
		}),
	}
}

// authStatusRun asks each server's auth plugin for its credentials' state
// and prints it.
func authStatusRun(ctx context.Context, opts *AuthStatusOptions) error {
	e, j := opts.Env, opts.JSON
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.WithCode(cmdkit.CodeConfig, cmdkit.Failf("%s", cmdkit.OneLine(err.Error())))
	}
	if cfg.SafeMode {
		if j.On {
			j.Write([]AuthStatusEntry{})
			return nil
		}
		e.P.Warn("HERMES_SAFE_MODE is set: no MCP servers are loaded; unset it to see their credentials")
		return nil
	}
	entries := AuthStatuses(e, ctx, cfg.Servers)
	if j.On {
		j.Write(entries)
		return nil
	}
	PrintAuthStatus(e, entries, time.Now())
	return nil
}

// AuthStatuses asks each server's plugin for its status, side by side.
func AuthStatuses(e *cmdkit.Env, ctx context.Context, servers []*config.Server) []AuthStatusEntry {
	var picked []*config.Server
	for _, s := range servers {
		if (s.Auth != "" && Remote(s)) || CountTokenFiles(e.Home, s) > 0 {
			picked = append(picked, s)
		}
	}
	entries := make([]AuthStatusEntry, len(picked))
	var wg sync.WaitGroup
	for i, s := range picked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries[i] = AuthStatus(e, ctx, s)
		}()
	}
	wg.Wait()
	return entries
}

// AuthStatus describes one server's credentials.
func AuthStatus(e *cmdkit.Env, ctx context.Context, srv *config.Server) AuthStatusEntry {
	ent := AuthStatusEntry{Name: srv.Name, Method: srv.Auth, Scopes: []string{}, TokenFiles: CountTokenFiles(e.Home, srv)}
	if srv.Auth == "" || !Remote(srv) {
		ent.Method = cmdkit.OrDefault(srv.Auth, "none")
		ent.AuthState = AuthUnused
		ent.Detail = fmt.Sprintf("credential files left from an earlier login; 'hermes mcp login %s' uses them, 'hermes mcp logout %s' deletes them", srv.Name, srv.Name)
		return ent
	}
	// A project server runs, and is contacted, only once approved as it
	// is now: its plugin would reach its URL (with the tokens of an
	// earlier approval of another entry).
	if err := srv.AdmitOrigin(); err != nil {
		ent.AuthState = AuthNotApproved
		ent.Detail = cmdkit.OneLine(err.Error())
		return ent
	}
	sctx, cancel := context.WithTimeout(ctx, StatusTimeout)
	defer cancel()
	s, err := e.F.Credentials().For(sctx, srv)
	var st auth.Status
	if err == nil {
		st, err = s.Status(sctx)
	}
	if err != nil {
		ent.AuthState, ent.Error = AuthError, &cmdkit.JSONError{Code: cmdkit.ErrorCode(err), Message: cmdkit.ShownErr(err)}
		return ent
	}
	now := time.Now()
	ent.AuthState = AuthState(st, now)
	ent.refused = st.Refused
	ent.Account, ent.LoggedIn, ent.CanRefresh = st.Account, st.LoggedIn, st.CanRefresh
	ent.Issuer, ent.Detail = st.Issuer, st.Detail
	if len(st.Scopes) > 0 {
		ent.Scopes = st.Scopes
	}
	if !st.ExpiresAt.IsZero() {
		ent.expires = st.ExpiresAt
		ent.ExpiresAt = st.ExpiresAt.UTC().Format(time.RFC3339)
		in := int64(st.ExpiresAt.Sub(now).Seconds())
		ent.ExpiresInSeconds = &in
	}
	if !st.LastRefresh.IsZero() {
		ent.refreshed = st.LastRefresh
		ent.LastRefresh = st.LastRefresh.UTC().Format(time.RFC3339)
	}
	return ent
}

// AuthState is the state of a plugin's credentials at now.
func AuthState(st auth.Status, now time.Time) string {
	switch {
	case st.Refused:
		return AuthLoginNeeded // checked with the server: expired or revoked there
	case !st.LoggedIn && st.CanRefresh:
		return AuthOK // obtained on demand (exec, client credentials)
	case !st.LoggedIn:
		return AuthLoginNeeded
	case st.ExpiresAt.IsZero() || st.ExpiresAt.After(now):
		return AuthOK
	case st.CanRefresh:
		return AuthExpiredRefreshable
	}
	return AuthLoginNeeded
}

// CountTokenFiles counts the credential files kept for srv (tokenFiles).
func CountTokenFiles(home string, srv *config.Server) int {
	n := 0
	for _, f := range cmdkit.TokenFiles(home, srv.Name, srv) {
		if _, err := os.Lstat(f); err == nil {
			n++
		}
	}
	return n
}

func PrintAuthStatus(e *cmdkit.Env, entries []AuthStatusEntry, now time.Time) {
	if len(entries) == 0 {
		e.P.Line("No server has an auth: method or stored credentials; log in to a remote server with 'hermes mcp login <name>'")
		return
	}
	for i, ent := range entries {
		if i > 0 {
			e.P.Line("")
		}
		head := fmt.Sprintf("%s (%s): ", ent.Name, ent.Method)
		switch ent.AuthState {
		case AuthOK:
			e.P.OK("%s", head+"ok")
		case AuthExpiredRefreshable:
			e.P.OK("%s", head+"expired, refreshable")
		case AuthLoginNeeded:
			if ent.refused {
				e.P.Warn("%s", head+fmt.Sprintf("expired or revoked; run: hermes mcp login %s", ent.Name))
				break
			}
			e.P.Warn("%s", head+fmt.Sprintf("login needed; run: hermes mcp login %s", ent.Name))
		case AuthUnused:
			e.P.Warn("%s", head+"credential files of a server without auth:")
		case AuthNotApproved:
			e.P.Warn("%s", head+"not approved (not contacted)")
		default:
			e.P.Fail("%s", head+"error: "+ent.Error.Message)
		}
		if ent.Account != "" {
			e.P.Line("    account: %s", ent.Account)
		}
		if len(ent.Scopes) > 0 {
			e.P.Line("    scopes: %s", strings.Join(ent.Scopes, " "))
		}
		if !ent.expires.IsZero() {
			rel := "in " + ShortDuration(ent.expires.Sub(now))
			if !ent.expires.After(now) {
				rel = ShortDuration(now.Sub(ent.expires)) + " ago"
			}
			e.P.Line("    expires: %s (%s)", rel, LocalTime(ent.expires))
		}
		if !ent.refreshed.IsZero() {
			e.P.Line("    last refresh: %s ago (%s)", ShortDuration(now.Sub(ent.refreshed)), LocalTime(ent.refreshed))
		}
		if ent.Issuer != "" {
			e.P.Line("    from: %s", ent.Issuer)
		}
		if ent.Detail != "" {
			e.P.Line("    %s", ent.Detail)
		}
	}
}

func LocalTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04 MST") }

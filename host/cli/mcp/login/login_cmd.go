package login

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/credentials"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/urfave/cli/v3"
)

// LoginMargin is added to a login's own bound (oauth.timeout): the plugin
// ends the login itself at oauth.timeout and says why; the host only stops
// waiting for a plugin that does not.
const LoginMargin = 30 * time.Second

// LogoutTimeout bounds a logout (starting the plugin, revoking the
// tokens at the authorization server, deleting the files).
const LogoutTimeout = 60 * time.Second

// LoginFlags are the flags every command that logs in takes.
type LoginFlags struct {
	// NoBrowser is --no-browser, Device --device, Scope --scope.
	NoBrowser, Device bool
	Scope             string
}

func (f *LoginFlags) flags(withScope bool) []cli.Flag {
	fl := []cli.Flag{
		&cli.BoolFlag{Name: "no-browser", Usage: "do not open a browser: show the URL, and take the redirect URL pasted back", Destination: &f.NoBrowser},
		&cli.BoolFlag{Name: "device", Usage: "log in with a code on another device (OAuth device authorization, where the server offers it)", Destination: &f.Device},
	}
	if withScope {
		fl = append(fl, &cli.StringFlag{Name: "scope", Usage: "ask for this `SCOPE` instead of the one the server names", Destination: &f.Scope})
	}
	return fl
}

func (f *LoginFlags) options() auth.LoginOptions {
	return auth.LoginOptions{NoBrowser: f.NoBrowser, Device: f.Device, Scope: f.Scope}
}

// LoginOptions are what 'hermes mcp login NAME' needs: the run, the
// server's name and how to log in.
type LoginOptions struct {
	Env *cmdkit.Env
	LoginFlags
	// Name is the server to log in to.
	Name string
}

// NewCmdLogin is 'hermes mcp login NAME'; runF, when not nil, is called
// with the parsed options instead of loginRun (the tests' seam).
func NewCmdLogin(e *cmdkit.Env, runF func(context.Context, *LoginOptions) error) *cli.Command {
	opts := &LoginOptions{Env: e}
	return &cli.Command{
		Name:      "login",
		Usage:     "log in to a remote server (OAuth, or its auth: plugin) and check the connection",
		ArgsUsage: "<name>",
		Description: `Runs the server's auth plugin interactively: for OAuth a browser opens at the
authorization server (set $BROWSER to choose the program), or, with
--no-browser or where none can open (SSH, no display), the URL is shown and
the address the browser lands on is pasted back. A server without auth:
gets auth: oauth first. Stored credentials are replaced only once new ones
have arrived.`,
		Flags: opts.flags(true),
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp login <name> [--no-browser] [--device] [--scope S]")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return loginRun(ctx, opts)
		},
	}
}

// loginRun logs in to opts.Name, setting auth: oauth first on a user
// server without an auth: method, and checks the connection.
func loginRun(ctx context.Context, opts *LoginOptions) error {
	e, name := opts.Env, opts.Name
	cfg, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	if !Remote(srv) {
		return cmdkit.Failf("'%s' is a local (stdio) server: there is nothing to log in to; pass its credentials in its env: block in %s", name, cfg.Path)
	}
	if srv.Auth == "" && srv.FromProject() {
		// The entry is the project file's: config.yaml is not
		// where its auth: lives, and a project may ask for OAuth
		// only in its own file (and have that approved).
		return cmdkit.WithCode(cmdkit.CodeProjectServer, cmdkit.Failf("'%s' is declared by %s with no auth: method; add auth: oauth to its entry there, approve it again (hermes mcp approve %s), then log in", name, srv.Origin.File, name))
	}
	if srv.Auth == "" {
		if err := config.Edit(e.Home, func(d *config.Document) error { return d.SetAuth(name, "oauth") }); err != nil {
			return cmdkit.Failf("setting auth: oauth on '%s': %s", name, cmdkit.OneLine(err.Error()))
		}
		e.P.Info("'%s' had no auth: method; set auth: oauth in %s", name, cfg.Path)
		if _, srv, err = cmdkit.LoadServer(e, name); err != nil {
			return err
		}
	}
	if srv.Err != nil {
		return cmdkit.Failf("'%s' cannot be used: %s; fix it in %s", name, cmdkit.ShownErr(srv.Err), cfg.Path)
	}
	if _, err := LoginAndCheck(e, ctx, srv, opts.options()); err != nil {
		return err
	}
	return nil
}

// Remote reports whether srv is reached over the network (it has a URL and
// a transport other than stdio), the servers auth plugins are for.
func Remote(srv *config.Server) bool {
	return srv.URL != "" && session.PluginName(srv) != "stdio"
}

// Login logs in to srv through the interactive manager, bounded by the
// server's login timeout plus loginMargin. Its error is the plugin's (see
// loginFailed).
func Login(e *cmdkit.Env, ctx context.Context, srv *config.Server, o auth.LoginOptions) (auth.Status, error) {
	s, err := e.F.LoginCredentials().For(ctx, srv)
	if err != nil {
		return auth.Status{}, err
	}
	limit := LoginTimeout(srv)
	lctx, cancel := context.WithTimeout(ctx, limit+LoginMargin)
	defer cancel()
	st, err := s.Login(lctx, o)
	if err != nil {
		if ctx.Err() == nil && errors.Is(lctx.Err(), context.DeadlineExceeded) {
			return auth.Status{}, fmt.Errorf("login to '%s' did not complete within %s", srv.Name, limit+LoginMargin)
		}
		return auth.Status{}, err
	}
	return st, nil
}

// LoginTimeout is how long a login of srv may take: oauth.timeout for
// OAuth, else the same default.
func LoginTimeout(srv *config.Server) time.Duration {
	if srv.Auth == "oauth" && srv.OAuth.Timeout > 0 {
		return srv.OAuth.Timeout
	}
	return config.DefaultOAuthTimeout
}

// LoginFailed is the one-line error of a failed login: the plugin's
// message, naming the server and how to try again.
func LoginFailed(name string, err error) error {
	msg := LoginMessage(name, err)
	if !strings.Contains(msg, "hermes mcp") {
		msg += fmt.Sprintf("; run 'hermes mcp login %s' to try again", name)
	}
	return cmdkit.Failf("%s", msg)
}

// LoginMessage is the plugin's message of a failed login, naming the
// server.
func LoginMessage(name string, err error) string {
	msg := cmdkit.ShownErr(err)
	if !strings.Contains(msg, "'"+name+"'") {
		msg = fmt.Sprintf("login to '%s' failed: %s", name, msg)
	}
	return msg
}

// LoginAndCheck logs in to srv, says so, then connects once with the new
// credentials and shows how many tools the server offers; a connection
// that fails is a warning (the login itself succeeded).
func LoginAndCheck(e *cmdkit.Env, ctx context.Context, srv *config.Server, o auth.LoginOptions) (auth.Status, error) {
	st, err := Login(e, ctx, srv, o)
	if err != nil {
		return st, LoginFailed(srv.Name, err)
	}
	e.P.OK("%s", LoggedInLine(srv.Name, st, time.Now()))
	n, err := CountTools(e, ctx, srv)
	if err != nil {
		e.P.Warn("Logged in, but connecting to '%s' failed: %s", srv.Name, cmdkit.ShownErr(err))
		return st, nil
	}
	e.P.OK("Connected: %s", cmdkit.Plural(n, "tool"))
	if !srv.Enabled {
		e.P.Info("'%s' is disabled; turn it on with: hermes mcp enable %s", srv.Name, srv.Name)
	}
	return st, nil
}

// CountTools connects to srv with the login manager's credentials (those
// just obtained, also when they live only in the plugin's memory) and
// counts its tools.
func CountTools(e *cmdkit.Env, ctx context.Context, srv *config.Server) (int, error) {
	probe := *srv
	cmdkit.WithProbeTimeout(&probe)
	d := e.F.LoginSessionDeps()
	s, err := session.Connect(ctx, session.PlanFor(&probe, d.Home, d.Environ), d)
	if err != nil {
		return 0, err
	}
	defer s.Detach() // the output is complete: do not wait for the server to stop
	if s.Capabilities().Tools == nil {
		return 0, nil
	}
	l, err := registry.ListTools(ctx, s, srv)
	if err != nil {
		return 0, err
	}
	return len(l.Tools), nil
}

// LoggedInLine is "Logged in to 'NAME' as ACCOUNT (scopes: ...; expires in
// 59m)", leaving out what the plugin did not say.
func LoggedInLine(name string, st auth.Status, now time.Time) string {
	line := fmt.Sprintf("Logged in to '%s'", name)
	if st.Account != "" {
		line += " as " + st.Account
	}
	var parts []string
	if len(st.Scopes) > 0 {
		parts = append(parts, "scopes: "+strings.Join(st.Scopes, " "))
	}
	if !st.ExpiresAt.IsZero() {
		if st.ExpiresAt.After(now) {
			parts = append(parts, "expires in "+ShortDuration(st.ExpiresAt.Sub(now)))
		} else {
			parts = append(parts, "expired")
		}
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, "; ") + ")"
	}
	return line
}

// ShortDuration shows d in its largest units, to the nearest: 45s, 59m,
// 3h5m, 2d4h.
func ShortDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d >= 48*time.Hour:
		d = d.Round(time.Hour)
	case d >= time.Minute:
		d = d.Round(time.Minute)
	default:
		d = d.Round(time.Second)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		h := int(d.Hours())
		if m := int(d.Minutes()) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", h, m)
		}
		return fmt.Sprintf("%dh", h)
	}
	days := int(d.Hours()) / 24
	if h := int(d.Hours()) % 24; h != 0 {
		return fmt.Sprintf("%dd%dh", days, h)
	}
	return fmt.Sprintf("%dd", days)
}

// LogoutOptions are what 'hermes mcp logout NAME' needs.
type LogoutOptions struct {
	Env *cmdkit.Env
	// Name is the server whose credentials go.
	Name string
}

// NewCmdLogout is 'hermes mcp logout NAME'; runF, when not nil, is called
// with the parsed options instead of logoutRun (the tests' seam).
func NewCmdLogout(e *cmdkit.Env, runF func(context.Context, *LogoutOptions) error) *cli.Command {
	opts := &LogoutOptions{Env: e}
	return &cli.Command{
		Name:      "logout",
		Usage:     "revoke and delete a server's stored credentials",
		ArgsUsage: "<name>",
		Description: `Asks the server's auth plugin to revoke its tokens at the authorization
server (where it supports revocation) and delete them. The entry stays in
config.yaml; log in again with 'hermes mcp login <name>'.`,
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp logout <name>")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return logoutRun(ctx, opts)
		},
	}
}

// logoutRun revokes and deletes the credentials of opts.Name.
func logoutRun(ctx context.Context, opts *LogoutOptions) error {
	e, name := opts.Env, opts.Name
	_, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	r, err := ForgetCredentials(e, ctx, name, srv)
	if err != nil {
		return cmdkit.Failf("logging out of '%s': %s; delete its files under %s by hand", name, cmdkit.OneLine(err.Error()), credentials.TokenDir(e.Home))
	}
	if r.PluginErr != "" {
		e.P.Warn("The %s plugin could not log out (%s); deleted what was stored instead", srv.Auth, r.PluginErr)
	}
	if r.Revoked {
		e.P.OK("Revoked tokens at the authorization server")
	}
	if r.Removed > 0 {
		e.P.OK("Deleted %s", cmdkit.Plural(r.Removed, "credential file"))
	}
	if !r.Revoked && r.Removed == 0 {
		e.P.Line("No stored credentials for '%s'", name)
	}
	if r.detail != "" {
		e.P.Info("%s", r.detail)
	}
	return nil
}

// Forgotten is what forgetCredentials did.
type Forgotten struct {
	Revoked bool
	Removed int
	detail  string
	// pluginErr says why the auth plugin could not log out (the files
	// were deleted all the same).
	PluginErr string
}

// ForgetCredentials logs srv out through its auth plugin (which revokes
// where it can and deletes its files), then deletes any credential files
// left for the server's name (those of a server without auth:, or of a
// plugin that could not run). srv may be nil (an entry that could not be
// loaded): the files of name are deleted.
func ForgetCredentials(e *cmdkit.Env, ctx context.Context, name string, srv *config.Server) (Forgotten, error) {
	var f Forgotten
	if srv != nil && srv.Auth != "" && Remote(srv) {
		lctx, cancel := context.WithTimeout(ctx, LogoutTimeout)
		s, err := e.F.Credentials().For(lctx, srv)
		if err == nil {
			var r auth.LogoutResult
			r, err = s.Logout(lctx)
			f.Revoked, f.Removed, f.detail = r.Revoked, r.Removed, r.Detail
		}
		cancel()
		if err != nil {
			f.PluginErr = cmdkit.ShownErr(err)
		}
		if ctx.Err() != nil {
			return f, ctx.Err()
		}
	}
	n, err := cmdkit.RemoveTokenFiles(e.Home, name, srv)
	f.Removed += n
	return f, err
}

// ReauthOptions are what 'hermes mcp reauth' needs: one server's name, or
// All, and how to log in.
type ReauthOptions struct {
	Env *cmdkit.Env
	LoginFlags
	// All is --all: every remote server with an auth: method.
	All bool
	// Name is the one server, when not All.
	Name string
}

// NewCmdReauth is 'hermes mcp reauth [NAME | --all]'; runF, when not nil,
// is called with the parsed options instead of reauthRun (the tests'
// seam).
func NewCmdReauth(e *cmdkit.Env, runF func(context.Context, *ReauthOptions) error) *cli.Command {
	opts := &ReauthOptions{Env: e}
	return &cli.Command{
		Name:      "reauth",
		Usage:     "log in again to one server, or to every server with an auth: method",
		ArgsUsage: "[<name> | --all]",
		Description: `Like 'hermes mcp login', for a server that already has an auth: method; with
--all, each such remote server in turn. Stored credentials are replaced only
once new ones have arrived.`,
		Flags: append(opts.flags(false), &cli.BoolFlag{Name: "all", Usage: "every remote server with an auth: method, one at a time", Destination: &opts.All}),
		Action: func(ctx context.Context, c *cli.Command) error {
			switch {
			case opts.All && c.Args().Len() > 0:
				return cmdkit.Usagef("give a server name or --all, not both")
			case !opts.All && c.Args().Len() != 1:
				return cmdkit.Usagef("Specify a server name, or use --all to log in again to every server with an auth: method; usage: hermes mcp reauth [<name> | --all]")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return reauthRun(ctx, opts)
		},
	}
}

// reauthRun logs in again to opts.Name, or to each remote server with an
// auth: method in turn.
func reauthRun(ctx context.Context, opts *ReauthOptions) error {
	e := opts.Env
	if !opts.All {
		name := opts.Name
		cfg, srv, err := cmdkit.LoadServer(e, name)
		if err != nil {
			return err
		}
		switch {
		case !Remote(srv):
			return cmdkit.Failf("'%s' is a local (stdio) server: there is nothing to log in to", name)
		case srv.Auth == "":
			return cmdkit.Failf("'%s' has no auth: method in %s; log in with 'hermes mcp login %s' (it sets auth: oauth)", name, cfg.Path, name)
		case srv.Err != nil:
			return cmdkit.Failf("'%s' cannot be used: %s; fix it in %s", name, cmdkit.ShownErr(srv.Err), cfg.Path)
		}
		_, err = LoginAndCheck(e, ctx, srv, opts.options())
		return err
	}
	cfg, err := e.F.Config()
	if err != nil {
		return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	if cfg.SafeMode {
		return cmdkit.Failf("HERMES_SAFE_MODE is set, so no MCP servers are loaded; unset it to log in")
	}
	var servers []*config.Server
	for _, s := range cfg.Servers {
		if s.Auth != "" && Remote(s) {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		e.P.Line("No remote server in %s has an auth: method; add one with 'hermes mcp login <name>'", cfg.Path)
		return nil
	}
	ok := 0
	for i, s := range servers {
		if i > 0 {
			e.P.Line("")
		}
		e.P.Header(fmt.Sprintf("%s (%s)", s.Name, s.Auth))
		if s.Err != nil {
			e.P.Fail("'%s' cannot be used: %s", s.Name, cmdkit.ShownErr(s.Err))
			continue
		}
		if _, err := LoginAndCheck(e, ctx, s, opts.options()); err != nil {
			if ctx.Err() != nil {
				return err
			}
			e.P.Fail("%s", err)
			continue
		}
		ok++
	}
	e.P.Line("")
	e.P.Line("Re-authenticated %d/%d server(s)", ok, len(servers))
	if ok < len(servers) {
		return &cmdkit.ExitError{Code: cmdkit.ExitFail}
	}
	return nil
}

// UsesOAuth reports whether a failed connect was the server's 401 or 403
// with a challenge that points at OAuth metadata (resource_metadata).
func UsesOAuth(err error) bool {
	var code, challenge string
	var ce *session.ConnectError
	var pe *cmdkit.ProbeError
	switch {
	case errors.As(err, &ce):
		code, challenge = ce.Code(), ce.Challenge()
	case errors.As(err, &pe):
		code, challenge = pe.Code, pe.Challenge
	default:
		return false
	}
	return cmdkit.ChallengeNamesOAuth(code, challenge)
}

// OauthHint is the line that tells how to log in to a server without an
// auth: method whose connect failed with an OAuth challenge; "" otherwise.
func OauthHint(srv *config.Server, err error) string {
	if srv.Auth != "" || !UsesOAuth(err) {
		return ""
	}
	return fmt.Sprintf("This server uses OAuth; run: hermes mcp login %s", srv.Name)
}

package install

import (
	"context"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
)

// Installer installs catalog entries into a Hermes home folder
// (hermes mcp install). An install shows what it will run before running
// anything, clones the entry's repository at its pinned commit into
// $HERMES_HOME/mcp-installs/<name>, runs its bootstrap, checks the plugin
// binary it ships, asks for its credentials, probes the server, lets the
// user pick its tools and saves the entry. It is all or nothing: see the
// journal (install_journal.go).
type Installer struct {
	// Home is the Hermes home folder.
	Home string
	// Prompter shows the plan and the progress, and asks the questions
	// (the CLI's terminal printer).
	Prompter Prompter
	// Probe connects to srv as a session of the agent would and lists its
	// tools; an install is not done until it has (see chooseTools). Nil:
	// every probe fails.
	Probe func(ctx context.Context, srv *config.Server) ([]Tool, error)
	// Admit, when set, is the security check the entry must pass before
	// it is probed and saved; its error says why not.
	Admit func(srv *config.Server) error
	// LookupEnv is the run's environment: credentials are read from it
	// when there is no terminal to ask, and its HOME is the "~" of the
	// manifest's sandbox paths; nil is os.LookupEnv.
	LookupEnv func(key string) (string, bool)
	// StepTimeout bounds each bootstrap step (0: DefaultStepTimeout);
	// CloneTimeout the clone and the checkout (0: DefaultCloneTimeout).
	StepTimeout, CloneTimeout time.Duration
}

// Options are the choices of one install.
type Options struct {
	// Tools, when set, enables only these tools (names or globs) without
	// asking.
	Tools []string
	// Yes installs without asking; without a terminal it is required.
	Yes bool
	// KeepFailed keeps an install whose server does not connect or list
	// its tools, saved disabled, instead of undoing it.
	KeepFailed bool
	// NoSandbox leaves out the manifest's sandbox: the server runs
	// unconfined.
	NoSandbox bool
}

// Tool is one tool a probe found.
type Tool struct {
	Name, Description string
}

// ErrConfirmNeeded is returned when there is no terminal to confirm the
// install on and Options.Yes is not set: a usage error.
var ErrConfirmNeeded = errors.New("the install needs a confirmation")

// ErrDeclined is returned when the person answered no, or cancelled a
// question: nothing was changed.
var ErrDeclined = errors.New("declined")

// ErrNameTaken is returned when config.yaml has a server of the entry's
// name that the user added: an install never replaces it.
var ErrNameTaken = errors.New("the name is taken")

// Install installs m. Nothing of the user's is changed unless it returns
// nil: on an error the install folder, .env and config.yaml are as they
// were (and if hermes is killed, the next command puts them back).
func (in *Installer) Install(ctx context.Context, m *catalog.Manifest, o Options) error {
	p := in.Prompter
	if !config.ValidName(m.Name) {
		return fmt.Errorf("catalog entry name %q is not valid; use letters, digits, '_' and '-'", m.Name)
	}
	if m.Install != nil {
		if m.Install.Type != "" && m.Install.Type != "git" {
			return fmt.Errorf("'%s' has install.type %q; this hermes installs only from git", m.Name, m.Install.Type)
		}
		if !pinnedCommitRE.MatchString(m.Install.Ref) {
			return fmt.Errorf("'%s' pins install.ref %q, which is not a full 40-hex commit SHA; only exact commits are installed", m.Name, m.Install.Ref)
		}
		if m.Install.URL == "" {
			return fmt.Errorf("'%s' has an install block without a url", m.Name)
		}
	}
	if m.Plugin != nil && m.Install == nil {
		return fmt.Errorf("'%s' ships a plugin but has no install block to build it in", m.Name)
	}
	home, err := filepath.Abs(in.Home)
	if err != nil {
		return err
	}
	dir := InstallDir(home, m.Name)
	topts := catalog.TranslateOptions{NoSandbox: o.NoSandbox, Env: in.LookupEnv}
	if m.Install != nil {
		topts.InstallDir = dir
	}
	plan, err := m.Plan(topts)
	if err != nil {
		return err
	}
	// The entry is translated (and so checked) before anything runs; a
	// plugin that pins no sha256 is translated again once its binary was
	// built and hashed.
	check := topts
	if m.Plugin != nil && m.Plugin.SHA256 == "" {
		check.PluginSHA256 = strings.Repeat("0", 64)
	}
	entry, err := catalog.Translate(m, check)
	if err != nil {
		return err
	}
	if in.Admit != nil {
		// The command and args as they will be saved, before any value is
		// asked for: a rejected entry runs nothing, not even its bootstrap.
		srv, err := config.LoadEntryEnv(home, m.Name, entry, nil, in.LookupEnv)
		if err != nil {
			return fmt.Errorf("the entry of '%s' does not load: %w", m.Name, err)
		}
		if err := in.Admit(srv); err != nil {
			return fmt.Errorf("catalog entry '%s' rejected: %w", m.Name, err)
		}
	}
	pr, err := priorEntry(home, m, in.LookupEnv)
	if err != nil {
		return err
	}
	if pr.own {
		return fmt.Errorf("%w: '%s' in config.yaml is your own server, not one installed from the catalog, and installing would replace it; remove it first (hermes mcp remove %s), then install", ErrNameTaken, m.Name, m.Name)
	}

	in.showPlan(m, plan, pr)
	if !o.Yes {
		if !p.Interactive() {
			return fmt.Errorf("%w: there is no terminal to confirm on; read what it runs above, then run again with --yes to install without a terminal: hermes mcp install %s --yes", ErrConfirmNeeded, m.Name)
		}
		verb := "Install"
		if pr.exists {
			verb = "Reinstall"
		}
		if !p.Approve(fmt.Sprintf("%s '%s'?", verb, m.Name)) {
			return fmt.Errorf("%w: nothing was installed", ErrDeclined)
		}
	}

	t, err := beginInstall(home, m.Name)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		if rerr := t.rollback(); rerr != nil {
			p.Tell(NoteFailure, "Undoing the install of '%s' failed: %s; run any hermes mcp command to try again", m.Name, rerr)
		}
	}()

	if m.Install != nil {
		if err := in.clone(ctx, t, m.Install.URL, m.Install.Ref, dir, installOrDuration(in.CloneTimeout, DefaultCloneTimeout)); err != nil {
			return err
		}
		installStage("cloned")
		if err := checkRepoLinks(m.Name, dir); err != nil {
			return err
		}
		if err := checkSandboxPaths(m, o, home, dir, in.LookupEnv); err != nil {
			return err
		}
		if err := in.bootstrap(ctx, t, m.Install.Bootstrap, dir); err != nil {
			return err
		}
		installStage("bootstrapped")
	}
	if m.Plugin != nil {
		path, sum, err := pluginBinary(dir, m.Plugin)
		if err != nil {
			return err
		}
		topts.PluginSHA256 = sum
		if entry, err = catalog.Translate(m, topts); err != nil {
			return err
		}
		p.Tell(NoteDone, "Plugin %s checked: sha256 %s", filepath.Base(path), sum)
	}

	values, err := in.credentials(m, home)
	if err != nil {
		return err
	}
	installStage("credentials")
	pending := map[string]string{}
	for _, v := range values {
		pending[v.key] = v.value
	}
	srv, err := config.LoadEntryEnv(home, m.Name, entry, pending, in.LookupEnv)
	if err != nil {
		return fmt.Errorf("the entry of '%s' does not load: %w", m.Name, err)
	}
	if in.Admit != nil {
		if err := in.Admit(srv); err != nil {
			return fmt.Errorf("catalog entry '%s' rejected: %w", m.Name, err)
		}
	}
	created, err := in.makeWritable(m, o, topts, srv, pending, home)
	defer func() {
		if committed || len(created) == 0 {
			return
		}
		if kept := removeCreated(created); len(kept) > 0 {
			p.Tell(NoteDetail, "Kept %s: the server wrote into it while it was probed", strings.Join(kept, ", "))
		}
	}()
	if err != nil {
		return err
	}
	outcome, err := in.chooseTools(ctx, m, srv, entry, pr, o)
	if err != nil {
		return err
	}
	installStage("tools")

	saved, err := t.commit(values, func(d *config.Document) error { return d.SetServer(m.Name, entry) })
	if err != nil {
		return fmt.Errorf("saving '%s': %w", m.Name, err)
	}
	committed = true
	if err := t.finish(); err != nil {
		p.Tell(NoteWarning, "'%s' is installed, but cleaning up after it failed: %s; the next hermes command tries again", m.Name, err)
	}
	for _, k := range saved {
		p.Tell(NoteDone, "Saved %s to %s", k, homedir.Dir(home).DotEnv())
	}
	switch outcome {
	case probeKept:
		p.Tell(NoteDone, "Installed '%s', disabled: it did not connect (--keep-failed).", m.Name)
		p.Tell(NoteText, "Fix the issue, then: hermes mcp test %s", m.Name)
		p.Tell(NoteDetail, "and turn it on with: hermes mcp enable %s", m.Name)
	case probeNeedsLogin:
		p.Tell(NoteDone, "Installed '%s' (enabled), not connected yet: log in with: hermes mcp login %s", m.Name, m.Name)
	default:
		p.Tell(NoteDone, "Installed '%s' (enabled). Start a new Hermes session to load its tools.", m.Name)
	}
	if s := strings.TrimRight(m.PostInstall, "\n"); strings.TrimSpace(s) != "" {
		p.Tell(NoteText, "")
		for _, l := range strings.Split(s, "\n") {
			p.Tell(NoteText, "%s", l)
		}
	}
	return nil
}

func installOrDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// makeWritable creates the folders the entry's sandbox declares writable
// (writableDirs) that do not exist yet, before the server is probed, and
// says which. topts are the options entry was translated with; the
// folders are made for an install with --no-sandbox too.
func (in *Installer) makeWritable(m *catalog.Manifest, o Options, topts catalog.TranslateOptions, srv *config.Server, pending map[string]string, home string) ([]string, error) {
	if m.Sandbox == nil {
		return nil, nil
	}
	withSandbox := srv
	if o.NoSandbox {
		full := topts
		full.NoSandbox = false
		e, err := catalog.Translate(m, full)
		if err != nil {
			return nil, err
		}
		if withSandbox, err = config.LoadEntryEnv(home, m.Name, e, pending, in.LookupEnv); err != nil {
			return nil, fmt.Errorf("the entry of '%s' does not load: %w", m.Name, err)
		}
	}
	dirs, err := writableDirs(m.Name, withSandbox, home, topts.InstallDir)
	if err != nil {
		return nil, err
	}
	created, err := makeWritable(dirs)
	for _, d := range created {
		in.Prompter.Tell(NoteDone, "Created %s (mode 0700), a folder '%s' writes in", d, m.Name)
	}
	return created, err
}

// priorEntryInfo is what config.yaml holds under the entry's name before the
// install.
type priorEntryInfo struct {
	exists           bool
	include, exclude []string
	// own: the entry is a server the user added under the entry's name,
	// not one installed from the catalog (catalog.FromCatalog).
	own bool
}

// priorEntry reads the entry an install replaces. A config that does not
// parse fails the install before anything runs.
func priorEntry(home string, m *catalog.Manifest, env func(string) (string, bool)) (priorEntryInfo, error) {
	name := m.Name
	var pr priorEntryInfo
	err := config.Edit(home, func(d *config.Document) error {
		pr.exists = d.Has(name)
		return nil
	})
	if err != nil {
		return pr, err
	}
	if !pr.exists {
		return pr, nil
	}
	cfg, err := config.LoadEnv(home, env)
	if err != nil {
		return pr, err
	}
	if s := cfg.Server(name); s != nil {
		pr.include, pr.exclude = s.Tools.Include, s.Tools.Exclude
		_, err := os.Lstat(InstallDir(home, name))
		pr.own = !catalog.FromCatalog(s, m, err == nil)
	}
	return pr, nil
}

// showPlan prints what the install will fetch, run and launch, and the
// sandbox it runs under (Plan.Lines), before anything runs. The printer
// escapes what the manifest says.
func (in *Installer) showPlan(m *catalog.Manifest, plan *catalog.Plan, pr priorEntryInfo) {
	p := in.Prompter
	p.Tell(NoteTitle, "Installing MCP '%s'", m.Name)
	p.Tell(NoteText, "%s", m.Description)
	for _, l := range plan.Lines() {
		p.Tell(NoteText, "%s", l)
	}
	if len(plan.Bootstrap) > 0 {
		p.Tell(NoteDetail, "Each bootstrap step runs with sh -c in the clone, at most %s (--step-timeout).", installOrDuration(in.StepTimeout, DefaultStepTimeout))
	}
	if plan.SandboxOff {
		p.Tell(NoteWarning, "--no-sandbox: '%s' will run unconfined, with your user's rights (its manifest asks for a sandbox)", m.Name)
	}
	if pr.exists {
		p.Tell(NoteWarning, "'%s' is in config.yaml already: its entry is replaced (the tool selection is kept)", m.Name)
	}
}

// bootstrap runs the bootstrap steps in the clone.
func (in *Installer) bootstrap(ctx context.Context, t *txn, steps []string, dir string) error {
	limit := installOrDuration(in.StepTimeout, DefaultStepTimeout)
	env := config.ChildEnv(map[string]string{"INSTALL_DIR": dir})
	for _, s := range steps {
		in.Prompter.Tell(NoteText, "$ %s", s)
		code, err := t.run(ctx, installCmd{
			argv: []string{"/bin/sh", "-c", s}, dir: dir, env: env, timeout: limit,
			line: func(l string) { in.Prompter.Tell(NoteDetail, "  %s", l) },
		})
		switch {
		case errors.Is(err, errTimedOut):
			return timeoutError("bootstrap step '"+s+"'", limit, "--step-timeout")
		case err != nil:
			return fmt.Errorf("bootstrap step '%s': %w", s, err)
		case code != 0:
			return fmt.Errorf("bootstrap step failed (exit %d): %s", code, s)
		}
	}
	return nil
}

// Uninstall removes catalog entry name: its config.yaml entry and its
// install folder. Values it saved to .env stay. It reports what it
// removed; removing nothing is not an error (the caller says so).
func Uninstall(home, name string) (entry, folder bool, err error) {
	if !config.ValidName(name) {
		return false, false, fmt.Errorf("%q is not a server name; names use letters, digits, '_' and '-'", name)
	}
	lk, err := lockEntry(home, name)
	if err != nil {
		return false, false, err
	}
	defer lk.Unlock()
	if _, err := recoverLocked(home, name); err != nil {
		return false, false, err
	}
	// The entry goes first, in one atomic write; then the folder is moved
	// out of the way in one rename and deleted. Killed in between, what
	// is left is a folder without an entry (uninstall again removes it)
	// or a trash folder Recover deletes.
	err = config.Edit(home, func(d *config.Document) error {
		entry = d.RemoveServer(name)
		return nil
	})
	if err != nil {
		return false, false, err
	}
	dir := InstallDir(home, name)
	if _, serr := os.Lstat(dir); serr == nil {
		folder = true
		trash := trashDir(home, name)
		if err := installRemoveTree(trash); err != nil {
			return entry, false, err
		}
		if err := os.Rename(dir, trash); err != nil {
			return entry, false, fmt.Errorf("remove %s: %w", dir, err)
		}
		if err := installRemoveTree(trash); err != nil {
			return entry, true, err
		}
	}
	return entry, folder, nil
}

// trashDir is where Uninstall moves an install folder to delete it.
func trashDir(home, name string) string {
	return filepath.Join(homedir.Dir(home).Installs(), ".uninstall-"+name)
}

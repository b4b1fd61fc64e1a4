package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/gofrs/flock"
	"github.com/hermes-agent/hermes/host/atomicfile"
	"github.com/hermes-agent/hermes/host/config"
)

// An install changes three things of the user's: the install folder,
// .env and config.yaml. It must leave all three exactly as they were when
// it fails, is interrupted, or the process is killed at any instant
// (SIGKILL, power loss). The journal makes that so:
//
//   - $HERMES_HOME/mcp-installs/.install-<name>.lock is held (flock) for
//     the whole install; the kernel drops it when the process dies, so a
//     journal whose lock is free belongs to an install that is over.
//   - $HERMES_HOME/mcp-installs/.install-<name>/ is the journal: journal.json
//     says how far the install got; previous/ is the prior install folder,
//     moved aside (never deleted) before the clone; config.before and
//     config.after are config.yaml as the install found and left it.
//
// Every record is written (fsynced, renamed) before the change it
// describes. The install is committed once journal.json says so, after
// config.yaml was written; until then a rollback restores everything:
// at once when a step fails, and otherwise in the next hermes command that
// touches the catalog or the config (Recover).
const (
	// InstallsDir is the folder of $HERMES_HOME holding the install folders.
	InstallsDir = homedir.InstallsName
	// journalPrefix starts the journal folder's and the lock's names. A
	// server name never starts with ".", so neither can be an install
	// folder.
	journalPrefix = ".install-"
	journalFile   = "journal.json"
	previousDir   = "previous"
	configBefore  = "config.before"
	configAfter   = "config.after"
)

// Journal states.
const (
	stateStarted    = "started"    // the folder may be replaced; config and .env untouched
	stateCommitting = "committing" // .env and config.yaml may have been written
	stateCommitted  = "committed"  // done: only previous/ and the journal are left to delete
)

// journal is journal.json.
type journal struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
	PID     int    `json:"pid"`
	State   string `json:"state"`
	// HadFolder says an install folder existed when the install began: it
	// is (or is about to be) moved to previous/.
	HadFolder bool `json:"had_folder"`
	// Proc is the process group of the git or bootstrap command running,
	// to be killed if the install died under it.
	Proc *journalProc `json:"proc,omitempty"`
	// DotEnv records the .env keys the install adds (none of them was set
	// before) and .env as it was.
	DotEnv *journalDotEnv `json:"dotenv,omitempty"`
	// Config, once set, says config.before and config.after are written.
	Config *journalConfig `json:"config,omitempty"`
}

type journalProc struct {
	PGID int `json:"pgid"`
	// Start is the group leader's start time (clock ticks since boot, as
	// /proc/<pid>/stat has it), Limit the longest the command may run in
	// seconds: only processes of the group started in that window are
	// taken for the install's.
	Start uint64 `json:"start"`
	Limit int64  `json:"limit"`
}

type journalDotEnv struct {
	Keys []string `json:"keys"`
	// Existed, SHA256 and Mode describe .env before the keys were added.
	Existed bool   `json:"existed"`
	SHA256  string `json:"sha256"`
	Mode    uint32 `json:"mode"`
}

type journalConfig struct {
	// Existed: config.yaml existed before (else a rollback removes it).
	Existed bool   `json:"existed"`
	Mode    uint32 `json:"mode"`
}

// InstallDir is the install folder of catalog entry name.
func InstallDir(home, name string) string {
	return homedir.Dir(home).Install(name)
}

func journalDir(home, name string) string {
	return filepath.Join(homedir.Dir(home).Installs(), journalPrefix+name)
}

func lockPath(home, name string) string {
	return filepath.Join(homedir.Dir(home).Installs(), journalPrefix+name+".lock")
}

// ErrBusy is returned when another hermes process is installing or
// uninstalling the same entry.
var ErrBusy = errors.New("another hermes is installing or removing this entry")

// lockEntry takes the install lock of name without waiting.
func lockEntry(home, name string) (*flock.Flock, error) {
	if err := os.MkdirAll(homedir.Dir(home).Installs(), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", homedir.Dir(home).Installs(), err)
	}
	lk := flock.New(lockPath(home, name))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w; check that the folder is writable", lockPath(home, name), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: '%s' is being installed or removed by another hermes right now; wait for it to finish, then run the command again", ErrBusy, name)
	}
	return lk, nil
}

// txn is one install in progress: its journal, with the lock held.
type txn struct {
	home, name string
	dir        string // the journal folder
	j          journal
	lock       *flock.Flock
}

// beginInstall takes the lock of name, rolls back an earlier install of
// it that died, and starts a journal: from here on the install folder is
// the new install's, and the prior one waits in the journal.
func beginInstall(home, name string) (*txn, error) {
	lk, err := lockEntry(home, name)
	if err != nil {
		return nil, err
	}
	t := &txn{home: home, name: name, dir: journalDir(home, name), lock: lk}
	fail := func(err error) (*txn, error) {
		lk.Unlock()
		return nil, err
	}
	if _, err := recoverLocked(home, name); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(t.dir, 0o700); err != nil {
		return fail(fmt.Errorf("create the install journal %s: %w", t.dir, err))
	}
	_, err = os.Lstat(InstallDir(home, name))
	t.j = journal{Version: 1, Name: name, PID: os.Getpid(), State: stateStarted, HadFolder: err == nil}
	if err := t.save(); err != nil {
		os.RemoveAll(t.dir)
		return fail(err)
	}
	if t.j.HadFolder {
		if err := os.Rename(InstallDir(home, name), filepath.Join(t.dir, previousDir)); err != nil {
			os.RemoveAll(t.dir)
			return fail(fmt.Errorf("move the current install of '%s' aside: %w", name, err))
		}
		atomicfile.SyncDir(homedir.Dir(home).Installs())
	}
	installStage("begun")
	return t, nil
}

// save writes journal.json atomically.
func (t *txn) save() error {
	data, err := json.MarshalIndent(&t.j, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(t.dir, journalFile), data, 0o600, nil); err != nil {
		return fmt.Errorf("write the install journal: %w", err)
	}
	return nil
}

// setProc records the process group now running (nil: none).
func (t *txn) setProc(p *journalProc) error {
	t.j.Proc = p
	return t.save()
}

// previousFolder is where the prior install folder waits, "" when there
// was none.
func (t *txn) previousFolder() string {
	if !t.j.HadFolder {
		return ""
	}
	return filepath.Join(t.dir, previousDir)
}

// installHook, set by tests only, is called at each stage of an install
// (a test kills the process there and checks what the next command puts
// back).
var installHook func(stage string)

func installStage(stage string) {
	if installHook != nil {
		installHook(stage)
	}
}

// envValue is one .env value an install saves.
type envValue struct{ key, value string }

// commit saves the install: the .env values (only keys .env does not have
// yet), then the config.yaml change edit makes, each recorded in the
// journal before it is written, then marks the journal committed.
func (t *txn) commit(values []envValue, edit func(d *config.Document) error) (saved []string, err error) {
	t.j.State = stateCommitting
	if len(values) > 0 {
		have, err := config.LoadDotEnv(t.home)
		if err != nil {
			return nil, err
		}
		var fresh []envValue
		for _, v := range values {
			// A key set by someone else since it was asked for stays theirs.
			if _, set := have[v.key]; !set {
				fresh = append(fresh, v)
			}
		}
		values = fresh
	}
	if len(values) > 0 {
		path := homedir.Dir(t.home).DotEnv()
		jd := &journalDotEnv{SHA256: installSHA256Hex(nil)}
		if fi, err := os.Stat(path); err == nil {
			cur, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			jd.Existed, jd.SHA256, jd.Mode = true, installSHA256Hex(cur), uint32(fi.Mode().Perm())
		}
		for _, v := range values {
			jd.Keys = append(jd.Keys, v.key)
		}
		t.j.DotEnv = jd
	}
	if err := t.save(); err != nil {
		return nil, err
	}
	for _, v := range values {
		if err := config.SetDotEnv(t.home, v.key, v.value); err != nil {
			return nil, err
		}
		saved = append(saved, v.key)
		installStage("dotenv-written")
	}
	path := homedir.Dir(t.home).Config()
	err = config.Edit(t.home, func(d *config.Document) error {
		before := d.Bytes()
		jc := &journalConfig{Mode: 0o600}
		if fi, err := os.Stat(path); err == nil {
			jc.Existed, jc.Mode = true, uint32(fi.Mode().Perm())
		}
		if err := edit(d); err != nil {
			return err
		}
		// Recorded before config.Edit replaces the file.
		if err := atomicfile.Write(filepath.Join(t.dir, configBefore), before, 0o600, nil); err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(t.dir, configAfter), d.Bytes(), 0o600, nil); err != nil {
			return err
		}
		t.j.Config = jc
		if err := t.save(); err != nil {
			return err
		}
		installStage("config-recorded")
		return nil
	})
	if err != nil {
		return nil, err
	}
	installStage("config-written")
	t.j.State = stateCommitted
	if err := t.save(); err != nil {
		return nil, err
	}
	installStage("committed")
	return saved, nil
}

// rollback undoes everything and releases the lock.
func (t *txn) rollback() error {
	defer t.lock.Unlock()
	return rollbackJournal(t.home, t.name, &t.j)
}

// finish deletes the prior install folder and the journal of a committed
// install, and releases the lock. Failing to delete leaves a journal the
// next command finishes.
func (t *txn) finish() error {
	defer t.lock.Unlock()
	return finishJournal(t.dir)
}

func finishJournal(dir string) error {
	if err := installRemoveTree(filepath.Join(dir, previousDir)); err != nil {
		return err
	}
	return installRemoveTree(dir)
}

// Recovered is an interrupted install that Recover dealt with.
type Recovered struct {
	// Name is the catalog entry.
	Name string
	// Committed is true when the install had completed and only its
	// clean-up was left; false when it was rolled back.
	Committed bool
}

// Recover finishes what interrupted installs left: an install that died
// before it committed is rolled back (its config.yaml and .env changes
// undone, its install folder replaced by the prior one), a committed one
// has its clean-up done. Installs still running (their lock is held) are
// left alone. Every hermes command that touches the catalog or the config
// calls it first.
func Recover(home string) ([]Recovered, error) {
	ents, err := os.ReadDir(homedir.Dir(home).Installs())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", homedir.Dir(home).Installs(), err)
	}
	var out []Recovered
	var errs []error
	for _, e := range ents {
		if trash, ok := strings.CutPrefix(e.Name(), ".uninstall-"); ok && config.ValidName(trash) {
			// An uninstall killed while deleting the folder.
			if lk, err := lockEntry(home, trash); err == nil {
				if err := installRemoveTree(filepath.Join(homedir.Dir(home).Installs(), e.Name())); err != nil {
					errs = append(errs, err)
				}
				lk.Unlock()
			}
			continue
		}
		name, ok := strings.CutPrefix(e.Name(), journalPrefix)
		if !ok || !e.IsDir() || !config.ValidName(name) {
			continue
		}
		lk := flock.New(lockPath(home, name))
		locked, err := lk.TryLock()
		if err != nil || !locked {
			continue // running, or not ours to judge
		}
		r, err := recoverLocked(home, name)
		lk.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, errors.Join(errs...)
}

// recoverLocked deals with the journal of name, if any; the caller holds
// the lock.
func recoverLocked(home, name string) (*Recovered, error) {
	dir := journalDir(home, name)
	data, err := os.ReadFile(filepath.Join(dir, journalFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(dir); serr != nil {
			return nil, nil
		}
		// The folder was made and the journal never written: nothing
		// was changed yet.
		return &Recovered{Name: name}, installRemoveTree(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read the install journal of '%s': %w; delete %s after checking %s", name, err, dir, InstallDir(home, name))
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || j.Name != name {
		return nil, fmt.Errorf("the install journal %s is damaged; check %s (its previous/ folder holds the prior install), then delete the journal", dir, InstallDir(home, name))
	}
	if j.State == stateCommitted {
		killProc(j.Proc)
		return &Recovered{Name: name, Committed: true}, finishJournal(dir)
	}
	return &Recovered{Name: name}, rollbackJournal(home, name, &j)
}

// rollbackJournal undoes an install that did not commit. Every step can be
// repeated: a rollback killed half-way is finished by the next one.
func rollbackJournal(home, name string, j *journal) error {
	dir := journalDir(home, name)
	killProc(j.Proc)
	if j.State == stateCommitted {
		return finishJournal(dir)
	}
	if j.Config != nil {
		if err := restoreConfig(home, name, dir, j.Config); err != nil {
			return fmt.Errorf("undo the config.yaml change of the install of '%s': %w", name, err)
		}
	}
	if j.DotEnv != nil {
		if err := restoreDotEnv(home, j.DotEnv); err != nil {
			return fmt.Errorf("undo the .env change of the install of '%s': %w", name, err)
		}
	}
	target := InstallDir(home, name)
	prev := filepath.Join(dir, previousDir)
	if j.HadFolder {
		if _, err := os.Lstat(prev); err == nil {
			if err := installRemoveTree(target); err != nil {
				return err
			}
			if err := os.Rename(prev, target); err != nil {
				return fmt.Errorf("put the prior install of '%s' back from %s: %w", name, prev, err)
			}
			atomicfile.SyncDir(filepath.Dir(target))
		}
		// Otherwise it was never moved (or is back already).
	} else if err := installRemoveTree(target); err != nil {
		return err
	}
	return installRemoveTree(dir)
}

// restoreConfig puts config.yaml back as it was before the install wrote
// it. When the file is exactly what the install left, the old bytes come
// back; when someone else changed it since, only the install's entry is
// undone (if it is still the one the install wrote).
func restoreConfig(home, name, dir string, jc *journalConfig) error {
	before, err := os.ReadFile(filepath.Join(dir, configBefore))
	if err != nil {
		return err
	}
	after, err := os.ReadFile(filepath.Join(dir, configAfter))
	if err != nil {
		return err
	}
	path := homedir.Dir(home).Config()
	done := false
	// The lock config.Edit takes (documented there), so no other hermes
	// writes in between.
	err = atomicfile.WithLock(path, func() error {
		cur, err := os.ReadFile(path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		switch {
		case exists == jc.Existed && bytes.Equal(cur, before):
			done = true // never written, or undone already
			return nil
		case exists && bytes.Equal(cur, after):
			done = true
			if !jc.Existed {
				return os.Remove(path)
			}
			return atomicfile.Write(path, before, fs.FileMode(jc.Mode).Perm(), nil)
		}
		return nil
	})
	if err != nil || done {
		return err
	}
	// Another process changed config.yaml after the install wrote it:
	// undo the entry alone.
	wrote, _ := serverValue(after, name)
	old, hadOld := serverValue(before, name)
	return config.Edit(home, func(d *config.Document) error {
		cur, ok := serverValue(d.Bytes(), name)
		if !ok || !reflect.DeepEqual(cur, wrote) {
			return nil // gone, or changed by the person since: theirs now
		}
		if !hadOld {
			d.RemoveServer(name)
			return nil
		}
		fields, _ := old.(yaml.MapSlice)
		e := &config.ServerEntry{}
		for _, it := range fields {
			e.Set(fmt.Sprint(it.Key), it.Value)
		}
		return d.SetServer(name, e)
	})
}

// serverValue decodes mcp_servers.<name> of a config file.
func serverValue(src []byte, name string) (any, bool) {
	var top yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(src, &top, yaml.UseOrderedMap()); err != nil {
		return nil, false
	}
	for _, it := range top {
		if fmt.Sprint(it.Key) != config.ServersKey {
			continue
		}
		servers, _ := it.Value.(yaml.MapSlice)
		for _, s := range servers {
			if fmt.Sprint(s.Key) == name {
				return s.Value, true
			}
		}
	}
	return nil, false
}

// restoreDotEnv removes the lines of the keys the install added to .env.
// When what is left is .env as it was, those exact bytes (and mode) come
// back; when someone else changed .env meanwhile, their change stays.
func restoreDotEnv(home string, jd *journalDotEnv) error {
	path := homedir.Dir(home).DotEnv()
	return atomicfile.WithLock(path, func() error {
		cur, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		var kept []byte
		removed := false
		for _, line := range bytes.SplitAfter(cur, []byte("\n")) {
			if k, ok := installDotEnvKey(string(line)); ok && slices.Contains(jd.Keys, k) {
				removed = true
				continue
			}
			kept = append(kept, line...)
		}
		if !removed {
			return nil
		}
		mode := fs.FileMode(0o600)
		switch {
		case installSHA256Hex(kept) == jd.SHA256:
		case bytes.HasSuffix(kept, []byte("\n")) && installSHA256Hex(kept[:len(kept)-1]) == jd.SHA256:
			// SetDotEnv ended the last line before appending.
			kept = kept[:len(kept)-1]
		default:
			// Changed by someone else meanwhile: keep their change.
			return atomicfile.Write(path, kept, mode, nil)
		}
		if !jd.Existed && len(kept) == 0 {
			return os.Remove(path)
		}
		if jd.Mode != 0 {
			mode = fs.FileMode(jd.Mode).Perm()
		}
		return atomicfile.Write(path, kept, mode, nil)
	})
}

// installDotEnvKey is the key a .env line assigns, as config.LoadDotEnv reads it.
func installDotEnvKey(line string) (string, bool) {
	line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
	if line == "" || line[0] == '#' {
		return "", false
	}
	line = strings.TrimPrefix(line, "export ")
	k, _, ok := strings.Cut(line, "=")
	if !ok {
		return "", false
	}
	return strings.TrimSpace(k), true
}

func installSHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// installRemoveTree deletes path and everything under it, also folders a
// bootstrap made read-only (a Go module cache is). Symlinks are removed,
// never followed. A missing path is not an error.
func installRemoveTree(path string) error {
	err := os.RemoveAll(path)
	if err == nil {
		return nil
	}
	// Make every folder writable, then try again.
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("delete %s: %w", path, err)
	}
	return nil
}

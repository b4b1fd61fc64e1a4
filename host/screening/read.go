package screening

import (
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Bounds on how much of an entry screening reads. They are not config keys:
// the entry being screened comes from the file that would set them. An entry
// past a bound is refused (fail closed), and the refusal says which bound.
const (
	// MaxDepth is how many shells or interpreters may run inside one
	// another (bash -c 'sh -c "..."' is two).
	MaxDepth = 8
	// MaxShellBytes is how much shell text (every -c string, eval and
	// here-document fed to a shell, together) one entry may hold.
	MaxShellBytes = 64 << 10
	// maxBraceWords bounds the words one brace expansion ({a,b}{c,d}...)
	// makes: each brace multiplies.
	maxBraceWords = 256
	// maxWords bounds the words all the shell text of an entry expands
	// to: brace expansions, each within maxBraceWords, add up.
	maxWords = 1 << 14
	// maxScans bounds how many words of commands' arguments named like a
	// shell or interpreter are read as commands of their own (reader.run).
	maxScans = 64
)

// unit is one thing that would run: a simple command's argv with its
// redirections, after quote removal, or the code string given to an
// interpreter screening cannot parse (python -c, node -e ...).
type unit struct {
	text string
	// interp is the shell or interpreter that runs text, as written;
	// top says it is the configured command itself.
	interp string
	top    bool
	// where is the way to text from the configured command, for the
	// finding: "env", "bash -c" for env bash -c '...'.
	where []string
}

// field is one word of an argv after expansion. vague says some of it is
// only known when it runs ($X, $(cmd), a glob); dyn says its base name
// (what follows the last "/") is.
type field struct {
	s     string
	vague bool
	dyn   bool
	// src is the word as written in the shell text (for a refusal).
	src string
}

// problem is why screening refuses to read an entry further.
type problem struct {
	reason string
	where  []string
}

// ctx is where a reader is: how deep, the way there, and what it reads.
type ctx struct {
	depth  int
	where  []string
	inner  bool   // inside shell text: every command's argv is a unit
	interp string // the shell running this text, as written
	top    bool   // interp is the configured command
	stdin  string // literal text fed to this command's stdin, if known
	// stdinVague: text is fed to stdin that is only known when it runs.
	stdinVague bool
	text       string // the shell text being read
	// params are the shell's positional parameters ($0 first) when they
	// are known: the words after sh -c's string.
	params []field
	// guess: this text is an argument read as shell text in case some
	// command runs it (trap, ssh, find -exec ...); what cannot be read
	// there is no refusal.
	guess bool
}

// reader reads what an entry would run, as a shell would.
type reader struct {
	units  []unit
	prob   *problem
	budget int
	scans  int
	// nwords and guessWords count the words expanded so far, in shell
	// text and in arguments read as such (maxWords each).
	nwords, guessWords int
	// guesses is what is left of the shell text read in arguments
	// (ctx.guess); past it, arguments are no longer read.
	guesses int
}

// readEntry returns what the configured command with its args would run:
// every simple command of every shell text in it, looked for through
// wrappers, and the code strings of interpreters; or why it cannot tell.
func readEntry(command string, args []string) ([]unit, *problem) {
	r := &reader{budget: MaxShellBytes, guesses: MaxShellBytes}
	words, err := shlexSplit(strings.TrimFunc(command, isPySpace))
	if err != nil {
		words = strings.FieldsFunc(command, isPySpace)
	}
	argv := make([]field, 0, len(words)+len(args))
	for _, w := range words {
		argv = append(argv, field{s: w})
	}
	for _, a := range args {
		argv = append(argv, field{s: a})
	}
	r.run(argv, ctx{top: true}, true)
	return r.units, r.prob
}

func (r *reader) fail(c ctx, format string, a ...any) {
	if r.prob == nil && !c.guess {
		r.prob = &problem{reason: fmt.Sprintf(format, a...), where: slices.Clone(c.where)}
	}
}

func step(c ctx, s string) ctx {
	c.where = append(slices.Clip(c.where), s)
	return c
}

// baseName is the lower-cased last path element of a command word.
func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	return asciiLower(s)
}

// run looks at one argv: through wrappers to the command they start, into
// the -c string of a shell, the code string of an interpreter. scan also
// reads every later word of argv named like a shell or an interpreter as
// the start of a command: a wrapper option read differently here than by
// the wrapper itself, or a command that runs another one and is not
// listed here (find -exec sh -c ..., docker run img sh -c ...), hides
// nothing.
func (r *reader) run(argv []field, c ctx, scan bool) {
	orig, origC := argv, c
	for len(argv) > 0 && r.prob == nil {
		w := argv[0]
		if w.dyn && c.inner {
			r.fail(c, "a command's name is only known when it runs (%s)", w.src)
			return
		}
		name := baseName(w.s)
		rest, script, ok := r.unwrap(name, argv[1:], c)
		if !ok {
			r.command(w.s, name, argv[1:], c, c.top)
			break
		}
		c.top = false
		c = step(c, name)
		if script != nil {
			if script.vague {
				r.fail(c, "the text given to %s is only known when it runs", name)
				break
			}
			r.script(script.s, name+" -c", c, syntax.LangBash)
			break
		}
		argv = rest
	}
	if !scan || r.prob != nil || len(orig) < 2 {
		return
	}
	c = step(origC, baseName(orig[0].s))
	c.top = false
	for i := 1; i < len(orig) && r.prob == nil; i++ {
		if n := baseName(orig[i].s); isShellName(n) || textShells[n] || codeFlags(n) != nil {
			if r.scans++; r.scans > maxScans {
				r.fail(c, "more than %d words in commands' arguments name a shell or interpreter", maxScans)
				return
			}
			r.run(orig[i:], c, false)
		}
	}
}

// command reads a command that is no wrapper: a shell, eval, or an
// interpreter given code; anything else runs no text screening can read.
func (r *reader) command(written, name string, args []field, c ctx, top bool) {
	switch {
	case isShellName(name):
		r.shell(written, name, args, c, top)
	case name == "eval" && c.inner:
		if vague(args) {
			r.fail(c, "the text given to eval is only known when it runs")
			return
		}
		r.script(joinFields(args), "eval", c, syntax.LangBash)
	case (name == "source" || name == ".") && c.inner && c.stdinVague:
		r.fail(c, "the text fed to %s on its stdin is only known when it runs", name)
	case (name == "source" || name == ".") && c.inner && c.stdin != "":
		// source /dev/stdin <<< '...'
		r.script(c.stdin, name+" (stdin)", c, syntax.LangBash)
	case textShells[name]:
		// fish, cmd, PowerShell: a syntax this parser does not read; their
		// args are matched as text.
		if len(args) > 0 {
			r.units = append(r.units, unit{text: joinFields(args), interp: written, top: top, where: step(c, name).where})
		}
	default:
		if f := codeFlags(name); f != nil {
			for _, code := range codeStrings(args, f) {
				if code.vague {
					r.fail(c, "the code given to %s is only known when it runs (%s)", name, code.src)
					return
				}
				r.units = append(r.units, unit{text: code.s, interp: written, top: top, where: step(c, name+" -"+f.short[:1]).where})
			}
		}
	}
}

// shellLang is the parser's dialect for each shell it reads; textShells
// are shells it cannot read.
var (
	shellLang = map[string]syntax.LangVariant{
		"sh": syntax.LangBash, "bash": syntax.LangBash, "dash": syntax.LangBash, "ash": syntax.LangBash,
		"ksh": syntax.LangBash, "mksh": syntax.LangMirBSDKorn, "zsh": syntax.LangZsh,
	}
	textShells = map[string]bool{
		"fish": true, "cmd": true, "cmd.exe": true, "powershell": true,
		"powershell.exe": true, "pwsh": true, "pwsh.exe": true,
	}
)

func isShellName(n string) bool { _, ok := shellLang[n]; return ok }

// shell reads a POSIX-like shell's argv: its options, then the -c string
// (parsed) or a script file (not read: screening reads no files) or, with
// neither, the text given on its stdin when that is known.
func (r *reader) shell(written, name string, args []field, c ctx, top bool) {
	cflag := false
	i := 0
opts:
	for ; i < len(args); i++ {
		a := args[i].s
		switch {
		case a == "--" || a == "-":
			i++
			break opts
		case a == "" || (a[0] != '-' && a[0] != '+'):
			break opts
		case strings.HasPrefix(a, "--"):
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'c':
				cflag = cflag || a[0] == '-'
			case 'o', 'O':
				i++
				j = len(a)
			}
		}
	}
	c.interp, c.top = written, top
	switch {
	case cflag && i < len(args):
		if args[i].vague {
			r.fail(c, "the text given to %s -c is only known when it runs (%s)", name, args[i].src)
			return
		}
		c.params = args[i+1:]
		r.script(args[i].s, name+" -c", c, shellLang[name])
	case !cflag && c.stdinVague:
		r.fail(c, "the text fed to %s on its stdin is only known when it runs", name)
	case !cflag && c.stdin != "":
		// Reading too much as the script (sh -s, sh /dev/stdin, or a
		// script file besides) only means more text is read.
		c.params = nil
		r.script(c.stdin, name+" (stdin)", c, shellLang[name])
	}
}

// script parses shell text as the shell named by how would, and reads
// every command in it.
func (r *reader) script(text, how string, c ctx, lang syntax.LangVariant) {
	c = step(c, how)
	c.depth++
	c.inner = true
	c.stdin, c.stdinVague = "", false
	c.text = text
	if c.interp == "" {
		c.interp = strings.Fields(how)[0]
	}
	if c.depth > MaxDepth {
		r.fail(c, "more than %d shells or interpreters run inside one another", MaxDepth)
		return
	}
	if c.guess {
		if r.guesses -= len(text); r.guesses < 0 {
			return
		}
	} else if r.budget -= len(text); r.budget < 0 {
		r.fail(c, "more than %d KiB of shell text", MaxShellBytes>>10)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(text), "")
	if err != nil {
		r.fail(c, "its shell text does not parse (%s)", oneLine(err.Error()))
		return
	}
	stdinOf := map[*syntax.Stmt]field{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if r.prob != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				if s, ok := r.echoed(n.X, c); ok {
					stdinOf[n.Y] = s
				}
			}
		case *syntax.Stmt:
			r.stmt(n, c, stdinOf[n])
		}
		return true
	})
}

// stmt reads one statement: a simple command's argv and redirections as a
// unit, then that argv through wrappers; any other command's redirections.
// Commands nested in it (substitutions, bodies) are reached by the walk.
func (r *reader) stmt(s *syntax.Stmt, c ctx, stdin field) {
	var text []string
	var argv []field
	switch cmd := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, a := range cmd.Assigns {
			text = append(text, r.assign(a, c))
		}
		for _, w := range cmd.Args {
			if ps, ok := positional(w, c.params); ok {
				argv = append(argv, ps...)
				continue
			}
			argv = append(argv, r.fields(w, c)...)
		}
		for _, f := range argv {
			text = append(text, f.s)
		}
	case *syntax.DeclClause:
		text = append(text, cmd.Variant.Value)
		for _, a := range cmd.Args {
			text = append(text, r.assign(a, c))
		}
	}
	for _, rd := range s.Redirs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body := r.literal(rd.Hdoc, c, true)
			text = append(text, rd.Op.String(), body)
			stdin.s, stdin.vague = body, rd.Hdoc != nil && !wordKnown(rd.Hdoc.Parts)
		case syntax.WordHdoc:
			s := r.literal(rd.Word, c, false)
			text = append(text, rd.Op.String(), s)
			stdin.s, stdin.vague = s, !wordKnown(rd.Word.Parts)
		default:
			text = append(text, rd.Op.String(), r.literal(rd.Word, c, false))
		}
	}
	if r.prob != nil {
		return
	}
	if len(text) > 0 {
		r.units = append(r.units, unit{text: strings.Join(text, " "), interp: c.interp, top: c.top, where: c.where})
	}
	if len(argv) > 0 {
		c.stdin, c.stdinVague = stdin.s, stdin.vague
		c.top = false
		r.run(argv, c, true)
		r.arguments(argv, c)
	}
}

// quoting are the characters that make an argument read differently as
// shell text than as it stands.
const quoting = "'\"\\$`{"

// arguments reads each argument of a command in shell text that has
// quoting in it as shell text too, in case the command runs it (trap
// 'c""url ...' EXIT, ssh host '...', find -exec sh -c '...'): what runs
// there is screened like the rest, but text that does not parse is no
// refusal, as most such arguments are only data.
func (r *reader) arguments(argv []field, c ctx) {
	name := baseName(argv[0].s)
	for _, a := range argv[1:] {
		if r.prob != nil || r.guesses <= 0 || c.depth >= MaxDepth {
			return
		}
		if strings.ContainsAny(a.s, quoting) {
			g := c
			g.guess = true
			r.script(a.s, name+" (argument)", g, syntax.LangBash)
		}
	}
}

func (r *reader) assign(a *syntax.Assign, c ctx) string {
	s := a.Name.Value + "="
	if a.Value != nil {
		s += r.literal(a.Value, c, false)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			s += " " + r.literal(e.Value, c, false)
		}
	}
	return s
}

// echoed is the text an echo or printf of literal words writes, when s is
// one: what a pipe into a shell feeds it.
func (r *reader) echoed(s *syntax.Stmt, c ctx) (field, bool) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return field{}, false
	}
	var argv []field
	for _, w := range call.Args {
		argv = append(argv, r.fields(w, c)...)
	}
	if len(argv) == 0 {
		return field{}, false
	}
	switch baseName(argv[0].s) {
	case "cat":
		for _, rd := range s.Redirs {
			switch rd.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				return field{s: r.literal(rd.Hdoc, c, true), vague: rd.Hdoc != nil && !wordKnown(rd.Hdoc.Parts)}, true
			case syntax.WordHdoc:
				return field{s: r.literal(rd.Word, c, false), vague: !wordKnown(rd.Word.Parts)}, true
			}
		}
	case "echo", "printf":
		args := argv[1:]
		for len(args) > 0 && strings.HasPrefix(args[0].s, "-") {
			args = args[1:]
		}
		return field{s: joinFields(args), vague: vague(args)}, true
	}
	return field{}, false
}

// Expansion. A word is expanded with every variable but HOME unset and
// command substitutions empty: what the text says on its own. HOME is "~",
// so $HOME, ${HOME} and ~ all read as the home the patterns look for.
// Whether its base name depends on the run (dyn) is read from the word
// itself (baseKnown).
func envFunc() expand.Environ {
	return expand.FuncEnviron(func(name string) string {
		switch {
		case name == "HOME":
			return "~"
		case strings.HasPrefix(name, "HOME "):
			return "~" + strings.TrimPrefix(name, "HOME ")
		case name == "IFS":
			return " \t\n"
		}
		return ""
	})
}

type expander struct {
	cfg     expand.Config
	globbed bool
}

func newExpander() *expander {
	e := &expander{}
	e.cfg = expand.Config{
		Env:       envFunc(),
		CmdSubst:  func(io.Writer, *syntax.CmdSubst) error { return nil },
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", nil },
		ReadDir2: func(string) ([]fs.DirEntry, error) {
			e.globbed = true
			return nil, nil
		},
	}
	return e
}

// fields expands one word into the fields a shell would make of it.
func (r *reader) fields(w *syntax.Word, c ctx) []field {
	count, ok := r.braceCount(w, c)
	if !ok {
		return nil
	}
	// Count the words before making them.
	n := &r.nwords
	if c.guess {
		n = &r.guessWords
	}
	if *n += count; *n > maxWords {
		r.fail(c, "its shell text expands to more than %d words", maxWords)
		return nil
	}
	e := newExpander()
	fs, err := expand.Fields(&e.cfg, w)
	vague := e.globbed || err != nil || !wordKnown(w.Parts)
	dyn := e.globbed || err != nil || vague && !baseKnown(w.Parts)
	if vague && len(fs) == 0 {
		// $X may be a command, or text: keep its place.
		fs = []string{""}
	}
	out := make([]field, len(fs))
	for i, s := range fs {
		out[i] = field{s: s, vague: vague, dyn: dyn, src: source(w, c)}
	}
	return out
}

// wordKnown reports whether a word is written out whole: quoting and
// $HOME only, nothing known only when it runs.
func wordKnown(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if !wordKnown(p.Parts) {
				return false
			}
		case *syntax.ParamExp:
			if p.Param == nil || p.Param.Value != "HOME" || !p.Short && (p.Excl || p.Length || p.Width || p.IsSet ||
				p.Flags != nil || p.NestedParam != nil || p.Index != nil || p.Modifiers != nil || p.Slice != nil ||
				p.Repl != nil || p.Names != 0 || p.Exp != nil) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// vague reports whether any of fs is only known when it runs.
func vague(fs []field) bool {
	for _, f := range fs {
		if f.vague {
			return true
		}
	}
	return false
}

// baseKnown reports whether the base name of a word (what follows its last
// "/") is written out, with nothing in it known only when it runs: after
// the last expansion ($X, $(cmd), $((...))) comes a literal "/". A word
// with no expansion is known whole.
func baseKnown(parts []syntax.WordPart) bool {
	for i := len(parts) - 1; i >= 0; i-- {
		switch p := parts[i].(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, "/") {
				return true
			}
		case *syntax.SglQuoted:
			if strings.Contains(p.Value, "/") {
				return true
			}
		case *syntax.DblQuoted:
			for j := len(p.Parts) - 1; j >= 0; j-- {
				l, ok := p.Parts[j].(*syntax.Lit)
				if !ok {
					return false
				}
				if strings.Contains(l.Value, "/") {
					return true
				}
			}
		default:
			return false
		}
	}
	return true
}

// positional returns the words a plain "$@", "$1" (or $@, $1 whose
// values need no splitting) stands for, when the shell's parameters are
// known: sh -c 'exec "$@"' sh npx -y pkg runs npx.
func positional(w *syntax.Word, params []field) ([]field, bool) {
	if params == nil || len(w.Parts) != 1 {
		return nil, false
	}
	part, quoted := w.Parts[0], false
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 && !dq.Dollar {
		part, quoted = dq.Parts[0], true
	}
	pe, ok := part.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.IsSet || pe.Flags != nil ||
		pe.NestedParam != nil || pe.Index != nil || pe.Modifiers != nil || pe.Slice != nil || pe.Repl != nil ||
		pe.Names != 0 || pe.Exp != nil {
		return nil, false
	}
	var out []field
	switch name := pe.Param.Value; name {
	case "@":
		if !quoted {
			return nil, false
		}
		out = params[min(1, len(params)):]
	default:
		n, err := strconv.Atoi(name)
		if err != nil || n < 0 || n >= len(params) {
			return nil, false
		}
		out = params[n : n+1]
	}
	if !quoted {
		for _, f := range out {
			if f.s == "" || strings.ContainsAny(f.s, " \t\n*?[") {
				return nil, false
			}
		}
	}
	return slices.Clone(out), true
}

// source is w as written in the text being read, cut to 60 bytes.
func source(w *syntax.Word, c ctx) string {
	from, to := int(w.Pos().Offset()), int(w.End().Offset())
	if from < 0 || to > len(c.text) || from >= to {
		return ""
	}
	if to-from > 60 {
		return c.text[from:from+60] + "…"
	}
	return c.text[from:to]
}

// literal expands one word as a single string (a redirection target, an
// assignment, a here-document body).
func (r *reader) literal(w *syntax.Word, c ctx, doc bool) string {
	if w == nil || !r.braces(w, c) {
		return ""
	}
	e := newExpander()
	var s string
	var err error
	if doc {
		s, err = expand.Document(&e.cfg, w)
	} else {
		s, err = expand.Literal(&e.cfg, w)
	}
	if err != nil {
		return ""
	}
	return s
}

// braces checks that the brace expansions of w make at most
// maxBraceWords words, since each brace multiplies them.
func (r *reader) braces(w *syntax.Word, c ctx) bool {
	_, ok := r.braceCount(w, c)
	return ok
}

// braceCount is how many words w's braces make (1 without braces), and
// false past maxBraceWords.
func (r *reader) braceCount(w *syntax.Word, c ctx) (int, bool) {
	cp := *w
	if !syntax.SplitBraces(&cp) {
		return 1, true
	}
	n := braceWords(&cp, 0)
	if n > maxBraceWords {
		r.fail(c, "a brace expansion makes more than %d words", maxBraceWords)
		return n, false
	}
	return n, true
}

// braceWords counts the words w's braces make, stopping past the bound.
func braceWords(w *syntax.Word, depth int) int {
	n := 1
	for _, p := range w.Parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		k := 0
		if b.Sequence {
			k = seqLen(b)
		} else {
			for _, e := range b.Elems {
				k += braceWords(e, depth+1)
				if k > maxBraceWords {
					return k
				}
			}
		}
		if k < 1 {
			k = 1
		}
		if n *= k; n > maxBraceWords {
			return n
		}
	}
	return n
}

// seqLen is how many words {x..y[..incr]} makes; letters make at most 58.
func seqLen(b *syntax.BraceExp) int {
	if len(b.Elems) < 2 {
		return 1
	}
	x, err1 := strconv.ParseInt(b.Elems[0].Lit(), 10, 64)
	y, err2 := strconv.ParseInt(b.Elems[1].Lit(), 10, 64)
	if err1 != nil || err2 != nil {
		return 58
	}
	step := int64(1)
	if len(b.Elems) > 2 {
		if s, err := strconv.ParseInt(b.Elems[2].Lit(), 10, 64); err == nil && s != 0 {
			step = s
		}
	}
	if step < 0 {
		step = -step
	}
	d := y - x
	if d < 0 {
		d = -d
	}
	if d/step >= maxBraceWords {
		return maxBraceWords + 1
	}
	return int(d/step) + 1
}

func joinFields(fs []field) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.s
	}
	return strings.Join(s, " ")
}

// oneLine folds a parser message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

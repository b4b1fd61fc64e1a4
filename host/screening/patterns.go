package screening

import (
	"strings"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// Indicators are the known hermes-0day indicators of compromise, in the
// order they are looked for: the campaign's SSH key fragment, its name, and
// its addresses. They are matched as plain, case-sensitive substrings.
var Indicators = []string{
	"AAAAC3NzaC1lZDI1NTE5AAAAICBoh1oDC4DnsO1m5mJ4yfEKrQebaFh",
	"hermes-0day",
	"60.165.167.",
	"118.182.244.156",
	"61.178.123.196",
}

// ShellInterpreters are the commands (base name, lower-cased) whose args
// are checked for egress and persistence.
var ShellInterpreters = []string{
	"bash", "sh", "zsh", "dash", "fish", "cmd", "cmd.exe",
	"powershell", "powershell.exe", "pwsh", "pwsh.exe",
}

// The original patterns are Python regular expressions over str, compiled
// with re.IGNORECASE. Go's RE2 has neither look-around nor Unicode \w and
// \b, so each is rebuilt here from these pieces, keeping what it matches:
//
//   - \w is Unicode in Python (str.isalnum() or "_"): word below;
//   - \s is Unicode too (str.isspace()), which includes \v and \x1c-\x1f
//     that Go's \s lacks: space below;
//   - a look-behind (?<![set]) or a \b before a word character becomes
//     "start of text or one character not in the set": the validator only
//     asks whether a pattern occurs, and for that consuming the character
//     before is the same as looking at it. The same holds after;
//   - \b before a character that is not a word character means "a word
//     character right before", and is written so;
//   - Python's IGNORECASE also matches i with the Turkish dotless ı and the
//     dotted İ; Go's (?i) does not, so the text is folded first (foldTurkishI).
const (
	word     = `\p{L}\p{N}_`
	space    = `\t\n\v\f\r \x1c-\x1f\x{85}\p{Zs}\x{2028}\x{2029}`
	notWordB = `(?:\A|[^` + word + `])` // \b before a word character
	notWordA = `(?:\z|[^` + word + `])` // \b after a word character
)

// part is one alternative of an original pattern, kept apart so that tests
// reach each one.
type part struct {
	// orig is the alternative as the original writes it.
	orig string
	re   *lazyregexp.Regexp // compiled on first use
}

func alt(orig, expr string) part {
	return part{orig: orig, re: lazyregexp.New(expr)}
}

// ci makes the literal lit case-insensitive. Only literals are: Go's (?i)
// would also fold the boundary classes (a combining mark that folds to a
// Greek letter would become a word character), which Python's does not.
func ci(lit string) string { return `(?i:` + lit + `)` }

// egressParts: (?<![\w.-])(?:curl|wget|nc|ncat|socat)(?![\w.-])|/dev/tcp/
// |\bInvoke-WebRequest\b|\bInvoke-RestMethod\b|\bSystem\.Net\.WebClient\b
var egressParts = []part{
	alt(`(?<![\w.-])(?:curl|wget|nc|ncat|socat)(?![\w.-])`,
		`(?:\A|[^`+word+`.\-])`+ci(`curl|wget|nc|ncat|socat`)+`(?:\z|[^`+word+`.\-])`),
	alt(`/dev/tcp/`, ci(`/dev/tcp/`)),
	alt(`\bInvoke-WebRequest\b`, notWordB+ci(`Invoke-WebRequest`)+notWordA),
	alt(`\bInvoke-RestMethod\b`, notWordB+ci(`Invoke-RestMethod`)+notWordA),
	alt(`\bSystem\.Net\.WebClient\b`, notWordB+ci(`System\.Net\.WebClient`)+notWordA),
}

// exfilParts: \.env\b|--data-binary|--data-raw|\b-X\s+POST\b|\bPOST\b
// |<\s*[^\s]+
var exfilParts = []part{
	alt(`\.env\b`, ci(`\.env`)+notWordA),
	alt(`--data-binary`, ci(`--data-binary`)),
	alt(`--data-raw`, ci(`--data-raw`)),
	// "-" is not a word character: \b before it wants one right before.
	alt(`\b-X\s+POST\b`, `[`+word+`]`+ci(`-X`)+`[`+space+`]+`+ci(`POST`)+notWordA),
	alt(`\bPOST\b`, notWordB+ci(`POST`)+notWordA),
	alt(`<\s*[^\s]+`, `<[`+space+`]*[^`+space+`]`),
}

// persistenceParts: authorized_keys|\.ssh/|/etc/ssh\b|/etc/pam\.d\b
// |pam_[\w-]+\.so|/etc/sudoers|/etc/cron|crontab\b|/etc/rc\.local
// |/etc/systemd|\.bashrc\b|\.bash_profile\b|\.profile\b|\.zshrc\b
var persistenceParts = []part{
	alt(`authorized_keys`, ci(`authorized_keys`)),
	alt(`\.ssh/`, ci(`\.ssh/`)),
	alt(`/etc/ssh\b`, ci(`/etc/ssh`)+notWordA),
	alt(`/etc/pam\.d\b`, ci(`/etc/pam\.d`)+notWordA),
	alt(`pam_[\w-]+\.so`, ci(`pam_`)+`[`+word+`\-]+`+ci(`\.so`)),
	alt(`/etc/sudoers`, ci(`/etc/sudoers`)),
	alt(`/etc/cron`, ci(`/etc/cron`)),
	alt(`crontab\b`, ci(`crontab`)+notWordA),
	alt(`/etc/rc\.local`, ci(`/etc/rc\.local`)),
	alt(`/etc/systemd`, ci(`/etc/systemd`)),
	alt(`\.bashrc\b`, ci(`\.bashrc`)+notWordA),
	alt(`\.bash_profile\b`, ci(`\.bash_profile`)+notWordA),
	alt(`\.profile\b`, ci(`\.profile`)+notWordA),
	alt(`\.zshrc\b`, ci(`\.zshrc`)+notWordA),
}

// anyPart reports whether one of parts occurs in s. ASCII text that holds
// none of needles (lower-case) cannot match, and is not run through the
// expressions; other text always is (case folding reaches ASCII letters
// from others, as ſ folds to s).
func anyPart(parts []part, needles []string, s string) bool {
	if isASCII(s) {
		lower := asciiLower(s)
		found := false
		for _, n := range needles {
			if strings.Contains(lower, n) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	s = foldTurkishI(s)
	for _, p := range parts {
		if p.re.MatchString(s) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// The needles of each pattern: every match holds one of them.
var (
	egressNeedles  = []string{"curl", "wget", "nc", "socat", "/dev/tcp/", "invoke-webrequest", "invoke-restmethod", "system.net.webclient"}
	exfilNeedles   = []string{".env", "--data-binary", "--data-raw", "post", "<"}
	persistNeedles = []string{"authorized_keys", ".ssh/", "/etc/ssh", "/etc/pam.d", "pam_", "/etc/sudoers", "/etc/cron",
		"crontab", "/etc/rc.local", "/etc/systemd", ".bashrc", ".bash_profile", ".profile", ".zshrc"}
)

func egress(script string) bool       { return anyPart(egressParts, egressNeedles, script) }
func exfiltration(script string) bool { return anyPart(exfilParts, exfilNeedles, script) }
func persistence(script string) bool  { return anyPart(persistenceParts, persistNeedles, script) }

// turkishI maps the two letters Python's IGNORECASE takes for i (dotless
// ı, dotted İ) and Go's (?i) does not. Both are letters, as i is, so no
// word boundary moves.
var turkishI = strings.NewReplacer("ı", "i", "İ", "i")

func foldTurkishI(s string) string {
	if !strings.ContainsAny(s, "ıİ") {
		return s
	}
	return turkishI.Replace(s)
}

package toolview

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// secretPattern matches the secret shapes removed from every error string
// shown to the model or a person. It is one alternation, so the leftmost
// match wins, with groups that separate what is kept from the value:
//
//	1      a bare key: GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)
//	       and OpenAI-style (sk-) keys, replaced whole
//	2, 3   "Bearer " and its token
//	4–6    a name ending in token, key, password or secret (access_token,
//	       API_KEY, apikey, ...) with "=", an optional quote, and the value
//
// A value stops at white space, quotes, "&", ",", ";", "<", ">" and "\",
// so the punctuation around it stays. Compiled on first use: a one-shot
// command that redacts nothing does not pay for it at start.
var secretPattern = sync.OnceValue(func() *regexp.Regexp {
	const value = `[^\s&,;"'<>\\]+`
	return regexp.MustCompile(`(?i)` +
		`(\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]+|\bsk-[A-Za-z0-9_-]+)` +
		`|(\bBearer\s+)(` + value + `)` +
		`|([A-Za-z0-9_.-]*(?:token|key|password|secret)=)(["']?)(` + value + `)`)
})

// secretWords are lower-case words one of which every match of
// secretPattern holds: an ASCII string without any is not matched. (In
// other text (?i) also folds a few other letters onto ASCII ones, the
// long s and the Kelvin sign, which the words would miss.)
var secretWords = []string{"gh", "github_pat_", "sk-", "bearer", "token=", "key=", "password=", "secret="}

// redacted replaces each secret Redact finds.
const redacted = "[REDACTED]"

// Redact replaces the secrets in s with "[REDACTED]", case-insensitively,
// keeping what a person needs to fix the problem: the names of variables
// and the scheme of a header stay, only values go. "ghp_…", "github_pat_…"
// and "sk-…" keys are replaced whole; "Bearer <token>" becomes
// "Bearer [REDACTED]"; "<name>=<value>" where the name ends in token, key,
// password or secret ("access_token=", "API_KEY=", "api_key=\"x\"") keeps
// the name and any quote: "API_KEY=[REDACTED]".
//
// Placeholders are not secrets and stay as written, so advice such as
// "--header 'Authorization: Bearer ...'" or "put Authorization: \"Bearer
// ${MCP_X_API_KEY}\"" reads the same after Redact: "...", "…", "***",
// a ${VAR} reference, an upper-case $VAR and "[REDACTED]" itself. Redact
// is idempotent.
func Redact(s string) string {
	var buf [256]byte
	if lower, ascii := asciiLower(buf[:0], s); ascii && !containsAny(lower, secretWords) {
		return s // most strings hold no secret's word: the pattern is not compiled
	}
	return redact(s)
}

// redact is Redact by the pattern alone.
func redact(s string) string {
	re := secretPattern()
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range idx {
		b.WriteString(s[last:m[0]])
		last = m[1]
		switch {
		case m[2] >= 0: // bare key
			b.WriteString(redacted)
		case m[4] >= 0: // Bearer token
			b.WriteString(s[m[4]:m[5]])
			writeValue(&b, s[m[6]:m[7]])
		default: // name=value
			b.WriteString(s[m[8]:m[11]]) // name, "=" and the quote
			writeValue(&b, s[m[12]:m[13]])
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// writeValue writes v when it is a placeholder, "[REDACTED]" otherwise.
func writeValue(b *strings.Builder, v string) {
	if isPlaceholder(v) {
		b.WriteString(v)
		return
	}
	b.WriteString(redacted)
}

// isPlaceholder reports whether a matched value stands for a secret
// instead of being one: "...", "…", "***" (with trailing punctuation), a
// ${VAR} reference, an upper-case $VAR, or an earlier "[REDACTED]".
func isPlaceholder(v string) bool {
	switch {
	case strings.Trim(v, ".…*:)]}") == "":
		return true
	case strings.HasPrefix(v, "${") || isUpperVar(v):
		return true
	case strings.HasPrefix(v, redacted):
		return true
	}
	return false
}

// isUpperVar reports whether v is an upper-case shell variable reference
// such as $API_KEY.
func isUpperVar(v string) bool {
	if len(v) < 2 || v[0] != '$' || (v[1] >= '0' && v[1] <= '9') {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; !(c == '_' || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// injectionPattern is a sign of prompt injection in a tool description,
// with the reason reported. Every match holds each lower-case word of all
// and, when any is not empty, one of any: an ASCII description without
// them is not matched against re, which is compiled when first needed.
type injectionPattern struct {
	re     func() *regexp.Regexp
	reason string
	all    []string
	any    []string
}

// mayMatch reports whether lower, an ASCII description in lower case,
// holds p's words.
func (p *injectionPattern) mayMatch(lower []byte) bool {
	for _, w := range p.all {
		if !bytes.Contains(lower, []byte(w)) {
			return false
		}
	}
	return len(p.any) == 0 || containsAny(lower, p.any)
}

func containsAny(s []byte, words []string) bool {
	for _, w := range words {
		if bytes.Contains(s, []byte(w)) {
			return true
		}
	}
	return false
}

// lazyRegexp compiles expr on first use: most descriptions need none of
// the patterns, and a listing of them compiles none.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// injectionPatterns are what ScanDescription looks for, in the order it
// reports them.
var injectionPatterns = []injectionPattern{
	{lazyRegexp(`(?i)ignore\s+(all\s+)?previous\s+instructions`), "prompt override attempt ('ignore previous instructions')", []string{"ignore", "previous", "instructions"}, nil},
	{lazyRegexp(`(?i)you\s+are\s+now\s+a`), "identity override attempt ('you are now a...')", []string{"you", "are", "now"}, nil},
	{lazyRegexp(`(?i)your\s+new\s+(task|role|instructions?)\s+(is|are)`), "task override attempt", []string{"your", "new"}, []string{"task", "role", "instruction"}},
	{lazyRegexp(`(?i)\bsystem\s*:`), "system prompt injection attempt", []string{"system", ":"}, nil},
	{lazyRegexp(`(?i)<\s*(system|human|assistant)\s*>`), "role tag injection attempt", []string{"<", ">"}, []string{"system", "human", "assistant"}},
	{lazyRegexp(`(?i)do\s+not\s+(tell|inform|mention|reveal)`), "concealment instruction", []string{"do", "not"}, []string{"tell", "inform", "mention", "reveal"}},
	{lazyRegexp(`(?i)(curl|wget|fetch)\s+https?://`), "network command in description", []string{"http"}, []string{"curl", "wget", "fetch"}},
	{lazyRegexp(`(?i)base64\.(b64decode|decodebytes)`), "base64 decode reference", []string{"base64."}, nil},
	{lazyRegexp(`(?i)exec\s*\(|eval\s*\(`), "code execution reference", []string{"("}, []string{"exec", "eval"}},
	{lazyRegexp(`(?i)import\s+(subprocess|os|shutil|socket)`), "dangerous import reference", []string{"import"}, nil},
}

// ScanDescription returns the reasons a tool description looks like a
// prompt-injection attempt, in a fixed order, or nil when it looks clean.
// The findings are for a log warning only; a tool is never refused for
// them, since false positives would break legitimate servers.
func ScanDescription(desc string) []string {
	if desc == "" {
		return nil
	}
	// Most descriptions hold none of the patterns' words, and ten
	// case-insensitive regular expressions cost more than one lower-case
	// copy. Only for ASCII: (?i) also folds a few other letters onto
	// ASCII ones (the long s, the Kelvin sign), which the words would miss.
	var buf [512]byte // most descriptions: no copy on the heap
	lower, ascii := asciiLower(buf[:0], desc)
	var findings []string
	for i := range injectionPatterns {
		p := &injectionPatterns[i]
		if ascii && !p.mayMatch(lower) {
			continue
		}
		if p.re().MatchString(desc) {
			findings = append(findings, p.reason)
		}
	}
	return findings
}

// asciiLower appends s in lower case to dst and returns it and true
// when s is all ASCII, else false.
func asciiLower(dst []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

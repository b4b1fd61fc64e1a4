package toolview

import (
	"regexp"
	"sync"
)

// secretPattern matches the secret shapes removed from every error string
// shown to the model: GitHub and OpenAI-style keys, bearer tokens and
// token=/key=/API_KEY=/password=/secret= assignments. It is one alternation
// so the leftmost match wins ("API_KEY=x" is redacted as a whole, not as
// "API_" plus a redacted "KEY=x"). A value may start with a quote, so
// key="x" is caught as well as key=x. Compiled on first use: a one-shot
// command that redacts nothing does not pay for it at start.
var secretPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)` +
		`\bghp_[A-Za-z0-9_]{1,255}` +
		`|\bsk-[A-Za-z0-9_]{1,255}` +
		`|Bearer\s+\S+` +
		`|token=["']?[^\s&,;"']{1,255}` +
		`|API_KEY=["']?[^\s&,;"']{1,255}` +
		`|key=["']?[^\s&,;"']{1,255}` +
		`|password=["']?[^\s&,;"']{1,255}` +
		`|secret=["']?[^\s&,;"']{1,255}`)
})

// redacted replaces each secret Redact finds.
const redacted = "[REDACTED]"

// Redact replaces secrets in s with "[REDACTED]": case-insensitively,
// "ghp_…" and "sk-…" keys, "Bearer <token>", and the values of token=,
// key=, API_KEY=, password= and secret= together with their names.
func Redact(s string) string {
	return secretPattern().ReplaceAllString(s, redacted)
}

// injectionPattern is a sign of prompt injection in a tool description,
// with the reason reported.
type injectionPattern struct {
	re     *regexp.Regexp
	reason string
}

// injectionPatterns are compiled on first use (see secretPattern).
var injectionPatterns = sync.OnceValue(func() []injectionPattern {
	return []injectionPattern{
		{regexp.MustCompile(`(?i)ignore\s+(all\s+)?previous\s+instructions`), "prompt override attempt ('ignore previous instructions')"},
		{regexp.MustCompile(`(?i)you\s+are\s+now\s+a`), "identity override attempt ('you are now a...')"},
		{regexp.MustCompile(`(?i)your\s+new\s+(task|role|instructions?)\s+(is|are)`), "task override attempt"},
		{regexp.MustCompile(`(?i)\bsystem\s*:`), "system prompt injection attempt"},
		{regexp.MustCompile(`(?i)<\s*(system|human|assistant)\s*>`), "role tag injection attempt"},
		{regexp.MustCompile(`(?i)do\s+not\s+(tell|inform|mention|reveal)`), "concealment instruction"},
		{regexp.MustCompile(`(?i)(curl|wget|fetch)\s+https?://`), "network command in description"},
		{regexp.MustCompile(`(?i)base64\.(b64decode|decodebytes)`), "base64 decode reference"},
		{regexp.MustCompile(`(?i)exec\s*\(|eval\s*\(`), "code execution reference"},
		{regexp.MustCompile(`(?i)import\s+(subprocess|os|shutil|socket)`), "dangerous import reference"},
	}
})

// ScanDescription returns the reasons a tool description looks like a
// prompt-injection attempt, in a fixed order, or nil when it looks clean.
// The findings are for a log warning only; a tool is never refused for
// them, since false positives would break legitimate servers.
func ScanDescription(desc string) []string {
	if desc == "" {
		return nil
	}
	var findings []string
	for _, p := range injectionPatterns() {
		if p.re.MatchString(desc) {
			findings = append(findings, p.reason)
		}
	}
	return findings
}

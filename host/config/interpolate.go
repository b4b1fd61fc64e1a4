package config

import (
	"strings"
)

// Interpolate replaces variable references in s using lookup and returns the
// result together with the names that lookup could not resolve, each once, in
// order of first appearance.
//
// Recognised forms:
//
//	${VAR}            value of VAR
//	${env:VAR}        same as ${VAR}
//	${VAR:-default}   value of VAR, or default when VAR is not set at all
//	                  (a variable set to the empty string is used as is)
//	$${...}           escape: the literal text ${...}, not interpolated
//
// The name is everything between "${" and the first "}", trimmed of spaces, so
// names with dots or hyphens work. Defaults cannot contain "}" and are not
// themselves interpolated. An unresolved reference stays in the result as
// written, and "${}" or an unterminated "${" is kept literally.
func Interpolate(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		ref := s[i : i+2+end+1]
		body := strings.TrimSpace(s[i+2 : i+2+end])
		i += 2 + end + 1
		name, def, hasDef := body, "", false
		if k := strings.Index(body, ":-"); k >= 0 {
			name, def, hasDef = strings.TrimSpace(body[:k]), body[k+2:], true
		}
		name = strings.TrimSpace(strings.TrimPrefix(name, "env:"))
		if name == "" {
			b.WriteString(ref)
			continue
		}
		if v, ok := lookup(name); ok {
			b.WriteString(v)
			continue
		}
		if hasDef {
			b.WriteString(def)
			continue
		}
		b.WriteString(ref)
		if !contains(missing, name) {
			missing = append(missing, name)
		}
	}
	return b.String(), missing
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
	"strings"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// DotEnvFile is the name of the secrets file inside the Hermes home folder.
const DotEnvFile = homedir.DotEnvName

var envKeyRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// LoadDotEnv reads <home>/.env. A missing file gives an empty map. Lines are
// KEY=value with an optional "export " prefix; blank lines and lines starting
// with "#" are ignored, as are lines that are not assignments. Values in
// single quotes are taken literally; values in double quotes understand the
// escapes \n \r \t \" \\ and \$; an unquoted value ends at " #" and is trimmed.
// When a key appears twice the last line wins.
func LoadDotEnv(home string) (map[string]string, error) {
	path := homedir.Dir(home).DotEnv()
	data, err := readDotEnv(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := parseDotEnvLine(line); ok {
			out[k] = v
		}
	}
	return out, nil
}

// readDotEnv reads a .env file of at most MaxConfigBytes that no one else
// could have changed (see checkTrusted).
func readDotEnv(path string) ([]byte, error) {
	data, err := readLimited(path, MaxConfigBytes, true)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !refusedFile(err) {
		err = fmt.Errorf("read %s: %w", path, err)
	}
	return data, err
}

// parseDotEnvLine returns the key and value of one .env line.
func parseDotEnvLine(line string) (key, value string, ok bool) {
	line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
	if line == "" || line[0] == '#' {
		return "", "", false
	}
	line = strings.TrimPrefix(line, "export ")
	k, v, found := strings.Cut(line, "=")
	if !found {
		return "", "", false
	}
	k = strings.TrimSpace(k)
	if !envKeyRE.MatchString(k) {
		return "", "", false
	}
	return k, unquoteDotEnv(strings.TrimSpace(v)), true
}

func unquoteDotEnv(v string) string {
	if len(v) >= 2 && v[0] == '\'' {
		if end := strings.IndexByte(v[1:], '\''); end >= 0 {
			return v[1 : 1+end]
		}
	}
	if len(v) >= 2 && v[0] == '"' {
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			if c == '"' {
				return b.String()
			}
			if c == '\\' && i+1 < len(v) {
				i++
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case '"', '\\', '$':
					b.WriteByte(v[i])
				default:
					b.WriteByte('\\')
					b.WriteByte(v[i])
				}
				continue
			}
			b.WriteByte(c)
		}
		// No closing quote: take the text as written.
		return v
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

var plainDotEnvRE = lazyregexp.New(`^[A-Za-z0-9_./:@+,%=~^-]*$`)

// quoteDotEnv writes v so that parseDotEnvLine reads it back unchanged.
func quoteDotEnv(v string) string {
	if plainDotEnvRE.MatchString(v) {
		return v
	}
	if !strings.ContainsAny(v, "'\n\r") {
		return "'" + v + "'"
	}
	r := strings.NewReplacer("\\", `\\`, "\"", `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`, "$", `\$`)
	return "\"" + r.Replace(v) + "\""
}

// SetDotEnv sets key to value in <home>/.env. The last line that assigns key
// is replaced in place (keeping an "export " prefix); otherwise a line is
// appended. Every other byte of the file is kept. The file is written
// atomically under the lock <home>/.env.lock and ends up with mode 0600,
// owned by the user running hermes, whatever the old file's mode and owner
// were; where the file system cannot keep it private nothing is written
// and SetDotEnv fails saying so. The home folder is created (0700) when
// missing.
func SetDotEnv(home, key, value string) error {
	if !envKeyRE.MatchString(key) {
		return fmt.Errorf("set %q in .env: a key must match [A-Za-z_][A-Za-z0-9_]*; choose another name", key)
	}
	path := homedir.Dir(home).DotEnv()
	return withLock(path, func() error {
		data, err := readDotEnv(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		at := -1
		for i, l := range lines {
			if k, _, ok := parseDotEnvLine(string(l)); ok && k == key {
				at = i
			}
		}
		newLine := key + "=" + quoteDotEnv(value)
		var out []byte
		if at >= 0 {
			old := string(lines[at])
			prefix := ""
			if strings.HasPrefix(strings.TrimSpace(old), "export ") {
				prefix = "export "
			}
			eol := ""
			switch {
			case strings.HasSuffix(old, "\r\n"):
				eol = "\r\n"
			case strings.HasSuffix(old, "\n"):
				eol = "\n"
			}
			lines[at] = []byte(prefix + newLine + eol)
			out = bytes.Join(lines, nil)
		} else {
			out = append(out, data...)
			if len(out) > 0 && out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
			out = append(out, newLine+"\n"...)
		}
		return writeAtomic(path, out, 0o600, checkPrivate)
	})
}

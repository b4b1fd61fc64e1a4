package auth

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// validName is the server-name rule of the host's config: letters, digits,
// "_" and "-".
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// TokenDirName is the folder under the Hermes home that holds every auth
// plugin's files: Config.TokenDir is $HERMES_HOME/mcp-tokens.
const TokenDirName = "mcp-tokens"

// FileStem is the file name stem of a server's credential files in
// Config.TokenDir (<stem>.json, <stem>.client.json, <stem>.meta.json). The
// mapping is one-to-one, so that no server can reach another's tokens: a
// valid server name (letters, digits, "_" and "-") is its own stem, which is
// also the name the original Hermes gave it unless the name starts or ends
// with "_" or is longer than 128 characters (it trimmed those "_" and cut
// long names, so "_a" and "a" shared one file: such old files are left
// alone, since they cannot be told apart). Any other name, which config
// validation rejects, has each byte outside that set written as %XX, and
// "" is "%": the stem then contains "%", which a valid name never does. A
// stem never contains a path separator and is never "." or "..". Every
// program that keeps credentials for hermes names them this way.
func FileStem(server string) string {
	if validName().MatchString(server) {
		return server
	}
	var b strings.Builder
	for i := 0; i < len(server); i++ {
		c := server[i]
		if c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() == 0 {
		return "%"
	}
	return b.String()
}

package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Pattern is one entry of a network allow-list: a host name ("example.com"),
// every subdomain of one ("*.example.com", not example.com itself), or an IP
// address ("127.0.0.1", "[::1]"), each with an optional port (":443"; any
// port without).
type Pattern struct {
	// Host is lower case, without a trailing dot; an IPv6 address has no
	// brackets.
	Host string
	// Wildcard: the pattern matches the subdomains of Host.
	Wildcard bool
	// Port is the only port matched, 0 for every port.
	Port int
	// IP: Host is an IP address (in its canonical form).
	IP bool
}

// maxHostLen bounds a host name (RFC 1035: 253 characters).
const maxHostLen = 253

// ParsePattern reads one allow-list entry.
func ParsePattern(s string) (Pattern, error) {
	var p Pattern
	rest := strings.TrimSpace(s)
	if strings.HasPrefix(rest, "*.") {
		p.Wildcard = true
		rest = rest[2:]
	}
	host, port, err := splitHostPort(rest, 0)
	if err != nil {
		return Pattern{}, err
	}
	p.Host, p.Port = host, port
	if addr, err := netip.ParseAddr(host); err == nil {
		if p.Wildcard {
			return Pattern{}, errors.New("*. goes with host names, not IP addresses")
		}
		p.IP = true
		p.Host = addr.String()
	}
	return p, nil
}

// String is the pattern as written in config.yaml.
func (p Pattern) String() string {
	h := p.Host
	if p.Wildcard {
		h = "*." + h
	}
	if p.Port == 0 {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return net.JoinHostPort(h, strconv.Itoa(p.Port))
}

// Match reports whether host (normalized by SplitTarget) and port are
// allowed by p.
func (p Pattern) Match(host string, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	if p.Wildcard {
		return len(host) > len(p.Host)+1 && strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// AllowList is the hosts a server may reach; the zero value allows none.
type AllowList []Pattern

// NewAllowList reads the entries of sandbox.network.
func NewAllowList(entries []string) (AllowList, error) {
	out := make(AllowList, 0, len(entries))
	for _, e := range entries {
		p, err := ParsePattern(e)
		if err != nil {
			return nil, fmt.Errorf("network host %q: %w", clip(e, 80), err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Allows returns the first pattern that allows host:port.
func (a AllowList) Allows(host string, port int) (Pattern, bool) {
	for _, p := range a {
		if p.Match(host, port) {
			return p, true
		}
	}
	return Pattern{}, false
}

// SplitTarget reads the host and port a client asked for: a CONNECT
// authority ("example.com:443", "[::1]:8080") or the host of an absolute
// URL, with defaultPort when it names none. The
// host comes back lower case, without a trailing dot or IPv6 brackets, IP
// addresses in canonical form; anything else than a plain host name or IP
// address is an error.
func SplitTarget(authority string, defaultPort int) (host string, port int, err error) {
	host, port, err = splitHostPort(authority, defaultPort)
	if err != nil {
		return "", 0, err
	}
	if addr, perr := netip.ParseAddr(host); perr == nil {
		host = addr.String()
	}
	return host, port, nil
}

func splitHostPort(s string, defaultPort int) (string, int, error) {
	if s == "" {
		return "", 0, errors.New("no host")
	}
	if len(s) > maxHostLen+8 {
		return "", 0, errors.New("host too long")
	}
	host, portText := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("unclosed [")
		}
		host = s[1:end]
		after := s[end+1:]
		if after != "" {
			if after[0] != ':' {
				return "", 0, errors.New("junk after ]")
			}
			portText = after[1:]
			if portText == "" {
				return "", 0, errors.New("empty port")
			}
		}
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() || addr.Zone() != "" {
			return "", 0, errors.New("want an IPv6 address between [ and ]")
		}
	case strings.Count(s, ":") == 1:
		var ok bool
		host, portText, ok = strings.Cut(s, ":")
		if !ok || portText == "" {
			return "", 0, errors.New("empty port")
		}
	case strings.Count(s, ":") > 1:
		return "", 0, errors.New("an IPv6 address goes between [ and ]")
	}
	port := defaultPort
	if portText != "" {
		n, err := strconv.Atoi(portText)
		if err != nil || n < 1 || n > 65535 || portText[0] == '0' || portText[0] == '+' {
			return "", 0, fmt.Errorf("bad port %q", clip(portText, 10))
		}
		port = n
	}
	if !strings.HasPrefix(s, "[") {
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if !validName(host) {
			return "", 0, errors.New("not a host name")
		}
	}
	return host, port, nil
}

// validName reports whether h is a host name of letters, digits, hyphens
// and dots (an IPv4 address is one), each label 1 to 63 long, not starting
// or ending with a hyphen.
func validName(h string) bool {
	if h == "" || len(h) > maxHostLen {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// clip bounds a string from config or a client before it is shown.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

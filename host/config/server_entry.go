package config

import "time"

// ServerEntry is an ordered set of settings for a new or replaced server
// entry. Keys are written in the order they were first set. Use the typed
// setters for the common keys and Set for any other.
type ServerEntry struct {
	Fields Map
}

// NewServerEntry returns an empty entry.
func NewServerEntry() *ServerEntry { return &ServerEntry{} }

// Set sets any key of the entry (see Map for the value types).
func (e *ServerEntry) Set(key string, v any) *ServerEntry { e.Fields.Set(key, v); return e }

// Command sets command and, when given, args.
func (e *ServerEntry) Command(cmd string, args ...string) *ServerEntry {
	e.Set("command", cmd)
	if len(args) > 0 {
		e.Args(args...)
	}
	return e
}

// Args sets args.
func (e *ServerEntry) Args(args ...string) *ServerEntry {
	return e.Set("args", append([]string(nil), args...))
}

// Env adds (or replaces) one env variable, keeping the order of calls.
func (e *ServerEntry) Env(key, value string) *ServerEntry { return e.addTo("env", key, value) }

// Header adds (or replaces) one HTTP header, keeping the order of calls.
func (e *ServerEntry) Header(key, value string) *ServerEntry { return e.addTo("headers", key, value) }

func (e *ServerEntry) addTo(field, key, value string) *ServerEntry {
	cur, _ := e.Fields.Get(field)
	m, _ := cur.(Map)
	m.Set(key, value)
	return e.Set(field, m)
}

// Cwd sets cwd.
func (e *ServerEntry) Cwd(dir string) *ServerEntry { return e.Set("cwd", dir) }

// URL sets url.
func (e *ServerEntry) URL(u string) *ServerEntry { return e.Set("url", u) }

// Transport sets transport.
func (e *ServerEntry) Transport(t string) *ServerEntry { return e.Set("transport", t) }

// Timeout sets timeout (written in seconds).
func (e *ServerEntry) Timeout(t time.Duration) *ServerEntry { return e.Set("timeout", t) }

// ConnectTimeout sets connect_timeout (written in seconds).
func (e *ServerEntry) ConnectTimeout(t time.Duration) *ServerEntry {
	return e.Set("connect_timeout", t)
}

// Enabled sets enabled.
func (e *ServerEntry) Enabled(on bool) *ServerEntry { return e.Set("enabled", on) }

// Catalog records that the entry was installed from catalog entry name
// (catalog:): what uninstall and the catalog's status go by.
func (e *ServerEntry) Catalog(name string) *ServerEntry { return e.Set("catalog", name) }

// Auth sets auth.
func (e *ServerEntry) Auth(a string) *ServerEntry { return e.Set("auth", a) }

// Include sets tools.include.
func (e *ServerEntry) Include(names ...string) *ServerEntry { return e.setTools("include", names) }

// Exclude sets tools.exclude.
func (e *ServerEntry) Exclude(names ...string) *ServerEntry { return e.setTools("exclude", names) }

func (e *ServerEntry) setTools(key string, names []string) *ServerEntry {
	cur, _ := e.Fields.Get("tools")
	m, _ := cur.(Map)
	m.Set(key, append([]string(nil), names...))
	return e.Set("tools", m)
}

// OAuth adds (or replaces) one key of the oauth: block (client_id,
// client_secret, scope, redirect_port, ...), keeping the order of calls.
func (e *ServerEntry) OAuth(key string, v any) *ServerEntry {
	cur, _ := e.Fields.Get("oauth")
	m, _ := cur.(Map)
	m.Set(key, v)
	return e.Set("oauth", m)
}

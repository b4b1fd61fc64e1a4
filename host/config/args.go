package config

// SplitArgs splits a server's args written as one string
// (args: "-y @scope/server --port 1") into words the way Load does:
// single and double quotes group words and a backslash escapes the next
// character. It lets a caller show the args as written, ${VAR}s
// unresolved, from Server.Raw.
func SplitArgs(s string) []string {
	return splitArgs(s)
}

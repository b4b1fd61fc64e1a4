// Package calls owns the commands that talk to one server: 'test'
// (connect and report), 'call' (one tool call with checked arguments) and
// 'tools-schema' (a tool's input schema).
package calls

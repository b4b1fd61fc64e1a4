// Package tools owns 'hermes tools': the tools a model would see, by
// server, read from the records of the servers' last connections unless
// --live connects them.
package tools

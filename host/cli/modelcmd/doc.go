// Package modelcmd owns 'hermes model': checking the model endpoint of
// the model: block with one small completion, and what it prints.
package modelcmd

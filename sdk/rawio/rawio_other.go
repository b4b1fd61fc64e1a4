//go:build !linux

package rawio

import (
	"io"
	"net"
)

// Raw I/O is Linux only (see raw_linux.go); elsewhere streams are read and
// written as they are.

func rawReaderOf(r io.Reader) io.Reader { return r }

func rawWriterOf(w io.Writer) io.Writer { return w }

// Raw reports whether v, from Reader or Writer, uses raw system calls:
// never here.
func Raw(v any) bool { return false }

func connOf(c net.Conn) net.Conn { return c }

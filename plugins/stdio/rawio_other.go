//go:build !linux

package main

import "io"

// Raw I/O is Linux only (see rawio_linux.go); elsewhere streams are read and
// written as they are.

func rawReaderOf(r io.Reader) io.Reader { return r }

func rawWriterOf(w io.Writer) io.Writer { return w }

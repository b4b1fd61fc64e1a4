// Package rawio reads and writes a non-blocking pipe or socket with raw
// read(2) and write(2) calls, still parked on the runtime's poller while
// there is nothing to read or no room to write. Reads and writes through os
// or net wake the runtime's monitor thread after every idle spell, which
// in a plugin that waits between messages is every message: the sdk's
// frame stream and the stdio plugin's pipes to its server use this instead.
// It is Linux only; elsewhere, and for blocking descriptors, Reader and
// Writer return what they are given.
package rawio

import "io"

// Reader returns r, read with raw system calls when it is a non-blocking
// descriptor the runtime polls.
func Reader(r io.Reader) io.Reader { return rawReaderOf(r) }

// Writer returns w, written with raw system calls when it is a
// non-blocking descriptor the runtime polls.
func Writer(w io.Writer) io.Writer { return rawWriterOf(w) }

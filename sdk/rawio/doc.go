// Package rawio reads and writes a non-blocking pipe or socket with raw
// read(2) and write(2) calls, still parked on the runtime's poller while
// there is nothing to read or no room to write. Reads and writes through os
// or net wake the runtime's monitor thread after every idle spell, which
// in a plugin that waits between messages is every message: the sdk's
// frame stream, the stdio plugin's pipes to its server and the HTTP plugin's
// connections use this instead.
// It is Linux only; elsewhere, and for blocking descriptors, Reader and
// Writer return what they are given.
package rawio

import (
	"io"
	"net"
)

// Reader returns r, read with raw system calls when it is a non-blocking
// descriptor the runtime polls.
func Reader(r io.Reader) io.Reader { return rawReaderOf(r) }

// Writer returns w, written with raw system calls when it is a
// non-blocking descriptor the runtime polls.
func Writer(w io.Writer) io.Writer { return rawWriterOf(w) }

// Conn returns c with Read and Write made raw system calls when c is a
// non-blocking socket the runtime polls (a TCP or Unix connection from
// package net); every other method is c's own, and deadlines still hold.
// Errors come back as *net.OpError, as c's would. An HTTP client that
// waits between requests (the HTTP plugin's) dials its connections so.
func Conn(c net.Conn) net.Conn { return connOf(c) }

// Package socktest gives the sdk's tests (on Linux) a connected pair of
// Unix stream sockets from package net, as the host passes the message
// stream to a plugin.
package socktest

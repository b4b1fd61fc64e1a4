package main

import (
	"golang.org/x/sys/unix"

	"github.com/hermes-agent/hermes/plugins/stdio/internal/sandbox/launcher"
)

// loopbackUp brings the loopback interface of this network namespace up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return wrap("socket for the loopback interface", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return wrap("read the loopback interface's flags", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return wrap("bring the loopback interface up", err)
	}
	return nil
}

// netnsListener brings loopback up, listens on 127.0.0.1 (a free port of
// this namespace), hands the socket to the plugin and returns its port.
func netnsListener() (int, error) {
	if err := loopbackUp(); err != nil {
		return 0, err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, wrap("proxy socket", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, wrap("bind the proxy socket", err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return 0, wrap("listen on the proxy socket", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, wrap("the proxy socket's address", err)
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return 0, errorText("proxy socket has no IPv4 address")
	}
	sendStatus(launcher.Status{Listener: in4.Port}, fd)
	return in4.Port, nil
}

package supervisor

import "reflect"

// A plugin started before it is asked for (issue 36). A command that knows
// early which plugin it needs ('hermes mcp call', once its server's entry
// is read) starts it with Prelaunch, so that the plugin's own start (its
// runtime, its package initialisation, the go-plugin handshake) overlaps
// what the host still does before it connects. The next Launch of the same
// spec takes that plugin, waiting for its handshake, instead of starting
// another; a failed prelaunch is that Launch's failure. A prelaunched
// plugin no Launch takes is stopped with the others: KillAll and Interrupt
// kill it, and one still in its handshake kills itself when the handshake
// ends (launch sees that the supervisor stopped).
//
// A transport plugin can be told more: the config of the Open it will be
// asked for first (openConfig, the bytes pluginhost.TransportOpenConfig
// makes of it), which a plugin built on the sdk opens at once, while its
// handshake and the dispense run (for the stdio plugin: it starts the
// server), for the first Open of exactly those bytes to take
// (sdk.EarlyOpenFDEnv). It travels on a pipe the plugin inherits, not in its
// environment, since a server's environment may hold secrets.

// early is one plugin Prelaunch started: done is closed when its start
// ended, with the plugin or the error.
type early struct {
	spec Spec
	done chan struct{}
	p    *Plugin
	err  error
}

// Prelaunch starts the plugin spec names in the background, for the next
// Launch of an equal spec, with openConfig (nil for none) for an early open
// (see the comment at the top of this file). It does nothing once the
// supervisor stopped, or when a prelaunch of that spec is already waiting
// to be taken.
func (s *Supervisor) Prelaunch(spec Spec, openConfig []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	for _, e := range s.early {
		if sameSpec(e.spec, spec) {
			return
		}
	}
	e := &early{spec: spec, done: make(chan struct{})}
	s.early = append(s.early, e)
	s.prelaunches.Add(1)
	go func() {
		defer s.prelaunches.Done()
		e.p, e.err = s.launch(spec, openConfig)
		close(e.done)
	}()
}

// takeEarly removes and returns the prelaunch of spec; nil when there is
// none.
func (s *Supervisor) takeEarly(spec Spec) *early {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.early {
		if sameSpec(e.spec, spec) {
			s.early = append(s.early[:i], s.early[i+1:]...)
			return e
		}
	}
	return nil
}

// sameSpec reports whether a plugin launched from a serves a Launch of b:
// the same binary, pin, label, frame bound and host-side glue.
func sameSpec(a, b Spec) bool { return reflect.DeepEqual(a, b) }

package serve

// Apply returns the Options opts set, with the logger named after kind when
// none was given.
func Apply[O ~func(*Options)](kind string, opts []O) Options {
	var o Options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if o.Logger == nil {
		o.Logger = NewLogger(kind)
	}
	return o
}

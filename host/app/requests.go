package app

import (
	"strings"

	"github.com/hermes-agent/hermes/host/approval"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/elicit"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/roots"
	"github.com/hermes-agent/hermes/host/sampling"
	"github.com/hermes-agent/hermes/host/session"
)

// Requests is the run's one provider of what servers ask of the host:
// sampling (one sampling.Host for the run: its rate windows, tool-round
// counts and metrics span the run's connections), elicitation (each
// server's elicitation: block, asking the run's prompter), roots (the
// working folder and roots: of config.yaml) and the approval settings the
// chat's gate is built from. Every registry and single session of the run
// gets its handlers here.
type Requests struct {
	f        *Factory
	sampling *sampling.Host
}

// Requests returns the run's provider of server requests.
func (f *Factory) Requests() *Requests {
	f.reqOnce.Do(func() {
		f.req = &Requests{f: f, sampling: sampling.New(sampling.Options{
			Home:   f.HomePath(),
			Logger: f.Log,
			// The run's model client, built at the first sampling
			// request (from the model: block and the key it names) unless
			// the chat built it first.
			Model: func() (sampling.Chatter, error) {
				if _, err := f.Model(); err != nil {
					return nil, err
				}
				return samplingModel{f}, nil
			},
		})}
	})
	return f.req
}

// closeRequests closes the sampling host's state.db connection, when the
// run made one.
func (f *Factory) closeRequests() {
	f.reqOnce.Do(func() {}) // none from now on
	if f.req == nil {
		return
	}
	if err := f.req.sampling.Close(); err != nil {
		f.Log.Warn("closing the sampling counts", "error", err.Error())
	}
}

// Sampling is the run's sampling host.
func (r *Requests) Sampling() *sampling.Host { return r.sampling }

// For returns srv's handlers: its sampling handler (none when its policy
// turns sampling off, so the capability is not offered), its elicitation
// handler, and the run's roots unless the entry turns roots off.
func (r *Requests) For(srv *config.Server, set *roots.Set) registry.Requests {
	var q registry.Requests
	if hd := r.sampling.Handler(srv); hd != nil {
		q.Sampling = hd
	}
	q.Elicitation = r.Elicitation(srv)
	if !srv.NoRoots && set != nil {
		q.Roots = set
	}
	return q
}

// Bind gives every server of a registry its handlers (For), and returns
// the roots offered: a long-lived command hooks its registry to them
// (set.OnChange calling Manager.NotifyRootsChanged) and calls set.Reload
// after a config reload or a change of working folder.
func (r *Requests) Bind(o *registry.Options) *roots.Set {
	set := r.Roots()
	o.Requests = func(srv *config.Server) registry.Requests { return r.For(srv, set) }
	return set
}

// BindSession is Bind for a single session without a registry ('hermes mcp
// test').
func (r *Requests) BindSession(d *session.Deps, srv *config.Server) {
	q := r.For(srv, r.Roots())
	if q.Sampling != nil {
		d.Sampling = q.Sampling
	}
	d.Elicitation = q.Elicitation
	if q.Roots != nil {
		d.Roots = q.Roots
	}
}

// Roots returns the roots offered to servers: the working folder, then
// roots: of config.yaml. A roots: that cannot be read is reported once and
// only the working folder is offered.
func (r *Requests) Roots() *roots.Set {
	f := r.f
	wd, err := f.WorkDir()
	if err != nil {
		wd = ""
	}
	home, _ := f.UserHome()
	list, err := roots.Load(f.HomePath(), wd, home, f.ConfigEnv())
	if err != nil {
		f.WarnOnce("roots", oneLine(err.Error())+"; offering servers only the working folder as a root")
		list, _ = roots.Resolve(wd, home, nil)
	}
	return roots.NewSet(list)
}

// Elicitation returns srv's elicitation handler: its elicitation: block,
// the run's prompter when there is one (else every request is declined),
// and the run's page opener for URL-mode pages. A wrong elicitation: block
// declines every request and says why once.
func (r *Requests) Elicitation(srv *config.Server) *elicit.Handler {
	f := r.f
	s, err := elicit.ParseSettings(srv.Name, srv.Elicitation)
	if err != nil {
		f.WarnOnce("elicitation/"+srv.Name, oneLine(err.Error())+"; until then its elicitation requests are declined")
		s.Enabled = false
	}
	var p elicit.Prompter
	if f.opts.Terminal {
		p = f.opts.Prompter
	}
	return elicit.New(srv.Name, s, p, f.opts.OpenPage, f.Log.Named("elicitation"))
}

// Prompter is the person at the run's terminal (nil: nobody). The chat's
// approvals ask through it, so that they and elicitation take turns.
func (r *Requests) Prompter() elicit.Prompter { return r.f.opts.Prompter }

// ApprovalSettings reads config.yaml's approval: block, which the chat's
// gate is built from; /reload-mcp reads them again.
func (r *Requests) ApprovalSettings() (approval.Settings, error) {
	raw, path, err := config.LoadApproval(r.f.HomePath(), r.f.ConfigEnv())
	if err != nil {
		return approval.Settings{}, err
	}
	return approval.ParseSettings(raw, path)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

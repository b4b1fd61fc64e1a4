package replicas

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
)

// Balancer is a round-robin load balancer on loopback standing for a
// Kubernetes Service: each request goes to the next backend in rotation,
// with no affinity; a backend that refuses the connection (a process that
// died, before the endpoint is removed) is passed over for the next one,
// since nothing was sent. A backend out of rotation (a terminating pod's
// endpoint, removed) gets no new request.
type Balancer struct {
	// URL is the balancer's address (http://127.0.0.1:PORT).
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	backends []backend
	next     int
	hooks    Hooks
}

// Hooks tell a test what the balancer does.
type Hooks struct {
	// Sent, when set, is told of each request once it is written to
	// backend i (tool: the tools/call's tool, "" for another request): a
	// backend that refused the connection is not told of.
	Sent func(i int, tool string)
	// Done, when set, is told of each request after its answer (or
	// failure).
	Done func(Forwarded)
}

type backend struct {
	addr       string // HOST:PORT, "" while the replica is not running
	inRotation bool
	hits       *atomic.Int64
	// inFlight counts the requests forwarded to it and not yet answered
	// in full.
	inFlight *atomic.Int64
}

// Forwarded is one request as the balancer forwarded it.
type Forwarded struct {
	// Backend is the index of the backend that got it.
	Backend int
	// Tool is the tools/call's tool name, "" for another request.
	Tool string
	// Status is the answer's HTTP status (502 when the backend failed).
	Status int
	// Err is why the backend failed, nil when it answered.
	Err error
}

// NewBalancer starts a balancer over n backends, none running yet.
func NewBalancer(n int, hooks Hooks) *Balancer {
	b := &Balancer{hooks: hooks}
	for range n {
		b.backends = append(b.backends, backend{hits: &atomic.Int64{}, inFlight: &atomic.Int64{}})
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		fwd := Forwarded{Backend: -1, Tool: toolOf(body)}
		rec := &statusWriter{ResponseWriter: w}
		p := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(&url.URL{Scheme: "http", Host: "backend"})
				pr.Out.Host = r.Host
			},
			Transport:     roundTripFunc(func(req *http.Request) (*http.Response, error) { return b.forward(tr, req, body, &fwd) }),
			FlushInterval: -1,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				fwd.Err = err
				w.WriteHeader(http.StatusBadGateway)
			},
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		defer func() {
			if v := recover(); v != nil {
				// The backend died in the middle of a streamed answer:
				// the client's connection is cut.
				if fwd.Err == nil {
					fwd.Err = errors.New("the answer was cut")
				}
				if fwd.Backend >= 0 {
					b.backends[fwd.Backend].inFlight.Add(-1)
				}
				b.report(fwd, rec)
				panic(v)
			}
		}()
		p.ServeHTTP(rec, r)
		if fwd.Backend >= 0 {
			b.backends[fwd.Backend].inFlight.Add(-1)
		}
		b.report(fwd, rec)
	}))
	b.URL = b.srv.URL
	return b
}

// report tells the observer of fwd.
func (b *Balancer) report(fwd Forwarded, rec *statusWriter) {
	if rec.status != 0 {
		fwd.Status = rec.status
	}
	if fwd.Err != nil && fwd.Status == http.StatusOK {
		fwd.Status = http.StatusBadGateway
	}
	if b.hooks.Done != nil {
		b.hooks.Done(fwd)
	}
}

// forward sends req to the next backend in rotation, and to the one
// after when a backend refuses the connection (nothing was sent), each
// backend of the rotation tried once; fwd records which backend got it.
func (b *Balancer) forward(tr http.RoundTripper, req *http.Request, body []byte, fwd *Forwarded) (*http.Response, error) {
	for _, be := range b.rotation() {
		out := req.Clone(req.Context())
		out.URL.Host = be.addr
		out.Body = io.NopCloser(bytes.NewReader(body))
		if b.hooks.Sent != nil {
			i := be.index
			out = out.WithContext(httptrace.WithClientTrace(out.Context(), &httptrace.ClientTrace{
				WroteRequest: func(w httptrace.WroteRequestInfo) {
					if w.Err == nil {
						b.hooks.Sent(i, fwd.Tool)
					}
				},
			}))
		}
		b.backends[be.index].inFlight.Add(1)
		res, err := tr.RoundTrip(out)
		var op *net.OpError
		if err != nil && errors.As(err, &op) && op.Op == "dial" {
			b.backends[be.index].inFlight.Add(-1)
			continue
		}
		fwd.Backend = be.index
		b.backends[be.index].hits.Add(1)
		return res, err
	}
	return nil, errors.New("no backend in rotation accepts connections")
}

// inRotation is a backend of the rotation: its index and address.
type inRotation struct {
	index int
	addr  string
}

// rotation is every backend in rotation, starting with the next one.
func (b *Balancer) rotation() []inRotation {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []inRotation
	start := b.next
	for k := range b.backends {
		i := (start + k) % len(b.backends)
		if be := b.backends[i]; be.inRotation && be.addr != "" {
			if len(out) == 0 {
				b.next = i + 1
			}
			out = append(out, inRotation{i, be.addr})
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Set puts backend i at addr into rotation (a ready pod's endpoint).
func (b *Balancer) Set(i int, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends[i].addr, b.backends[i].inRotation = addr, true
}

// Remove takes backend i out of rotation (a terminating pod's endpoint
// removed): the requests it is serving go on, no new one reaches it.
func (b *Balancer) Remove(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends[i].inRotation = false
}

// InFlight is how many requests backend i has not answered in full.
func (b *Balancer) InFlight(i int) int64 { return b.backends[i].inFlight.Load() }

// Hits is how many requests backend i got.
func (b *Balancer) Hits(i int) int64 { return b.backends[i].hits.Load() }

// Close stops the balancer.
func (b *Balancer) Close() { b.srv.Close() }

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// toolOf is the tool a tools/call body names, "" for another body.
func toolOf(body []byte) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" {
		return ""
	}
	return m.Params.Name
}

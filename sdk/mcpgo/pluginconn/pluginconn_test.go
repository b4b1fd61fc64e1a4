package pluginconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/mcpgo/pluginconn"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
	"github.com/hermes-agent/hermes/sdk/transport"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// jsonServer is an in-memory JSON-RPC peer behind the byte contract:
// "echo" answers with its params, "ask" first sends a request of its own
// ("roots/list") and answers with the host's response, "fail" fails the
// write with an auth error, "drop" ends the connection.
type jsonServer struct {
	// arrived receives the method of each message that reaches the server.
	arrived chan string
	in      chan []byte
	end     chan error
	mu      sync.Mutex
	asks    map[string]json.RawMessage // server request id → id of the host's "ask"
	seen    []string
	headers []http.Header // the headers each message arrived with
	http    bool          // says it speaks MCP over HTTP
	// answers to the requests of a "burst": results, and errors by code.
	burstOK   int
	burstErrs map[int]int
	burstDone chan struct{} // gets a value for each answer
}

func (s *jsonServer) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-s.in:
		return m, nil
	case err := <-s.end:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *jsonServer) Write(ctx context.Context, msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return err
	}
	s.mu.Lock()
	s.seen = append(s.seen, m.Method)
	s.headers = append(s.headers, transport.MessageHeader(ctx))
	s.mu.Unlock()
	select {
	case s.arrived <- m.Method:
	default:
	}
	reply := func(id, result json.RawMessage) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		s.in <- b
	}
	switch m.Method {
	case "echo", "tools/call":
		reply(m.ID, m.Params)
	case "ask":
		s.mu.Lock()
		s.asks["77"] = m.ID
		s.mu.Unlock()
		s.in <- []byte(`{"jsonrpc":"2.0","id":77,"method":"roots/list"}`)
	case "fail":
		return sdk.NewError(sdk.CodeAuth, "401 Unauthorized")
	case "drop":
		s.end <- sdk.NewError(sdk.CodeClosed, "server exited with status 3")
	case "burst":
		// N sampling requests of the server's own, back to back, beside
		// the reader (as a server process writes while it reads).
		var n int
		_ = json.Unmarshal(m.Params, &n)
		go func() {
			for i := range n {
				s.in <- []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"b%d","method":"sampling/createMessage","params":{}}`, i))
			}
		}()
		reply(m.ID, json.RawMessage(`{}`))
	case "":
		if strings.HasPrefix(string(m.ID), `"b`) {
			s.mu.Lock()
			if m.Error != nil {
				s.burstErrs[m.Error.Code]++
			} else {
				s.burstOK++
			}
			s.mu.Unlock()
			s.burstDone <- struct{}{}
			return nil
		}
		s.mu.Lock()
		orig := s.asks[string(m.ID)]
		s.mu.Unlock()
		reply(orig, m.Result)
	}
	if m.Method == "echo" && string(m.Params) == `{"notify":true}` {
		s.in <- []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	}
	return nil
}

func (s *jsonServer) Properties() transport.Properties { return transport.Properties{HTTP: s.http} }

func (s *jsonServer) Close() error      { return nil }
func (s *jsonServer) SessionID() string { return "" }

func dial(t *testing.T) (mcptransport.Interface, *jsonServer) {
	t.Helper()
	return dialWith(t, pluginconn.DialOptions{})
}

func dialWith(t *testing.T, opts pluginconn.DialOptions) (mcptransport.Interface, *jsonServer) {
	t.Helper()
	return dialServer(t, opts, false)
}

func dialServer(t *testing.T, opts pluginconn.DialOptions, http bool) (mcptransport.Interface, *jsonServer) {
	t.Helper()
	srv := &jsonServer{arrived: make(chan string, 1), in: make(chan []byte, 16), end: make(chan error, 1), asks: map[string]json.RawMessage{},
		burstErrs: map[int]int{}, burstDone: make(chan struct{}, 1000), http: http}
	h := sdktest.TransportInProcess(t, func(context.Context, transport.Config, transport.Host) (transport.Conn, error) { return srv, nil })
	tr, _, err := pluginconn.Dial(context.Background(), h, transport.Config{Server: "s"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr, srv
}

func req(id int64, method string, params any) mcptransport.JSONRPCRequest {
	return mcptransport.JSONRPCRequest{ID: mcp.NewRequestId(id), Method: method, Params: params}
}

// Responses are matched to their requests by id, concurrently.
func TestRequestsMatchResponses(t *testing.T) {
	tr, _ := dial(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := tr.SendRequest(context.Background(), req(int64(i+1), "echo", map[string]int{"n": i}))
			if err != nil {
				t.Error(err)
				return
			}
			var got struct{ N int }
			if json.Unmarshal(resp.Result, &got) != nil || got.N != i || resp.ID.String() != mcp.NewRequestId(int64(i+1)).String() {
				t.Errorf("request %d got %s (id %v)", i, resp.Result, resp.ID)
			}
		}()
	}
	wg.Wait()
}

// Notifications reach the handler; a request of the server's own is
// answered by the host's handler and the answer reaches the server.
func TestNotificationsAndServerRequests(t *testing.T) {
	tr, _ := dial(t)
	notes := make(chan string, 1)
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) { notes <- n.Method })
	tr.(mcptransport.BidirectionalInterface).SetRequestHandler(func(_ context.Context, r mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
		return &mcptransport.JSONRPCResponse{ID: r.ID, Result: json.RawMessage(`{"roots":[{"uri":"file:///x"}]}`)}, nil
	})
	if _, err := tr.SendRequest(context.Background(), req(1, "echo", map[string]bool{"notify": true})); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-notes:
		if m != "notifications/tools/list_changed" {
			t.Fatalf("notification %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	resp, err := tr.SendRequest(context.Background(), req(2, "ask", nil))
	if err != nil || string(resp.Result) != `{"roots":[{"uri":"file:///x"}]}` {
		t.Fatalf("ask = %v, %v", resp, err)
	}
}

// A write error fails its request with the plugin's code; the end of the
// connection fails what is pending as mcp-go's ErrTransportClosed, with the
// plugin's reason.
func TestErrors(t *testing.T) {
	tr, _ := dial(t)
	_, err := tr.SendRequest(context.Background(), req(1, "fail", nil))
	if sdk.ErrorCode(err) != sdk.CodeAuth {
		t.Fatalf("fail = %v", err)
	}
	_, err = tr.SendRequest(context.Background(), req(2, "drop", nil))
	if !errors.Is(err, mcptransport.ErrTransportClosed) || sdk.ErrorCode(err) != sdk.CodeClosed || err.Error() != "server exited with status 3" {
		t.Fatalf("drop = %v", err)
	}
	if _, err := tr.SendRequest(context.Background(), req(3, "echo", nil)); !errors.Is(err, mcptransport.ErrTransportClosed) {
		t.Fatalf("after the end = %v", err)
	}
}

// A cancelled request returns the context's error; the connection stays
// usable.
func TestCancel(t *testing.T) {
	tr, srv := dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := tr.SendRequest(ctx, req(1, "hang", nil)); errc <- err }()
	select {
	case <-srv.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the server")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if _, err := tr.SendRequest(context.Background(), req(2, "echo", nil)); err != nil {
		t.Fatalf("after a cancel: %v", err)
	}
}

// Requests of the server's own are handled at most MaxServerRequests at a
// time: one more is refused at once with a JSON-RPC error (-32000), and the
// first refusal is reported once, naming the key that raises the limit.
func TestServerRequestsBounded(t *testing.T) {
	const limit, n = 4, 200
	var warnings []string
	var wmu sync.Mutex
	tr, srv := dialWith(t, pluginconn.DialOptions{MaxServerRequests: limit, TransportOptions: pluginhost.TransportOptions{
		OnWarning: func(w *sdk.Error) { wmu.Lock(); warnings = append(warnings, w.Message); wmu.Unlock() },
	}})
	release := make(chan struct{})
	var mu sync.Mutex
	running, most := 0, 0
	tr.(mcptransport.BidirectionalInterface).SetRequestHandler(func(ctx context.Context, r mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return &mcptransport.JSONRPCResponse{ID: r.ID, Result: json.RawMessage(`{"model":"m"}`)}, nil
	})
	if _, err := tr.SendRequest(context.Background(), req(1, "burst", n)); err != nil {
		t.Fatal(err)
	}
	// Every request but the ones being handled is refused without waiting
	// for a handler.
	for range n - limit {
		select {
		case <-srv.burstDone:
		case <-time.After(30 * time.Second):
			t.Fatal("the refusals did not arrive")
		}
	}
	close(release)
	for range limit {
		select {
		case <-srv.burstDone:
		case <-time.After(30 * time.Second):
			t.Fatal("the handled requests were not answered")
		}
	}
	srv.mu.Lock()
	ok, refused, other := srv.burstOK, srv.burstErrs[pluginconn.RefusedCode], len(srv.burstErrs)
	srv.mu.Unlock()
	if ok != limit || refused != n-limit || other != 1 || most > limit {
		t.Fatalf("answered %d, refused %d, error codes %d, at most %d at once; want %d, %d, 1, <= %d", ok, refused, other, most, limit, n-limit, limit)
	}
	wmu.Lock()
	defer wmu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "max_server_requests") || !strings.Contains(warnings[0], "more than 4") {
		t.Fatalf("warnings = %q", warnings)
	}
}

// A request's HTTP headers (mcp-go computes the 2026-07-28 revision's for
// every transport) reach a plugin that speaks HTTP, and only such a plugin:
// to any other they would be encoded and decoded for nothing.
func TestHeadersOnlyOverHTTP(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(fmt.Sprint("http=", overHTTP), func(t *testing.T) {
			tr, srv := dialServer(t, pluginconn.DialOptions{}, overHTTP)
			r := req(1, "echo", map[string]int{"n": 1})
			r.Header = http.Header{"Mcp-Method": {"echo"}}
			if _, err := tr.SendRequest(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.headers) != 1 {
				t.Fatalf("%d messages arrived, want 1", len(srv.headers))
			}
			got := srv.headers[0].Get("Mcp-Method")
			if overHTTP && got != "echo" {
				t.Fatalf("over HTTP the request arrived with Mcp-Method %q, want echo", got)
			}
			if !overHTTP && srv.headers[0] != nil {
				t.Fatalf("over a transport that is not HTTP the request arrived with headers %v", srv.headers[0])
			}
		})
	}
}

// codedErr is a handler error that chooses its JSON-RPC code.
type codedErr struct{ code int }

func (e codedErr) Error() string    { return "refused" }
func (e codedErr) JSONRPCCode() int { return e.code }

// A handler's error reaches the server as -32603, unless it is a
// CodedError (wrapped or not): then with the code it chooses.
func TestHandlerErrorCodes(t *testing.T) {
	tr, srv := dial(t)
	var n atomic.Int32
	tr.(mcptransport.BidirectionalInterface).SetRequestHandler(func(context.Context, mcptransport.JSONRPCRequest) (*mcptransport.JSONRPCResponse, error) {
		switch n.Add(1) {
		case 1:
			return nil, codedErr{code: -1}
		case 2:
			return nil, fmt.Errorf("sampling: %w", codedErr{code: -7})
		default:
			return nil, errors.New("plain")
		}
	})
	if _, err := tr.SendRequest(context.Background(), req(1, "burst", 3)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case <-srv.burstDone:
		case <-time.After(30 * time.Second):
			t.Fatal("the server never got its answers")
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.burstErrs[-1] != 1 || srv.burstErrs[-7] != 1 || srv.burstErrs[mcp.INTERNAL_ERROR] != 1 {
		t.Fatalf("error codes the server got: %v", srv.burstErrs)
	}
}

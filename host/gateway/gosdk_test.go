package gateway_test

import (
	"net/http"
	"slices"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// The official go-sdk client, through three replicas: it negotiates its
// own revision, sees the person's tools and calls one.
func TestOfficialGoSDKClient(t *testing.T) {
	t.Parallel()
	url, _, hits := replicas(t, 3)
	c := gomcp.NewClient(&gomcp.Implementation{Name: "go-sdk-test", Version: "1"}, nil)
	tr := &gomcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token: "token-of-bob", next: http.DefaultTransport}}}
	s, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	tools, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"mcp_ts_echo"}) {
		t.Fatalf("bob sees %v through the go-sdk client", names)
	}
	res, err := s.CallTool(t.Context(), &gomcp.CallToolParams{Name: "mcp_ts_echo", Arguments: map[string]any{"message": "from go-sdk"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*gomcp.TextContent).Text != "from go-sdk" {
		t.Fatalf("echo through the go-sdk client: %v %+v", err, res)
	}
	for i, h := range hits {
		if h.Load() == 0 {
			t.Errorf("replica %d served none of the go-sdk client's requests", i)
		}
	}
}

package pluginhost_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/hermes-agent/hermes/sdk/sdktest"
)

// sealing is a fake that honours Config.Seal and runs the two steps of a
// login through the host's callback.
type sealing struct {
	fake
	logins chan auth.LoginOptions
}

func (s *sealing) Sealed() bool { return s.cfg.Seal != nil && len(s.cfg.Seal.Key) == auth.SealKeySize }

func (s *sealing) Login(_ context.Context, o auth.LoginOptions, _ auth.UI) (auth.Status, error) {
	s.logins <- o
	if o.Callback == "" {
		return auth.Status{Method: "fake", Pending: &auth.PendingLogin{URL: "https://as.example/authorize?state=" + o.State}}, nil
	}
	return auth.Status{Method: "fake", LoggedIn: true}, nil
}

func openWith(t *testing.T, a auth.Authenticator, cfg auth.Config) (*pluginhost.AuthClient, error) {
	t.Helper()
	h := sdktest.AuthInProcess(t, func(_ context.Context, got auth.Config) (auth.Authenticator, error) {
		switch f := a.(type) {
		case *sealing:
			f.cfg = got
		case *fake:
			f.cfg = got
		}
		return a, nil
	})
	return h.Open(context.Background(), cfg, pluginhost.AuthOptions{})
}

var sealKey = bytes.Repeat([]byte{0xA7}, auth.SealKeySize)

// A plugin that seals is opened with the key, which reaches it as it
// was, and the two steps of a login through the host's callback carry
// their fields both ways.
func TestSealedPluginOpensAndLogsInThroughTheHostCallback(t *testing.T) {
	s := &sealing{logins: make(chan auth.LoginOptions, 2)}
	c, err := openWith(t, s, auth.Config{Server: "notes", Method: "fake", Seal: &auth.Seal{Key: sealKey}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.cfg.Seal.Key, sealKey) {
		t.Fatal("the key did not reach the plugin as it was")
	}
	st, err := c.Login(context.Background(), auth.LoginOptions{RedirectURI: "https://gw.example/oauth/callback", State: "st8"})
	if err != nil || st.Pending == nil || st.Pending.URL != "https://as.example/authorize?state=st8" || st.LoggedIn {
		t.Fatalf("first step: %+v %v", st, err)
	}
	if o := <-s.logins; o.RedirectURI != "https://gw.example/oauth/callback" || o.State != "st8" || o.Callback != "" {
		t.Fatalf("first step reached the plugin as %+v", o)
	}
	st, err = c.Login(context.Background(), auth.LoginOptions{RedirectURI: "https://gw.example/oauth/callback", State: "st8", Callback: "https://gw.example/oauth/callback?code=c&state=st8"})
	if err != nil || st.Pending != nil || !st.LoggedIn {
		t.Fatalf("second step: %+v %v", st, err)
	}
	if o := <-s.logins; o.Callback != "https://gw.example/oauth/callback?code=c&state=st8" {
		t.Fatalf("second step reached the plugin as %+v", o)
	}
}

// A plugin built before sealing (its Authenticator is no Sealer, and it
// answers Open without saying it seals) is refused when the host asks for
// sealed files, and opened as ever when it does not: the new field is
// ignorable both ways. Its login ignores the callback fields and returns
// no Pending, which a host can tell.
func TestPluginBeforeSealing(t *testing.T) {
	_, err := openWith(t, &fake{}, auth.Config{Server: "notes", Method: "fake", Seal: &auth.Seal{Key: sealKey}})
	if sdk.ErrorCode(err) != sdk.CodeContract || !strings.Contains(err.Error(), "does not seal its files") {
		t.Fatalf("an old plugin asked to seal: %v", err)
	}
	c, err := openWith(t, &fake{}, auth.Config{Server: "notes", Method: "fake"})
	if err != nil {
		t.Fatalf("an old plugin without sealing: %v", err)
	}
	if st, err := c.Status(context.Background()); err != nil || st.Pending != nil || st.Method != "fake" {
		t.Fatalf("old plugin's status: %+v %v", st, err)
	}
}

// A host that does not ask for sealing (one built before it) opens a
// plugin that can seal as ever.
func TestHostWithoutSealing(t *testing.T) {
	s := &sealing{logins: make(chan auth.LoginOptions, 1)}
	if _, err := openWith(t, s, auth.Config{Server: "notes", Method: "fake"}); err != nil {
		t.Fatal(err)
	}
	if s.cfg.Seal != nil {
		t.Fatal("a seal appeared")
	}
}

// The key never prints with the config.
func TestSealPrintsWithoutItsKey(t *testing.T) {
	cfg := auth.Config{Server: "notes", Seal: &auth.Seal{Key: sealKey}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, cfg)
		for _, leak := range []string{string(sealKey), hex.EncodeToString(sealKey), base64.StdEncoding.EncodeToString(sealKey), "167 167"} {
			if strings.Contains(out, leak) {
				t.Fatalf("%s prints the key: %s", verb, out)
			}
		}
		if !strings.Contains(out, "fingerprint") {
			t.Fatalf("%s: %s", verb, out)
		}
	}
}

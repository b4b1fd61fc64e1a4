package authwire_test

import (
	"bytes"
	"encoding/gob"
	"testing"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/auth"
	"github.com/hermes-agent/hermes/sdk/internal/rpcx"
	aw "github.com/hermes-agent/hermes/sdk/internal/wire/authwire"
)

// roundTrip gob-encodes in as net/rpc does and decodes it into out.
func roundTrip(t *testing.T, in, out any) {
	t.Helper()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(in); err != nil {
		t.Fatal(err)
	}
	if err := gob.NewDecoder(&b).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// Open's reply gained Sealed: a host built before it decodes the new
// reply as the rpcx.ErrReply it knows, error included, and a host
// built after it reads an old plugin's reply as not sealed.
func TestOpenReplyBothWays(t *testing.T) {
	var old rpcx.ErrReply
	roundTrip(t, &aw.OpenReply{Err: sdk.NewError(sdk.CodeConfig, "bad"), Sealed: true}, &old)
	if old.Err == nil || old.Err.Code != sdk.CodeConfig {
		t.Fatalf("an old host reads %+v", old)
	}
	var fresh aw.OpenReply
	roundTrip(t, &rpcx.ErrReply{}, &fresh)
	if fresh.Sealed || fresh.Err != nil {
		t.Fatalf("a new host reads an old plugin's reply as %+v", fresh)
	}
	roundTrip(t, &aw.OpenReply{Sealed: true}, &fresh)
	if !fresh.Sealed {
		t.Fatal("Sealed lost between new sides")
	}
}

// Status gained Pending and LoginOptions three fields: each side ignores
// what it does not know.
func TestLoginFieldsBothWays(t *testing.T) {
	type oldStatus struct {
		Method   string
		LoggedIn bool
	}
	type newPending struct{ URL string }
	type newStatus struct {
		Method   string
		LoggedIn bool
		Pending  *newPending
	}
	var o aw.StatusReply[oldStatus]
	roundTrip(t, &aw.StatusReply[newStatus]{Status: newStatus{Method: "oauth", Pending: &newPending{URL: "https://as/authorize"}}}, &o)
	if o.Status.Method != "oauth" {
		t.Fatalf("an old host reads %+v", o)
	}
	var n aw.StatusReply[newStatus]
	roundTrip(t, &aw.StatusReply[oldStatus]{Status: oldStatus{Method: "oauth", LoggedIn: true}}, &n)
	if n.Status.Pending != nil || !n.Status.LoggedIn {
		t.Fatalf("a new host reads an old plugin's status as %+v", n)
	}
	type oldOptions struct{ Scope string }
	type newOptions struct{ Scope, RedirectURI, State, Callback string }
	var oo aw.LoginArgs[oldOptions]
	roundTrip(t, &aw.LoginArgs[newOptions]{Options: newOptions{Scope: "s", RedirectURI: "https://gw/oauth/callback", State: "x"}}, &oo)
	if oo.Options.Scope != "s" {
		t.Fatalf("an old plugin reads %+v", oo)
	}
}

// Challenge gained DPoPNonce: a plugin built before it reads a new host's
// challenge without it, and a new plugin reads an old host's challenge as
// carrying no nonce. The real auth.Challenge is the new side.
func TestChallengeNonceBothWays(t *testing.T) {
	type oldChallenge struct {
		Method, URL     string
		Status          int
		WWWAuthenticate []string
		Attempt         int
	}
	in := auth.Challenge{Method: "POST", URL: "https://rs/mcp", Status: 401,
		WWWAuthenticate: []string{`DPoP error="use_dpop_nonce"`}, Attempt: 1, DPoPNonce: "n-1"}
	var o aw.ChallengeArgs[oldChallenge]
	roundTrip(t, &aw.ChallengeArgs[auth.Challenge]{Challenge: in}, &o)
	if o.Challenge.URL != in.URL || o.Challenge.Status != 401 || len(o.Challenge.WWWAuthenticate) != 1 {
		t.Fatalf("an old plugin reads %+v", o.Challenge)
	}
	var n aw.ChallengeArgs[auth.Challenge]
	roundTrip(t, &aw.ChallengeArgs[oldChallenge]{Challenge: oldChallenge{Method: "GET", URL: "https://rs/mcp", Status: 401, Attempt: 2}}, &n)
	if n.Challenge.DPoPNonce != "" || n.Challenge.Attempt != 2 {
		t.Fatalf("a new plugin reads an old host's challenge as %+v", n.Challenge)
	}
	roundTrip(t, &aw.ChallengeArgs[auth.Challenge]{Challenge: in}, &n)
	if n.Challenge.DPoPNonce != "n-1" {
		t.Fatalf("DPoPNonce lost between new sides: %+v", n.Challenge)
	}
}

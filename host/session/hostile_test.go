package session_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A server that never ends its message is cut off at max_message_mb with
// an error naming the key, while another server of the same host goes on
// being served.
func TestHostileServerLeavesOthersServed(t *testing.T) {
	t.Parallel()
	d, dir := deps(t)
	evilSrv := testServer(dir, "--endless-message")
	evilSrv.Name = "evil"
	evilSrv.MaxMessageBytes = 1 << 20
	evil := connect(t, d, evilSrv)
	other := connect(t, d, testServer(dir))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := call(ctx, evil, "attack", nil)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "max_message_mb") || !strings.Contains(err.Error(), `"evil"`) {
		t.Fatalf("the attack ended with %v (ctx %v); want the limit, named", err, ctx.Err())
	}
	if got, err := call(context.Background(), other, "echo", map[string]any{"message": "still here"}); err != nil || got != "still here" {
		t.Fatalf("the other server: %q, %v", got, err)
	}
}

package events

import (
	"context"
	"strconv"
	"testing"

	"github.com/hermes-agent/hermes/plugins/bridge/internal/fixture"
	"github.com/hermes-agent/hermes/plugins/bridge/internal/send"
)

// A message the bridge sent and recorded (store.RecordSent) is a message
// event of its conversation, like the agent's own.
func TestRecordedMessageIsAnEvent(t *testing.T) {
	dir := fixture.Home(t, "current", false, false)
	s := openStore(t, dir)
	w := newWatcher(t, s, Options{})
	res := &send.Result{Platform: "telegram", ChatID: "123456", MessageIDs: []string{"77"}}
	if err := s.RecordSent(context.Background(), "telegram:123456", "sent by the bridge", res); err != nil {
		t.Fatal(err)
	}
	e := next(t, w, 0, "")
	if e.Type != TypeMessage || e.SessionKey != tgKey || e.Role != "assistant" || e.Content != "sent by the bridge" {
		t.Fatalf("event %+v; want the recorded assistant message of %s", e, tgKey)
	}
	msgs, err := s.Messages(context.Background(), tgID)
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; e.MessageID != strconv.FormatInt(last.ID, 10) {
		t.Errorf("event message_id %s, recorded row %d", e.MessageID, last.ID)
	}
}

package serve

import (
	"context"
	"slices"
	"testing"
)

// TestReceiversCloseAll: every receiver is closed, in the order added, and
// a close that hangs does not hold Shutdown past its context.
func TestReceiversCloseAll(t *testing.T) {
	var rs Receivers[int]
	for i := 1; i <= 3; i++ {
		rs.Add(i)
	}
	var closed []int
	rs.CloseAll(context.Background(), func(i int) { closed = append(closed, i) })
	if !slices.Equal(closed, []int{1, 2, 3}) {
		t.Errorf("closed %v, want [1 2 3]", closed)
	}

	hang := make(chan struct{})
	defer close(hang)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs.CloseAll(ctx, func(int) { <-hang }) // returns: ctx has ended
}

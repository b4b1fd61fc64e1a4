package model_test

import (
	"context"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/model"
	"github.com/hermes-agent/hermes/host/model/openaichat"
	"github.com/hermes-agent/hermes/internal/benchfloor"
	"github.com/hermes-agent/hermes/internal/testbin"
	"github.com/hermes-agent/hermes/internal/testmodel"
)

// childCPU is the CPU time of this process's waited-for children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkModelCall is one streamed completion of the scripted model on
// loopback: helper is hermes's way (hermes-model-openai started per call),
// inprocess the same openai-go client in this process (what a long-lived
// helper would cost at best). The difference is the process per call.
func BenchmarkModelCall(b *testing.B) {
	srv := testmodel.New(b)
	srv.Key = "sk-test-key"
	srv.SetDefault(testmodel.Reply{Text: "a short answer of a few words", ChunkSize: 8})
	s, err := model.Parse(map[string]any{"base_url": srv.URL, "default": "test-model"})
	if err != nil {
		b.Fatal(err)
	}
	s.APIKey = "sk-test-key"
	req := model.Request{Messages: []model.Message{{Role: "user", Text: "hi"}}}
	ctx := context.Background()
	var helper []time.Duration // per call, each run of helper
	b.Run("helper", func(b *testing.B) {
		c := model.New(s, testbin.Path(b, model.Binary), os.Environ())
		before := childCPU()
		n := 0
		for b.Loop() {
			if _, err := c.Chat(ctx, req); err != nil {
				b.Fatal(err)
			}
			n++
		}
		// The helpers' own CPU time (user and system), which the load of
		// the machine moves much less than the wall time.
		b.ReportMetric(float64((childCPU()-before).Microseconds())/1e3/float64(n), "helper-cpu-ms/call")
		helper = append(helper, b.Elapsed()/time.Duration(max(n, 1)))
	})
	b.Run("inprocess", func(b *testing.B) {
		c := openaichat.New(s, nil)
		n := 0
		for b.Loop() {
			n++
			if _, err := c.Chat(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
		// Against the median call of helper's runs (-count runs all of
		// helper's before inprocess's).
		if inproc := b.Elapsed() / time.Duration(max(n, 1)); len(helper) > 0 && inproc > 0 {
			slices.Sort(helper)
			benchfloor.Check(b, "model call: helper process / in process (wall)", "helper/inprocess", float64(helper[len(helper)/2])/float64(inproc), benchfloor.None)
		}
	})
}

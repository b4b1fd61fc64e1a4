package bench_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/supervisor"
)

// BenchmarkDiscovery measures the wall time of registry.Manager.Start with
// N Go test servers over stdio: N plugin processes and N servers started,
// initialized and listed in parallel, tools registered. Closing the
// manager is not timed.
func BenchmarkDiscovery(b *testing.B) {
	dir := bins(b)
	b.Setenv("HERMES_PLUGIN_PATH", dir)
	server := filepath.Join(dir, "hermes-testserver")
	for _, n := range []int{1, 10, 30} {
		b.Run("servers="+strconv.Itoa(n), func(b *testing.B) {
			home := b.TempDir()
			sup := supervisor.New(supervisor.Options{Home: home})
			defer sup.KillAll()
			servers := make([]*config.Server, n)
			for i := range servers {
				servers[i] = &config.Server{
					Name: "s" + strconv.Itoa(i), Transport: "stdio", Command: server,
					Enabled: true, ConnectTimeout: 30 * time.Second, Timeout: 30 * time.Second,
					KeepaliveInterval: config.DefaultKeepaliveInterval,
					Tools:             config.ToolsFilter{Resources: true, Prompts: true},
				}
			}
			tools := 0
			for b.Loop() {
				m := registry.New(registry.Options{Servers: servers, Deps: session.Deps{Home: home, Supervisor: sup}})
				if err := m.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				tools = len(m.Tools())
				for _, st := range m.Status() {
					if st.State != registry.StateConnected {
						b.Fatalf("%s: %s %s", st.Name, st.State, st.Error)
					}
				}
				m.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(tools), "tools")
		})
	}
}

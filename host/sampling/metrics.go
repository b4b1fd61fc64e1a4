package sampling

import (
	"encoding/json"
	"github.com/hermes-agent/hermes/host/homedir"

	"github.com/hermes-agent/hermes/host/atomicfile"
)

// MetricsFile is the file under $HERMES_HOME that keeps every server's
// sampling metrics, summed over the processes that answered its requests.
const MetricsFile = homedir.SamplingMetricsName

// maxMetricsBytes bounds the metrics file (it is read back).
const maxMetricsBytes = 1 << 20

// maxLastError bounds the last error kept per server.
const maxLastError = 300

// Metrics count one server's sampling requests.
type Metrics struct {
	Requests     int64  `json:"requests"`
	Errors       int64  `json:"errors"`
	TokensUsed   int64  `json:"tokens_used"`
	ToolUseCount int64  `json:"tool_use_count"`
	LastError    string `json:"last_error,omitempty"`
}

// LoadMetrics returns the saved metrics of every server (empty when there
// are none or the file cannot be read).
func LoadMetrics(home string) map[string]Metrics {
	b, err := atomicfile.ReadSmall(homedir.Dir(home).SamplingMetrics(), maxMetricsBytes)
	out := map[string]Metrics{}
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// record adds one request's outcome to the saved metrics of server.
func record(home, server string, tokens int64, err error, stopReason string) error {
	return atomicfile.Update(homedir.Dir(home).SamplingMetrics(), maxMetricsBytes, func(old []byte) ([]byte, error) {
		all := map[string]Metrics{}
		if old != nil {
			_ = json.Unmarshal(old, &all)
		}
		m := all[server]
		m.Requests++
		m.TokensUsed += tokens
		if err != nil {
			m.Errors++
			m.LastError = err.Error()
			if r := []rune(m.LastError); len(r) > maxLastError {
				m.LastError = string(r[:maxLastError]) + "…"
			}
		} else if stopReason == "toolUse" {
			m.ToolUseCount++
		}
		all[server] = m
		return json.MarshalIndent(all, "", "  ")
	})
}

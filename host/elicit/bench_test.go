package elicit_test

import (
	"testing"

	"github.com/hermes-agent/hermes/host/elicit"
)

// BenchmarkParseSchema reads a form of every field kind (what a request
// costs the host before anyone is asked).
func BenchmarkParseSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := elicit.ParseSchema("ts", formSchema); err != nil {
			b.Fatal(err)
		}
	}
}

package model_test

import (
	"os"
	"testing"

	"github.com/hermes-agent/hermes/internal/benchfloor"
)

// TestMain prints the floors of the benchmarks run (package benchfloor).
func TestMain(m *testing.M) { os.Exit(benchfloor.Main(m)) }

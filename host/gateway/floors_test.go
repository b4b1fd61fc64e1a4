package gateway_test

import (
	"os"
	"testing"

	"github.com/hermes-agent/hermes/internal/benchfloor"
)

func TestMain(m *testing.M) { os.Exit(benchfloor.Main(m)) }

package bench_test

import (
	"io"
	"log"
)

// yamux reports closed plugin connections through the standard logger; the
// host routes that into its log, benchmarks drop it.
func init() { log.SetOutput(io.Discard) }

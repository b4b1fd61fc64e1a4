package cli_test

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// testParallel is how many tests of this package run at once when
// -test.parallel is not given: they spend their time waiting on plugin
// and server processes, not on the CPU, so more of them than there are
// cores overlap their waits.
const testParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); p != nil && !given {
		_ = p.Value.Set(strconv.Itoa(testParallel))
	}
	os.Exit(m.Run())
}

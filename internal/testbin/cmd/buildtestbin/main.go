// Command buildtestbin builds every binary the tests run (testbin.Targets)
// into one folder, given as its argument, for `make test` to hand to every
// test process through testbin.EnvDir. It exits 1, naming each target that
// did not build.
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/hermes-agent/hermes/internal/testbin"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: buildtestbin DIR (builds every test binary into DIR, for "+testbin.EnvDir+"=DIR go test ...)")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "buildtestbin:", err)
		os.Exit(1)
	}
	errs := testbin.BuildAll(dir)
	names := make([]string, 0, len(errs))
	for name := range errs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(os.Stderr, "buildtestbin: %s: %v\n", name, errs[name])
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
}

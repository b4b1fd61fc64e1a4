// Package benchfloor reports a benchmark's ratio against its floor: the
// ratio a figure should stay under, measured against its baseline in the
// same benchmark. A benchmark only reports whether its floor is met and
// never fails on it (a busy machine is not a bug); figures are recorded in
// docs/BENCHMARKS.md, not asserted. Each ratio is a metric of its
// benchmark and a log line, and Main prints, after a package's
// benchmarks, every floor with the median of its runs (-count).
package benchfloor

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// None is the floor of a ratio that is reported without one.
const None = 0.0

var floors struct {
	sync.Mutex
	order []string
	limit map[string]float64
	runs  map[string][]float64
}

// Check reports ratio as b's metric unit, logs it against floor (None:
// no floor), and keeps it for the summary Main prints.
func Check(b *testing.B, name, unit string, ratio, floor float64) {
	b.Helper()
	b.ReportMetric(ratio, unit)
	if probe(b) {
		return
	}
	if floor == None {
		b.Logf("ratio %s: %.2f× (no floor)", name, ratio)
	} else {
		b.Logf("floor %s: %.2f× (floor ≤ %.2f×): %s", name, ratio, floor, verdict(ratio, floor))
	}
	floors.Lock()
	defer floors.Unlock()
	if floors.runs == nil {
		floors.limit, floors.runs = map[string]float64{}, map[string][]float64{}
	}
	if _, ok := floors.runs[name]; !ok {
		floors.order = append(floors.order, name)
	}
	floors.limit[name] = floor
	floors.runs[name] = append(floors.runs[name], ratio)
}

// probe reports whether b is the testing package's first run of a
// benchmark with b.N 1, made to size the next (it runs a benchmark that
// loops on b.N once before the run asked for): its ratio is not kept.
func probe(b *testing.B) bool {
	if b.N != 1 {
		return false
	}
	f := flag.Lookup("test.benchtime")
	return f == nil || f.Value.String() != "1x"
}

func verdict(ratio, floor float64) string {
	switch {
	case floor == None:
		return "no floor"
	case ratio <= floor:
		return "met"
	}
	return "NOT MET"
}

// Main runs m's tests and benchmarks, prints the floors to stdout and
// returns the exit code, for a package's TestMain: os.Exit(benchfloor.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Print(os.Stdout)
	return code
}

// Print writes each floor checked so far with the median of its runs, and
// nothing when none was.
func Print(w io.Writer) {
	floors.Lock()
	defer floors.Unlock()
	if len(floors.order) == 0 {
		return
	}
	fmt.Fprintln(w, "floors (median of the runs of this invocation):")
	width := 0
	for _, name := range floors.order {
		width = max(width, utf8.RuneCountInString(name))
	}
	for _, name := range floors.order {
		r := floors.runs[name]
		m, limit := Median(r), floors.limit[name]
		bound := fmt.Sprintf("floor ≤ %.2f×  %-7s", limit, verdict(m, limit))
		if limit == None {
			bound = fmt.Sprintf("%-22s", "no floor")
		}
		fmt.Fprintf(w, "  %-*s %5.2f×  %s  (runs: %s)\n", width, name, m, bound, joinRatios(r))
	}
}

func joinRatios(r []float64) string {
	s := make([]string, len(r))
	for i, x := range r {
		s[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(s, " ")
}

// Median returns the median of xs (0 for none); xs is not changed.
func Median[T int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

//go:build !linux

package bench_test

import "time"

// The process-tree figures need Linux (a child subreaper, /proc and
// RUSAGE_CHILDREN); elsewhere they read as zero.

func adoptOrphans() (undo func(), ok bool) { return func() {}, false }

func children() map[int]bool { return map[int]bool{} }

func reapOrphans(map[int]bool, time.Duration) bool { return true }

func childrenCPU() time.Duration { return 0 }

func procCPU(int) time.Duration { return 0 }

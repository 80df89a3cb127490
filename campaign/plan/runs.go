package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Slot is one run of an iteration: a cell (an index into the cells) and a
// repetition, counted from 1.
type Slot struct {
	Cell, Repetition int
}

// Order is the order an iteration's runs start in, for cells cells of
// repetitions runs each:
//
//	Interleaved  one repetition of every cell, then the next: A B A B
//	Sequential   every repetition of a cell, then the next: A A B B
//	Randomized   all runs shuffled by a source seeded with seed, so the
//	             same seed gives the same order
func Order(order v1alpha1.RunOrder, seed int64, cells, repetitions int) []Slot {
	out := make([]Slot, 0, cells*repetitions)
	if order == v1alpha1.OrderSequential {
		for c := range cells {
			for r := 1; r <= repetitions; r++ {
				out = append(out, Slot{c, r})
			}
		}
		return out
	}
	for r := 1; r <= repetitions; r++ {
		for c := range cells {
			out = append(out, Slot{c, r})
		}
	}
	if order == v1alpha1.OrderRandomized {
		// PCG's stream is fixed by its seeds, so an order can be
		// reproduced from the campaign's seed alone.
		rng := rand.New(rand.NewPCG(uint64(seed), 0x5ba9be9c))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

// IterationName names the iteration of campaign scheduled at t:
// <campaign>-<unix seconds>, shortened (see shorten) to 63 characters.
func IterationName(campaign string, t time.Time) string {
	suffix := "-" + strconv.FormatInt(t.Unix(), 10)
	return shorten(campaign, 63-len(suffix)) + suffix
}

// SnapshotName names the ConfigMap holding the spec an iteration runs
// (taken before its first run): <iteration>-spec. Iteration names are at
// most 63 characters, so this fits a ConfigMap's 253.
func SnapshotName(iteration string) string { return iteration + "-spec" }

// ReportName names the ConfigMap holding an iteration's whole comparison
// table: <iteration>-report.
func ReportName(iteration string) string { return iteration + "-report" }

// IterationTime is the scheduled time an iteration's name carries
// (IterationName's inverse, to the second), or false for a name
// IterationName does not make.
func IterationTime(name string) (time.Time, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return time.Time{}, false
	}
	digits := name[i+1:]
	sec, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || sec < 0 || strconv.FormatInt(sec, 10) != digits {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// RunName names repetition k of cell in the iteration of campaign
// scheduled at t: <campaign>-<unix seconds>-<cell hash>-r<k>. It is at
// most v1alpha1.MaxRunNameLength characters (a run's own bound, tighter
// than a label's 63, so that the run's children fit); a long campaign name
// is shortened, keeping it unique.
func RunName(campaign string, t time.Time, cell *Cell, k int) string {
	suffix := fmt.Sprintf("-%d-%s-r%d", t.Unix(), cell.Hash, k)
	return shorten(campaign, v1alpha1.MaxRunNameLength-len(suffix)) + suffix
}

// shorten returns name if it fits in n characters, else its first n-5
// characters, "-" and 4 hex digits of its SHA-256, so that two long names
// with a common prefix stay apart.
func shorten(name string, n int) string {
	if len(name) <= n {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:n-5] + "-" + hex.EncodeToString(sum[:])[:4]
}

// Baseline is the index of the baseline cell: the only cell with every
// label of spec.baseline, or, without one, the first cell.
func Baseline(spec *v1alpha1.BenchmarkCampaignSpec, cells []Cell) (int, error) {
	if len(spec.Baseline) == 0 {
		return 0, nil
	}
	found := -1
	for i := range cells {
		if !matches(spec.Baseline, cells[i].Choices) {
			continue
		}
		if found >= 0 {
			return 0, &Error{Field: baselinePath, err: fmt.Errorf("baseline %v names cells %s and %s; name a value of more axes", spec.Baseline, cells[found].Name, cells[i].Name)}
		}
		found = i
	}
	if found < 0 {
		return 0, &Error{Field: baselinePath, err: fmt.Errorf("baseline %v names no cell (is it excluded?)", spec.Baseline)}
	}
	return found, nil
}

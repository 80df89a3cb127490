package benchmarkrun

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// The run's own status write comes back twice: in the cache, and then as
// an event to the controller. The informer updates its cache before it
// hands the event on, and under load the event comes late. So:
//
//   - A pass can begin before the cache has the write (an event came
//     during the pass that wrote, and client-go hands the run over as
//     soon as that pass ends). It decides on the version the write
//     replaced, and its own status write, locked on that version, is
//     refused (Conflict) after all its other calls: at 50 runs on a
//     loaded host, 176 of 956 status writes. Such a pass now ends at
//     once; the write's event queues the run with the cache up to date.
//   - A pass can begin after the cache has the write but before its
//     event came: the event then queues the run for a pass that learns
//     nothing, and waits for the pass under way to end first. An update
//     of the run whose new version a pass has already read is dropped.
//
// docs/performance.md, "The run's own status write, seen once".

// runVersionsKeptFor is how long what is known of a run's versions is
// kept: past it a pass goes on as it did before (a stale decision is
// refused by the status write's lock, Conflict, and requeued), and an
// event is not dropped.
const runVersionsKeptFor = 30 * time.Second

// staleRunRecheck requeues a run whose cache was stale, should the
// write's event never come.
const staleRunRecheck = time.Second

// runVersions holds, for each run, the version its last pass read and the
// versions that pass's status write replaced.
type runVersions struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	runs  map[types.UID]seenVersions
	// swept is when runs was last swept of runs not seen for
	// runVersionsKeptFor: at most once in that time, not every pass.
	swept time.Time
}

// seenVersions is what runVersions knows of one run.
type seenVersions struct {
	// read is the version the run's last pass read.
	read string
	// replaced are the versions its status write replaced: the one the
	// pass read and the one it locked the write on (after its own
	// finalizer writes, if any); none if it wrote no status.
	replaced []string
	at       time.Time
}

func newRunVersions(clk clock.PassiveClock) *runVersions {
	return &runVersions{clock: clk, runs: map[types.UID]seenVersions{}}
}

// stale reports whether run, as a pass read it from the cache, is a
// version the last status write of it replaced; if not, it records the
// version as read. A version's successor is the write, so any other
// version means the cache has it.
func (v *runVersions) stale(run *v1alpha1.BenchmarkRun) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.clock.Now()
	s, ok := v.runs[run.UID]
	if ok && slices.Contains(s.replaced, run.ResourceVersion) && now.Sub(s.at) <= runVersionsKeptFor {
		return true
	}
	v.forgetOld(now)
	v.runs[run.UID] = seenVersions{read: run.ResourceVersion, at: now}
	return false
}

// wrote records that the status of run uid was written over versions.
func (v *runVersions) wrote(uid types.UID, versions ...string) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.runs[uid]
	s.replaced, s.at = versions, v.clock.Now()
	v.runs[uid] = s
}

// readAlready reports whether a pass has read run's version.
func (v *runVersions) readAlready(run types.UID, version string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.runs[run]
	return ok && s.read == version && v.clock.Since(s.at) <= runVersionsKeptFor
}

// forgetOld forgets the runs last seen longer than runVersionsKeptFor
// ago (runs deleted, or idle: their next pass records them again). It
// sweeps at most once every runVersionsKeptFor: a pass of one run need
// not walk every run's record.
func (v *runVersions) forgetOld(now time.Time) {
	if now.Sub(v.swept) < runVersionsKeptFor {
		return
	}
	v.swept = now
	for uid, s := range v.runs {
		if now.Sub(s.at) > runVersionsKeptFor {
			delete(v.runs, uid)
		}
	}
}

// ignoreVersionsRead drops the update events of a run whose new version a
// pass has already read: that pass decided on it.
func (v *runVersions) ignoreVersionsRead() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
		return !v.readAlready(e.ObjectNew.GetUID(), e.ObjectNew.GetResourceVersion())
	}}
}

package workload

import (
	"math/rand/v2"
	"sync"
)

// insertLog tracks the rows this runner inserted and has not deleted, oldest
// first. Deletes take the oldest, so no two deletes target one row and the
// result's delete count is exactly the rows removed; Latest reads pick among
// the newest. Its lock is held for a few slice operations only.
type insertLog struct {
	mu    sync.Mutex
	keys  []int64 // ring buffer of live inserted key indexes
	head  int     // index of the oldest
	size  int
	nextQ int64 // next insert sequence number
}

// maxLive bounds the memory of the log: beyond it the oldest rows are
// forgotten (they stay in the database, never deleted by this run).
const maxLive = 1 << 20

// nextSeq reserves the sequence number of the next insert.
func (l *insertLog) nextSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.nextQ
	l.nextQ++
	return s
}

// added records a committed insert.
func (l *insertLog) added(k int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size == len(l.keys) {
		if len(l.keys) >= maxLive {
			l.head = (l.head + 1) % len(l.keys)
			l.size--
		} else {
			l.grow()
		}
	}
	l.keys[(l.head+l.size)%len(l.keys)] = k
	l.size++
}

func (l *insertLog) grow() {
	n := max(16, 2*len(l.keys))
	keys := make([]int64, n)
	for i := range l.size {
		keys[i] = l.keys[(l.head+i)%len(l.keys)]
	}
	l.keys, l.head = keys, 0
}

// takeOldest removes and returns the oldest live insert.
func (l *insertLog) takeOldest() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size == 0 {
		return 0, false
	}
	k := l.keys[l.head]
	l.head = (l.head + 1) % len(l.keys)
	l.size--
	return k, true
}

// latest picks a recent live insert, favouring the newest (YCSB's "latest":
// zipfian over recency). A zipfian rank beyond the live rows is drawn again,
// which truncates the distribution to them; after a few misses the newest
// row is taken.
func (l *insertLog) latest(rng *rand.Rand, z *zipfian) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size == 0 {
		return 0, false
	}
	back := int64(0)
	for range 16 {
		if r := z.rank(rng); r < int64(l.size) {
			back = r
			break
		}
	}
	return l.keys[(l.head+l.size-1-int(back))%len(l.keys)], true
}

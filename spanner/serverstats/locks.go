package serverstats

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// MaxLockRanges bounds Result.LockRanges: the most contended ranges are
// what a reader acts on.
const MaxLockRanges = 10

// maxLockSamples bounds one row's samples: Spanner keeps at most 20.
const maxLockSamples = 100

// maxLockNames bounds the columns and modes listed per range or operation.
const maxLockNames = 8

// lockSample is one sampled lock request of a LOCK_STATS row.
type lockSample struct {
	column, mode, tag string
}

// parseLockSamples reads SAMPLE_LOCK_REQUESTS_JSON_STRING: Spanner
// documents it as the JSON form of SAMPLE_LOCK_REQUESTS, an array of
// (column, lock_mode, transaction_tag) structs. Field names are matched
// without case or underscores, as the documentation does not show them.
func parseLockSamples(s string) ([]lockSample, error) {
	if len(s) > maxJSONBytes {
		return nil, fmt.Errorf("lock samples of %d bytes are more than %d", len(s), maxJSONBytes)
	}
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(s), &items); err != nil {
		return nil, err
	}
	if len(items) > maxLockSamples {
		return nil, fmt.Errorf("%d lock samples are more than %d", len(items), maxLockSamples)
	}
	out := make([]lockSample, 0, len(items))
	for _, it := range items {
		f, err := normalizedObject(it)
		if err != nil {
			return nil, err
		}
		var l lockSample
		for name, dst := range map[string]*string{"column": &l.column, "lockmode": &l.mode, "transactiontag": &l.tag} {
			if raw, ok := f[name]; ok && string(raw) != "null" {
				if err := json.Unmarshal(raw, dst); err != nil {
					return nil, fmt.Errorf("lock sample field %s: %w", name, err)
				}
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// LockStats are an operation's share of the lock conflicts that
// LOCK_STATS_TOP sampled. Spanner records, per contended row range and
// interval, the total lock wait of every request on it and up to 20
// uniformly sampled requests (waiters or holders) with their transaction
// tag: the wait is not split by transaction, so it is attributed here
// from the samples.
type LockStats struct {
	// Samples is how many sampled lock requests carry the operation's
	// transaction tag.
	Samples int
	// Ranges is how many (row range, interval) rows had such a sample.
	Ranges int
	// WaitSecondsInvolved is Σ LOCK_WAIT_SECONDS of those rows: the lock
	// wait of the conflicts the operation took part in, as waiter or
	// holder (an upper bound of what it waited).
	WaitSecondsInvolved float64
	// WaitSecondsShare is Σ LOCK_WAIT_SECONDS × the operation's samples ÷
	// the row's samples: the wait apportioned by the samples (an
	// estimate; the samples do not say who waited).
	WaitSecondsShare float64
	// Columns and Modes are the columns and lock modes of its samples.
	Columns, Modes []string
}

// LockRange is one contended row range over the intervals read.
type LockRange struct {
	// Key is ROW_RANGE_START_KEY as text (a trailing + marks a range),
	// or hex when it is not UTF-8.
	Key string
	// WaitSeconds is Σ LOCK_WAIT_SECONDS over the intervals read.
	WaitSeconds float64
	// Intervals is how many intervals had the range.
	Intervals int
	// Operations name the run's operations sampled on it.
	Operations []string
	// Columns and Modes are the columns and lock modes sampled.
	Columns, Modes []string
}

// opLocks is op's share of the lock rows whose samples carry its
// transaction tag; nil when none does (no conflict seen, or none
// sampled: unknown, not zero).
func opLocks(op Operation, rows []lockRow) *LockStats {
	if op.TransactionTag == "" {
		return nil
	}
	var l LockStats
	for _, r := range rows {
		mine := 0
		for _, s := range r.samples {
			if s.tag == op.TransactionTag {
				mine++
				l.Columns = addName(l.Columns, s.column)
				l.Modes = addName(l.Modes, s.mode)
			}
		}
		if mine == 0 {
			continue
		}
		l.Samples += mine
		l.Ranges++
		if w := validWait(r); w > 0 {
			l.WaitSecondsInvolved += w
			l.WaitSecondsShare += w * float64(mine) / float64(len(r.samples))
		}
	}
	if l.Samples == 0 {
		return nil
	}
	return &l
}

// lockRanges are the ranges whose samples name one of ops' transaction
// tags, summed over the intervals, the MaxLockRanges most waited on.
func lockRanges(ops []Operation, rows []lockRow) []LockRange {
	names := map[string]string{}
	for _, op := range ops {
		if op.TransactionTag != "" {
			names[op.TransactionTag] = op.Name
		}
	}
	byKey := map[string]*LockRange{}
	var order []string
	for _, r := range rows {
		var ours []string
		for _, s := range r.samples {
			if n, ok := names[s.tag]; ok {
				ours = append(ours, n)
			}
		}
		if len(ours) == 0 {
			continue // another workload's conflict
		}
		k := keyText(r.key)
		lr := byKey[k]
		if lr == nil {
			lr = &LockRange{Key: k}
			byKey[k] = lr
			order = append(order, k)
		}
		lr.WaitSeconds += validWait(r)
		lr.Intervals++
		for _, n := range ours {
			lr.Operations = addName(lr.Operations, n)
		}
		for _, s := range r.samples {
			lr.Columns, lr.Modes = addName(lr.Columns, s.column), addName(lr.Modes, s.mode)
		}
	}
	out := make([]LockRange, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b LockRange) int { return cmp.Compare(b.WaitSeconds, a.WaitSeconds) })
	return out[:min(len(out), MaxLockRanges)]
}

// validWait is the row's lock wait, 0 when NULL, negative or not finite.
func validWait(r lockRow) float64 {
	var m mean
	m.add(r.wait, 1)
	if v := m.value(); v != nil {
		return *v
	}
	return 0
}

// addName adds n to names once, up to maxLockNames, keeping them short.
func addName(names []string, n string) []string {
	if n == "" || len(names) >= maxLockNames || slices.Contains(names, shortName(n, 128)) {
		return names
	}
	return append(names, shortName(n, 128))
}

// shortName is n cut to at most limit bytes on a character boundary.
func shortName(n string, limit int) string {
	for len(n) > limit {
		_, size := utf8.DecodeLastRuneInString(n)
		n = n[:len(n)-size]
	}
	return n
}

// keyText is a row range's start key as text: Spanner writes it as
// readable text such as Users(42)+; anything else is shown in hex.
func keyText(k []byte) string {
	const maxKey = 256
	if utf8.Valid(k) {
		return shortName(string(k), maxKey)
	}
	return fmt.Sprintf("0x%x", k[:min(len(k), maxKey/2)])
}

// unreadable counts the rows whose histogram or samples could not be read.
func unreadable(rows statRows) int {
	n := 0
	for _, r := range rows.stmts {
		if r.badDist {
			n++
		}
	}
	for _, r := range rows.txns {
		if r.badDist {
			n++
		}
	}
	for _, r := range rows.locks {
		if r.bad {
			n++
		}
	}
	return n
}

package workload

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
)

// BlockRows is the number of consecutive preloaded YCSB keys that share a
// hashed prefix. Keys in a block sort together, so a Scan of up to BlockRows
// rows is one contiguous key range (exact for BETWEEN @min AND @max), while
// blocks spread over the key space so neither loading nor reading hot-spots.
const BlockRows = 1000

// hash64 is FNV-1a over a key index: cheap, deterministic, well spread.
func hash64(salt byte, k int64) uint64 {
	var b [9]byte
	b[0] = salt
	binary.LittleEndian.PutUint64(b[1:], uint64(k))
	h := fnv.New64a()
	_, _ = h.Write(b[:])
	return h.Sum64()
}

// YCSBKey is the primary key of preloaded YCSB row k: a hashed block prefix
// and the zero-padded index, e.g. "9f86d081-0000012345".
func YCSBKey(k int64) string {
	return fmt.Sprintf("%08x-%010d", uint32(hash64('b', k/BlockRows)), k)
}

// ycsbInsertKey is the key of a row inserted during a run. Its own hash
// prefix spreads inserts; the "-i" suffix sorts after every digit, so an
// inserted row never falls inside a preloaded block's range.
func ycsbInsertKey(k int64) string {
	return fmt.Sprintf("%08x-i%010d", uint32(hash64('i', k)), k)
}

// tweetKey is the Id of Tweet row k: UUID-shaped and hash-spread, like the
// UUIDv4 ids of the write-throughput experiment, but reproducible from k so
// that readers find preloaded rows without a lookup.
func tweetKey(k int64) string {
	a, b := hash64('t', k), hash64('u', k)
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
}

// insertSpan is the range beyond the preloaded rows where a shard's
// inserted key indexes start.
const insertSpan = 1 << 61

// insertStart picks where a shard's inserted key indexes start: at random
// in [preloaded, preloaded+insertSpan). The shards of a run, the runs of a
// campaign and every re-run share the database, so a fixed start would
// make each run insert the rows an earlier one already did (AlreadyExists
// for every insert). Two shards collide only if their starts fall within
// their inserts of each other: with a million inserts each, odds of about
// 1e-12 per pair.
func insertStart(preloaded int64, random io.Reader) (int64, error) {
	var b [8]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return 0, fmt.Errorf("choosing where inserted keys start: %w", err)
	}
	return preloaded + int64(binary.LittleEndian.Uint64(b[:])%insertSpan), nil
}

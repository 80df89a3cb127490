// Package chunks is the one rule by which a result too large for one
// ConfigMap is stored across several: a runner's shard result and the
// run's merged report alike. The bytes are cut into chunks of MaxBytes
// (the last shorter), chunk k stored under Name(head, k), at most
// MaxChunks of them; the head ConfigMap records their total length and
// sha256 and each chunk's sha256 (Head). The writer stores every chunk
// first and the head last, so a reader that finds the head finds a whole
// result; the reader (NewReader) verifies each chunk before it yields a
// byte of it, and the whole at the end.
//
// The package knows nothing of the API server: fetching and storing the
// ConfigMaps is package protocol's (result_store.go).
package chunks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	// MaxBytes is the most one chunk holds. A ConfigMap holds at most
	// 1 MiB (1,048,576 bytes) of data and binaryData together; the 64 KiB
	// left is margin for the key and the object's metadata.
	MaxBytes = 960 << 10
	// MaxShardChunks bounds the chunks of a shard's result (15 MiB
	// compressed), so that the runners' Role can name every chunk a run
	// may write (resourceNames): a run of 1,000 runners names 16,000
	// chunks, about 1 MiB of Role at the longest run name, within the
	// 1.5 MiB an object may take.
	MaxShardChunks = 16
	// MaxReportChunks bounds the chunks of a run's merged report (60 MiB
	// compressed), which the controller writes: merged histograms hold
	// more buckets than a shard's, and the report is about twice as long
	// as one dense shard.
	MaxReportChunks = 64
)

// Keys of a chunked result: KeyChunk in each chunk's binaryData, the
// others in the head's data.
const (
	// KeyChunk holds a chunk's bytes.
	KeyChunk = "chunk"
	// KeyBytes is the result's total length in bytes.
	KeyBytes = "resultBytes"
	// KeySHA256 is the whole result's sha256, in hex.
	KeySHA256 = "resultSHA256"
	// KeyChunks lists each chunk's sha256 in hex, in order, separated by
	// spaces: its length is the chunk count.
	KeyChunks = "resultChunks"
)

// HeadKeys are the keys a chunked result adds to its head's data.
func HeadKeys() []string { return []string{KeyBytes, KeySHA256, KeyChunks} }

// Name names chunk k of the result whose head ConfigMap is head:
// "<run>-shard-3-0", "<run>-result-0". At the longest run name
// (v1alpha1.MaxRunNameLength) a shard's chunk name is at most 63
// characters.
func Name(head string, k int) string { return head + "-" + strconv.Itoa(k) }

// Names are the names of the first n chunks of a result under head: every
// name a result of at most n chunks may use, for a Role.
func Names(head string, n int) []string {
	names := make([]string, n)
	for k := range names {
		names[k] = Name(head, k)
	}
	return names
}

// Head is what the head ConfigMap records of a chunked result.
type Head struct {
	// Bytes is the total length.
	Bytes int64
	// SHA256 is the whole result's sha256, hex.
	SHA256 string
	// Chunks are the chunks' sha256, hex, in order.
	Chunks []string
}

// TooLargeError says a result needs more than its bound of chunks.
type TooLargeError struct{ Bytes, MaxChunks int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the result is %.1f MiB compressed, more than the %d MiB (%d chunks of %d KiB) it may take",
		float64(e.Bytes)/(1<<20), e.MaxChunks*MaxBytes>>20, e.MaxChunks, MaxBytes>>10)
}

// Split cuts b into its chunks (slices of b, not copies) and describes
// them; b needing more than maxChunks is a *TooLargeError.
func Split(b []byte, maxChunks int) (Head, [][]byte, error) {
	if len(b) > maxChunks*MaxBytes {
		return Head{}, nil, &TooLargeError{Bytes: len(b), MaxChunks: maxChunks}
	}
	whole := sha256.Sum256(b)
	h := Head{Bytes: int64(len(b)), SHA256: hex.EncodeToString(whole[:])}
	var parts [][]byte
	for len(b) > 0 || len(parts) == 0 {
		n := min(len(b), MaxBytes)
		parts = append(parts, b[:n:n])
		h.Chunks = append(h.Chunks, sum(b[:n]))
		b = b[n:]
	}
	return h, parts, nil
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Data is h as the head's data holds it.
func (h Head) Data() map[string]string {
	return map[string]string{
		KeyBytes:  strconv.FormatInt(h.Bytes, 10),
		KeySHA256: h.SHA256,
		KeyChunks: strings.Join(h.Chunks, " "),
	}
}

// DecodeHead reads a head's data; ok is false when it records no chunked
// result (none of HeadKeys). The data are untrusted: a head that is not
// one Split(…, maxChunks) could have made (a missing key, a count or
// length out of bounds or disagreeing, a malformed hash) is an error
// naming the key.
func DecodeHead(data map[string]string, maxChunks int) (h Head, ok bool, err error) {
	present := 0
	for _, k := range HeadKeys() {
		if _, has := data[k]; has {
			present++
		}
	}
	if present == 0 {
		return Head{}, false, nil
	}
	if present < len(HeadKeys()) {
		return Head{}, true, fmt.Errorf("a chunked result's head needs keys %v; it has only some", HeadKeys())
	}
	n, err := strconv.ParseInt(data[KeyBytes], 10, 64)
	if limit := int64(maxChunks) * MaxBytes; err != nil || n < 0 || n > limit {
		return Head{}, true, fmt.Errorf("key %q: %.32q is not a length from 0 to %d", KeyBytes, data[KeyBytes], limit)
	}
	h = Head{Bytes: n, SHA256: data[KeySHA256], Chunks: strings.Fields(data[KeyChunks])}
	if !isHash(h.SHA256) {
		return Head{}, true, fmt.Errorf("key %q: %.80q is not a sha256 in hex", KeySHA256, h.SHA256)
	}
	if want := chunkCount(n); len(h.Chunks) != want {
		return Head{}, true, fmt.Errorf("key %q lists %d chunks; a result of %d bytes has %d", KeyChunks, len(h.Chunks), n, want)
	}
	for k, c := range h.Chunks {
		if !isHash(c) {
			return Head{}, true, fmt.Errorf("key %q: chunk %d's %.80q is not a sha256 in hex", KeyChunks, k, c)
		}
	}
	return h, true, nil
}

// chunkCount is how many chunks Split makes of n bytes: at least one.
func chunkCount(n int64) int { return max(1, int((n+MaxBytes-1)/MaxBytes)) }

func isHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && strings.ToLower(s) == s
}

// chunkLen is the length chunk k of a result of n bytes has.
func (h Head) chunkLen(k int) int { return int(min(int64(MaxBytes), h.Bytes-int64(k)*MaxBytes)) }

// ChunkError says chunk Index of a result could not be read or is not the
// one its head describes.
type ChunkError struct {
	// Index is the chunk's; Name its ConfigMap's.
	Index int
	Name  string
	Err   error
}

func (e *ChunkError) Error() string {
	return fmt.Sprintf("chunk %d (ConfigMap %s) %v", e.Index, e.Name, e.Err)
}

func (e *ChunkError) Unwrap() error { return e.Err }

// Fetch returns chunk k's bytes (its KeyChunk). An error it returns
// reaches the reader's caller wrapped in a *ChunkError, whose message
// reads "chunk k (ConfigMap name) " then the error's: "is missing".
type Fetch func(k int) ([]byte, error)

// NewReader reads the result h describes under the head ConfigMap head,
// fetching one chunk at a time:
// its memory is one chunk, whatever the result's length. Each chunk is
// checked (length, sha256) before any of its bytes is returned, and the
// whole result's sha256 at its end; a chunk missing or not the one the
// head describes is a *ChunkError naming it.
func NewReader(h Head, head string, fetch Fetch) io.Reader {
	return &reader{h: h, head: head, fetch: fetch, whole: sha256.New()}
}

type reader struct {
	h     Head
	head  string
	fetch Fetch
	next  int
	cur   []byte
	whole interface {
		io.Writer
		Sum([]byte) []byte
	}
	err error
}

func (r *reader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 && r.err == nil {
		r.err = r.load()
	}
	if len(r.cur) == 0 {
		return 0, r.err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// load fetches and checks the next chunk, or checks the whole result at
// its end (io.EOF when it is the one the head describes).
func (r *reader) load() error {
	if r.next == len(r.h.Chunks) {
		if got := hex.EncodeToString(r.whole.Sum(nil)); got != r.h.SHA256 {
			return fmt.Errorf("the chunks' concatenation has sha256 %s; the head records %s", got, r.h.SHA256)
		}
		return io.EOF
	}
	k := r.next
	r.next++
	b, err := r.fetch(k)
	if err != nil {
		return &ChunkError{Index: k, Name: Name(r.head, k), Err: err}
	}
	if want := r.h.chunkLen(k); len(b) != want {
		return &ChunkError{Index: k, Name: Name(r.head, k), Err: fmt.Errorf("is %d bytes; the head records %d", len(b), want)}
	}
	if got := sum(b); got != r.h.Chunks[k] {
		return &ChunkError{Index: k, Name: Name(r.head, k), Err: fmt.Errorf("has sha256 %s; the head records %s", got, r.h.Chunks[k])}
	}
	_, _ = r.whole.Write(b)
	r.cur = b
	return nil
}

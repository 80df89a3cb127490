package chunks

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// store is a result's chunks by index, as a test stores them.
type store map[int][]byte

func (s store) fetch(k int) ([]byte, error) {
	b, ok := s[k]
	if !ok {
		return nil, errors.New("is missing")
	}
	return b, nil
}

func split(t *testing.T, n int) ([]byte, Head, store) {
	t.Helper()
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	h, parts, err := Split(b, MaxShardChunks)
	if err != nil {
		t.Fatalf("Split of %d bytes: %v", n, err)
	}
	s := store{}
	for k, p := range parts {
		s[k] = p
	}
	return b, h, s
}

// TestChunksRoundTripAtEveryBoundary: whatever the length, up to
// the bound, the chunks read back to the very bytes, through a head that
// decodes from its own data.
func TestChunksRoundTripAtEveryBoundary(t *testing.T) {
	for _, n := range []int{0, 1, MaxBytes - 1, MaxBytes, MaxBytes + 1, 3*MaxBytes + 5, MaxShardChunks * MaxBytes} {
		b, h, s := split(t, n)
		if want := max(1, (n+MaxBytes-1)/MaxBytes); len(s) != want || len(h.Chunks) != want {
			t.Errorf("%d bytes: %d chunks; want %d", n, len(s), want)
		}
		for k, p := range s {
			if len(p) > MaxBytes {
				t.Errorf("%d bytes: chunk %d is %d bytes, over %d", n, k, len(p), MaxBytes)
			}
		}
		decoded, ok, err := DecodeHead(h.Data(), MaxShardChunks)
		if err != nil || !ok {
			t.Fatalf("%d bytes: DecodeHead of the head's own data: %v, %v", n, ok, err)
		}
		got, err := io.ReadAll(NewReader(decoded, "r-shard-0", s.fetch))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%d bytes: read back %d bytes, %v; want the same bytes", n, len(got), err)
		}
	}
}

func TestSplitRefusesMoreThanItsBound(t *testing.T) {
	var tooLarge *TooLargeError
	if _, _, err := Split(make([]byte, 2*MaxBytes+1), 2); !errors.As(err, &tooLarge) {
		t.Fatalf("Split of 2 chunks and a byte into at most 2: %v; want a *TooLargeError", err)
	}
}

// TestAMissingOrAlteredChunkIsNamed: the reader refuses, naming the chunk
// and its ConfigMap, a chunk missing, cut, grown or altered, and never
// returns a byte of it.
func TestAMissingOrAlteredChunkIsNamed(t *testing.T) {
	cases := map[string]struct {
		edit func(store)
		say  string
	}{
		"missing": {func(s store) { delete(s, 2) }, "is missing"},
		"cut":     {func(s store) { s[2] = s[2][:10] }, "is 10 bytes"},
		"grown":   {func(s store) { s[2] = append(bytes.Clone(s[2]), 0) }, "the head records"},
		"altered": {func(s store) { c := bytes.Clone(s[2]); c[7] ^= 1; s[2] = c }, "has sha256"},
		"swapped": {func(s store) { s[1], s[2] = s[2], s[1] }, "chunk 1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, h, s := split(t, 3*MaxBytes+5)
			tc.edit(s)
			got, err := io.ReadAll(NewReader(h, "r-shard-4", s.fetch))
			var ce *ChunkError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.say) || !strings.Contains(err.Error(), "(ConfigMap r-shard-4-") {
				t.Fatalf("reading with chunk 2 %s: %v; want a *ChunkError naming the chunk's ConfigMap and saying %q", name, err, tc.say)
			}
			if len(got) > ce.Index*MaxBytes || !bytes.Equal(got, b[:len(got)]) {
				t.Errorf("the reader returned %d bytes before chunk %d; want only the verified chunks before it", len(got), ce.Index)
			}
		})
	}
}

// TestDecodeHeadRefusesWhatSplitCannotWrite: the head is untrusted.
func TestDecodeHeadRefusesWhatSplitCannotWrite(t *testing.T) {
	_, h, _ := split(t, 2*MaxBytes)
	good := h.Data()
	edit := func(k, v string) map[string]string {
		d := map[string]string{}
		for kk, vv := range good {
			d[kk] = vv
		}
		if v == "" {
			delete(d, k)
		} else {
			d[k] = v
		}
		return d
	}
	// Each case is refused by its own check, named by want.
	cases := map[string]struct {
		data map[string]string
		want string
	}{
		"no length":      {edit(KeyBytes, ""), "it has only some"},
		"negative":       {edit(KeyBytes, "-1"), "is not a length"},
		"too long":       {edit(KeyBytes, "16000000000"), "is not a length"},
		"fewer chunks":   {edit(KeyBytes, "10"), "lists 2 chunks"},
		"not hex":        {edit(KeySHA256, strings.Repeat("z", 64)), "is not a sha256"},
		"upper-case":     {edit(KeySHA256, strings.ToUpper(h.SHA256)), "is not a sha256"},
		"a chunk hash":   {edit(KeyChunks, h.Chunks[0]+" xyz"), "chunk 1's"},
		"one chunk hash": {edit(KeyChunks, h.Chunks[0]), "lists 1 chunks"},
	}
	for name, tc := range cases {
		if _, ok, err := DecodeHead(tc.data, MaxShardChunks); err == nil || !ok || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: DecodeHead = ok %v, %v; want an error saying %q", name, ok, err, tc.want)
		}
	}
	if _, _, err := DecodeHead(h.Data(), 1); err == nil {
		t.Errorf("DecodeHead of 2 chunks with a bound of 1: no error")
	}
	if _, ok, err := DecodeHead(map[string]string{"state": "Succeeded"}, MaxShardChunks); ok || err != nil {
		t.Errorf("DecodeHead of data without a chunked result: ok %v, %v; want none, no error", ok, err)
	}
}

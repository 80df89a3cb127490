package histogram

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// The V2 encoding's cookies and header, as HdrHistogram writes them.
const (
	compressedCookie = 0x1c849304 | 0x10
	payloadCookie    = 0x1c849303 | 0x10
	headerSize       = 40
	// maxPayload is the largest payload the shared geometry allows: every
	// bucket's count in the longest zig-zag LEB128.
	maxPayload = headerSize + 9*countsLen
	// textPrefix begins HdrHistogram's base64 text of a V2 compressed
	// encoding ("HISTF..."); binary V2 bytes begin with 0x1c.
	textPrefix = "HIST"
)

// Decoder decodes encoded histograms (see Encode) straight into Compact
// histograms, reusing its buffers and its zlib reader from one histogram
// to the next: decoding thousands of interval histograms then allocates
// only what the results hold. A Decoder is not safe for concurrent use.
type Decoder struct {
	outer, inner, payload []byte
	zr                    io.ReadCloser
	pairs                 Compact
}

// Decode decodes s into a new Compact histogram.
func (d *Decoder) Decode(s string) (*Compact, error) {
	c := NewCompact()
	return c, d.AddTo(c, s)
}

// AddTo decodes s and merges it into c, exactly. The empty string is an
// empty histogram.
func (d *Decoder) AddTo(c *Compact, s string) error {
	if s == "" {
		return nil
	}
	if err := d.decodePairs(s); err != nil {
		return fmt.Errorf("decoding histogram: %w", err)
	}
	if d.pairs.total > 0 {
		c.add(&d.pairs)
	}
	return nil
}

// decodePairs fills d.pairs with the populated buckets of s, in either
// form Encode has written (see Encode): a V2 payload in base64 (today's),
// or base64 of HdrHistogram's base64 text of a V2 compressed encoding
// (results of spanbench.io/result/v1), told apart by their first bytes.
func (d *Decoder) decodePairs(s string) error {
	if base64.StdEncoding.DecodedLen(len(s)) > MaxEncodedBytes {
		return fmt.Errorf("encoded histogram is %d bytes, more than the %d allowed", len(s), MaxEncodedBytes)
	}
	var err error
	// The string is only read: viewing its bytes saves copying every
	// histogram of a merge.
	if d.outer, err = decodeBase64(d.outer, unsafe.Slice(unsafe.StringData(s), len(s))); err != nil {
		return err
	}
	b := d.outer
	if bytes.HasPrefix(b, []byte(textPrefix)) {
		if d.inner, err = decodeBase64(d.inner, b); err != nil {
			return err
		}
		b = d.inner
	}
	return d.decodeV2(b)
}

// AddBinaryTo decodes b, a histogram in the binary form EncodeBinary
// writes, and merges it into c, exactly. Empty b is an empty histogram.
func (d *Decoder) AddBinaryTo(c *Compact, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(b) > MaxEncodedBytes {
		return fmt.Errorf("encoded histogram is %d bytes, more than the %d allowed", len(b), MaxEncodedBytes)
	}
	if err := d.decodeV2(b); err != nil {
		return fmt.Errorf("decoding histogram: %w", err)
	}
	if d.pairs.total > 0 {
		c.add(&d.pairs)
	}
	return nil
}

// decodeV2 fills d.pairs from HdrHistogram's V2 bytes: a payload, or a
// compressed encoding of one.
func (d *Decoder) decodeV2(b []byte) error {
	if len(b) < 8 {
		return errors.New("not an HdrHistogram V2 encoding")
	}
	switch binary.BigEndian.Uint32(b) {
	case payloadCookie:
		if len(b) > maxPayload {
			return errors.New("histogram payload larger than its geometry allows")
		}
		return d.pairs.parsePayload(b)
	case compressedCookie:
		n := binary.BigEndian.Uint32(b[4:])
		if uint64(n) > uint64(len(b)-8) {
			return errors.New("truncated histogram")
		}
		if err := d.inflate(b[8 : 8+n]); err != nil {
			return err
		}
		return d.pairs.parsePayload(d.payload)
	}
	return errors.New("not an HdrHistogram V2 encoding")
}

func decodeBase64(dst, src []byte) ([]byte, error) {
	dst = grow(dst, base64.StdEncoding.DecodedLen(len(src)))
	n, err := base64.StdEncoding.Decode(dst, src)
	return dst[:n], err
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// inflate decompresses the header and payload into d.payload, bounded by
// the largest payload the shared geometry allows.
func (d *Decoder) inflate(z []byte) error {
	var err error
	if d.zr == nil {
		d.zr, err = zlib.NewReader(bytes.NewReader(z))
	} else {
		err = d.zr.(zlib.Resetter).Reset(bytes.NewReader(z), nil)
	}
	if err != nil {
		return err
	}
	buf := bytes.NewBuffer(d.payload[:0])
	if _, err := io.Copy(buf, io.LimitReader(d.zr, maxPayload+1)); err != nil {
		return err
	}
	d.payload = buf.Bytes()
	if len(d.payload) > maxPayload {
		return errors.New("histogram payload larger than its geometry allows")
	}
	return nil
}

// parsePayload checks the header's geometry and reads the zero-run,
// zig-zag LEB128 counts into pr.
func (pr *Compact) parsePayload(p []byte) error {
	if len(p) < headerSize || binary.BigEndian.Uint32(p) != payloadCookie {
		return errors.New("not an HdrHistogram V2 payload")
	}
	length := binary.BigEndian.Uint32(p[4:])
	sig, lowest, highest := int32(binary.BigEndian.Uint32(p[12:])), int64(binary.BigEndian.Uint64(p[16:])), int64(binary.BigEndian.Uint64(p[24:]))
	if lowest != LowestMicros || highest < HighestMicros || sig != SigFigs {
		return fmt.Errorf("histogram geometry [%d, %d] at %d digits differs from spanbench's [%d, %d] at %d",
			lowest, highest, sig, LowestMicros, HighestMicros, SigFigs)
	}
	if uint64(length) != uint64(len(p)-headerSize) {
		return errors.New("histogram payload length differs from its header")
	}
	return pr.readCounts(p[headerSize:])
}

// readCounts reads the payload's zero-run, zig-zag LEB128 counts into pr,
// refusing buckets beyond the geometry or values above its range.
func (pr *Compact) readCounts(p []byte) error {
	// Appending to locals, stored once at the end, spares a GC write
	// barrier per bucket (half the decoding time while the GC runs).
	idx, cnt, total := pr.idx[:0], pr.cnt[:0], int64(0)
	defer func() { pr.idx, pr.cnt, pr.total = idx, cnt, total }()
	var at int64
	for len(p) > 0 {
		// Most entries of a dense histogram are one byte (counts under 64).
		v, n := uint64(p[0]), 1
		if v >= 0x80 {
			if v, n = binary.Uvarint(p); n <= 0 {
				return errors.New("corrupt histogram payload")
			}
		}
		p = p[n:]
		count := int64(v>>1) ^ -int64(v&1)
		switch {
		case count < 0:
			if -count > countsLen-at {
				return errors.New("histogram zero run beyond its geometry")
			}
			at -= count
			continue
		case at >= countsLen:
			return errors.New("histogram bucket beyond its geometry")
		case count > 0 && at > int64(bucketIndex(HighestMicros)):
			// Values are clamped to the range when recorded: a count
			// above it was not recorded by spanbench.
			return fmt.Errorf("histogram holds values above its range (%d µs)", HighestMicros)
		case count > 0:
			if count > math.MaxInt64-total {
				return errors.New("histogram counts overflow")
			}
			idx, cnt = append(idx, int32(at)), append(cnt, uint64(count))
			total += count
		}
		at++
	}
	return nil
}

// Encoder encodes Compact histograms in the form Encode writes, reusing its
// buffers and zlib writer. It is not safe for concurrent use.
type Encoder struct {
	payload, out bytes.Buffer
	zw           *zlib.Writer
	varint       [binary.MaxVarintLen64]byte
}

// Encode encodes c the way Encode encodes an HDR histogram with the same
// counts: base64 of its V2 payload, uncompressed ("" for an empty one).
func (e *Encoder) Encode(c *Compact) (string, error) {
	if c.total == 0 {
		return "", nil
	}
	return base64.StdEncoding.EncodeToString(e.encodePayload(c)), nil
}

// EncodeV1 encodes c in the form of spanbench.io/result/v1 documents:
// base64 of HdrHistogram's base64 text of its V2 compressed encoding. Only
// tests write it today, to check that readers still accept it.
func (e *Encoder) EncodeV1(c *Compact) (string, error) {
	if c.total == 0 {
		return "", nil
	}
	o, err := e.encodeV2(c)
	if err != nil {
		return "", err
	}
	inner := base64.StdEncoding.EncodeToString(o)
	return base64.StdEncoding.EncodeToString([]byte(inner)), nil
}

// EncodeBinary encodes c as HdrHistogram's V2 compressed bytes: Encode's
// form without the two base64 layers that let it travel in JSON, for
// stores that hold bytes (nil for an empty histogram). Decoder.AddBinaryTo
// reads it.
func (e *Encoder) EncodeBinary(c *Compact) ([]byte, error) {
	if c.total == 0 {
		return nil, nil
	}
	o, err := e.encodeV2(c)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), o...), nil
}

// encodePayload writes c's V2 payload (header and counts) into e.payload
// and returns it.
func (e *Encoder) encodePayload(c *Compact) []byte {
	e.payload.Reset()
	var hdr [headerSize]byte
	e.payload.Write(hdr[:])
	next := int32(0)
	c.each(func(idx int32, n uint64) bool {
		if gap := int64(idx - next); gap == 1 {
			e.zigzag(0)
		} else if gap > 1 {
			e.zigzag(-gap)
		}
		e.zigzag(int64(n))
		next = idx + 1
		return true
	})
	p := e.payload.Bytes()
	binary.BigEndian.PutUint32(p, payloadCookie)
	binary.BigEndian.PutUint32(p[4:], uint32(len(p)-headerSize))
	binary.BigEndian.PutUint32(p[12:], SigFigs)
	binary.BigEndian.PutUint64(p[16:], LowestMicros)
	binary.BigEndian.PutUint64(p[24:], HighestMicros)
	binary.BigEndian.PutUint64(p[32:], math.Float64bits(1))
	return p
}

// encodeV2 writes c's V2 compressed bytes into e.out and returns them.
func (e *Encoder) encodeV2(c *Compact) ([]byte, error) {
	p := e.encodePayload(c)
	e.out.Reset()
	e.out.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.out, zlib.BestCompression) // a valid level never fails
	} else {
		e.zw.Reset(&e.out)
	}
	if _, err := e.zw.Write(p); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}
	o := e.out.Bytes()
	binary.BigEndian.PutUint32(o, compressedCookie)
	binary.BigEndian.PutUint32(o[4:], uint32(len(o)-8))
	return o, nil
}

func (e *Encoder) zigzag(v int64) {
	n := binary.PutUvarint(e.varint[:], uint64(v<<1)^uint64(v>>63))
	e.payload.Write(e.varint[:n])
}

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
	"slices"
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
}

// Decode decodes s into a new Compact histogram.
func (d *Decoder) Decode(s string) (*Compact, error) {
	c := NewCompact()
	return c, d.AddTo(c, s)
}

// AddTo decodes s and merges it into c, exactly. The empty string is an
// empty histogram.
func (d *Decoder) AddTo(c *Compact, s string) error {
	var err error
	d.outer, _, err = d.AddToFrom(c, d.outer[:0], s)
	return err
}

// AddToFrom decodes s at buf's end, checks it and merges it into c,
// exactly, in one pass over its counts (see Compact.AddChecking); on an
// error c is unchanged. It returns buf with the counts appended, and what
// Compact.SubPayload takes back out, which refers to buf's bytes (a caller
// that may take it back keeps them).
func (d *Decoder) AddToFrom(c *Compact, buf []byte, s string) ([]byte, Payload, error) {
	if s == "" {
		return buf, Payload{}, nil
	}
	start := len(buf)
	buf, counts, err := d.appendCounts(buf, s)
	var p Payload
	if err == nil {
		p, err = c.AddChecking(counts)
	}
	if err != nil {
		return buf[:start], Payload{}, fmt.Errorf("decoding histogram: %w", err)
	}
	return buf, p, nil
}

// AppendPayload decodes s, in either form Encode has written (see
// Encode), appends its payload's counts to buf and returns buf and the
// checked payload, which refers to buf's bytes until buf is reused. A
// caller that must check many histograms before adding any (a merge that
// is all or nothing) keeps them so, decoded once. The empty string is an
// empty payload.
func (d *Decoder) AppendPayload(buf []byte, s string) ([]byte, Payload, error) {
	if s == "" {
		return buf, Payload{}, nil
	}
	buf, p, err := d.appendPayload(buf, s)
	if err != nil {
		return buf, Payload{}, fmt.Errorf("decoding histogram: %w", err)
	}
	return buf, p, nil
}

// appendPayload reads s: a V2 payload in base64 (today's form), or base64
// of HdrHistogram's base64 text of a V2 compressed encoding (results of
// spanbench.io/result/v1), told apart by their first bytes.
func (d *Decoder) appendPayload(buf []byte, s string) ([]byte, Payload, error) {
	start := len(buf)
	buf, counts, err := d.appendCounts(buf, s)
	if err != nil {
		return buf, Payload{}, err
	}
	p, err := checkCounts(counts)
	if err != nil {
		return buf[:start], Payload{}, err
	}
	return buf, p, nil
}

// appendCounts appends the counts of s's payload, its header checked, to
// buf.
func (d *Decoder) appendCounts(buf []byte, s string) ([]byte, []byte, error) {
	if base64.StdEncoding.DecodedLen(len(s)) > MaxEncodedBytes {
		return buf, nil, fmt.Errorf("encoded histogram is %d bytes, more than the %d allowed", len(s), MaxEncodedBytes)
	}
	// The string is only read: viewing its bytes saves copying every
	// histogram of a merge. It is decoded at buf's end, where today's form
	// stays: its counts follow the header.
	start := len(buf)
	buf, err := appendBase64(buf, unsafe.Slice(unsafe.StringData(s), len(s)))
	if err != nil {
		return buf[:start], nil, err
	}
	b := buf[start:]
	if bytes.HasPrefix(b, []byte(textPrefix)) {
		if d.inner, err = appendBase64(d.inner[:0], b); err != nil {
			return buf[:start], nil, err
		}
		b = d.inner
	}
	if b, err = d.payloadOf(b); err != nil {
		return buf[:start], nil, err
	}
	if &b[0] != &buf[start] {
		// Another buffer holds it (the v1 form): copy the counts to buf.
		buf = append(buf[:start], b[headerSize:]...)
	} else {
		buf = buf[:start+len(b)]
	}
	return buf, buf[len(buf)-(len(b)-headerSize):], nil
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
	p, err := d.payloadOf(b)
	if err == nil {
		if _, err = c.AddChecking(p[headerSize:]); err == nil {
			return nil
		}
	}
	return fmt.Errorf("decoding histogram: %w", err)
}

// payloadOf is the checked-header V2 payload of HdrHistogram's V2 bytes:
// b itself, or the payload a compressed encoding holds, inflated into
// d.payload.
func (d *Decoder) payloadOf(b []byte) ([]byte, error) {
	if len(b) < 8 {
		return nil, errors.New("not an HdrHistogram V2 encoding")
	}
	switch binary.BigEndian.Uint32(b) {
	case payloadCookie:
		if len(b) > maxPayload {
			return nil, errors.New("histogram payload larger than its geometry allows")
		}
		return b, checkHeader(b)
	case compressedCookie:
		n := binary.BigEndian.Uint32(b[4:])
		if uint64(n) > uint64(len(b)-8) {
			return nil, errors.New("truncated histogram")
		}
		if err := d.inflate(b[8 : 8+n]); err != nil {
			return nil, err
		}
		return d.payload, checkHeader(d.payload)
	}
	return nil, errors.New("not an HdrHistogram V2 encoding")
}

// appendBase64 appends the decoding of src to dst.
func appendBase64(dst, src []byte) ([]byte, error) {
	start := len(dst)
	dst = slices.Grow(dst, base64.StdEncoding.DecodedLen(len(src)))
	n, err := base64.StdEncoding.Decode(dst[start:cap(dst)], src)
	return dst[:start+n], err
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

// checkHeader checks a V2 payload's header: its geometry, and its length
// against the payload's.
func checkHeader(p []byte) error {
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

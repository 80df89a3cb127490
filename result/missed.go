package result

// MeasuredMissed counts the sends missed (in-flight cap reached) in the
// measured window: the intervals after the warm-up, the window every
// other figure of Overall describes. A shard's own Missed counts its whole
// run, warm-up included, and is kept for the shard table. A streams
// document counts each stream's window.
func (d *Document) MeasuredMissed() uint64 {
	if d.HasStreams() {
		var n uint64
		for i := range d.Streams {
			n = min(n+d.Streams[i].MeasuredMissed(), MaxCount)
		}
		return n
	}
	return measuredMissed(d.Intervals)
}

// MeasuredMissed counts the stream's missed sends after its warm-up.
func (s *StreamSection) MeasuredMissed() uint64 { return measuredMissed(s.Intervals) }

func measuredMissed(intervals []Interval) uint64 {
	var n uint64
	for i := range intervals {
		if !intervals[i].WarmUp {
			n = min(n+intervals[i].Missed, MaxCount) // each at most MaxCount (checkCounts): no wrap
		}
	}
	return n
}

package result

// GFE latency "not available" texts: a figure that no response carried is
// said to be missing, never shown as zero.
const (
	// GFEUnavailableEmulator is why a run on the emulator has no GFE
	// latency: the emulator has no Google Front End and sets no
	// server-timing header.
	GFEUnavailableEmulator = "GFE latency not available on the emulator"
	// GFEUnavailable is why an operation on Cloud Spanner has none: no
	// successful operation's responses carried the header (or the result
	// comes from a runner that did not read it).
	GFEUnavailable = "GFE latency not available: no response carried the server-timing header"
)

// GFENote is "" when op has a GFE latency, and otherwise why not, for a
// result on d's target.
func (d *Document) GFENote(op Operation) string {
	switch {
	case op.GFELatency != nil:
		return ""
	case d.Target.Endpoint == "emulator":
		return GFEUnavailableEmulator
	}
	return GFEUnavailable
}

//go:build !runner

package main

// The manager reads a campaign's schedule time zone (timeZone:
// Asia/Tokyo) with time.LoadLocation, and the image holds the static
// binary alone, with no /usr/share/zoneinfo: without the zone database
// embedded (about 450 kB), every campaign with a timeZone was Stalled with
// "unknown time zone" on the demo cluster (TestEveryCampaignSampleRuns
// applies campaign-nightly.yaml, which names Asia/Tokyo).
import _ "time/tzdata"

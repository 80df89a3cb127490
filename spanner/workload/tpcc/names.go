package tpcc

// syllables make customer last names (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName is the last name of number n in [0, 999]: the syllables of its
// three digits.
func LastName(n int64) string {
	return syllables[n/100%10] + syllables[n/10%10] + syllables[n%10]
}

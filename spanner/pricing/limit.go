package pricing

import (
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/text/currency"
)

// Limit is a cap in money: an operator's --max-run-cost and the like. A
// limit without a currency is in the catalog's currency, whatever that is
// when the check runs; one with a currency refuses a figure in another
// (no exchange rate is assumed).
type Limit struct {
	micros   int64
	currency string
}

// ParseLimit reads a cap written "25", "25.50" or "USD 25" (the catalog's
// decimal syntax, at most 6 fraction digits: the micro-unit). It must be
// positive: a cap of zero would refuse every run; leave the flag unset for
// no cap.
func ParseLimit(s string) (Limit, error) {
	amount, cur, hasCur := strings.Cut(strings.TrimSpace(s), " ")
	if hasCur {
		amount, cur = strings.TrimSpace(cur), amount
		u, err := currency.ParseISO(cur)
		if err != nil || u.String() != cur {
			return Limit{}, fmt.Errorf("%q: %q is not an ISO 4217 currency code such as USD", s, cur)
		}
	} else {
		cur = ""
	}
	r, err := parseDecimal(amount)
	if err != nil {
		return Limit{}, fmt.Errorf("%q: %w", s, err)
	}
	if r.Sign() <= 0 || r.Cmp(maxPrice) > 0 {
		return Limit{}, fmt.Errorf("%q: a cost limit must be above 0 and at most %s", s, maxPrice.FloatString(0))
	}
	micros := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
	if !micros.IsInt() {
		return Limit{}, fmt.Errorf("%q: at most 6 fraction digits (a micro-unit)", s)
	}
	return Limit{micros: micros.Num().Int64(), currency: cur}, nil
}

// Set reports whether l caps anything (the zero Limit does not).
func (l Limit) Set() bool { return l.micros > 0 }

// String prints l as it would be written ("USD 25.00", or "25.00" in the
// catalog's currency).
func (l Limit) String() string {
	m := Money{micros: l.micros, currency: l.currency, known: true}
	if l.currency == "" {
		return m.Decimal()
	}
	return m.String()
}

// Check holds m to l: "" when m is within it (at the limit passes), else
// why not. A cap that cannot be checked does not pass: an unknown m, or m
// in another currency than l's, is refused with the reason, since a cap
// that lets an unpriced run through would cap nothing.
func (l Limit) Check(m Money) string {
	switch {
	case !l.Set():
		return ""
	case !m.known:
		return fmt.Sprintf("is %s, so the limit of %s cannot be checked", m, l)
	case l.currency != "" && l.currency != m.currency:
		return fmt.Sprintf("%s is not in the limit's currency (%s): no exchange rate is assumed", m, l)
	case m.micros > l.micros:
		return fmt.Sprintf("%s exceeds the limit of %s %s", m, m.currency, Money{micros: l.micros, known: true}.Decimal())
	}
	return ""
}

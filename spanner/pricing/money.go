package pricing

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// Money is an amount in one currency, or unknown. The amount is an integer
// count of micro-units (a millionth of the currency's unit): sums of many
// small costs stay exact, where float64 would drift (0.1 has no binary
// form) and two runs of the same inputs could print different cents.
// Every formula computes in exact rationals and rounds once, to the
// micro-unit, half away from zero.
//
// The zero Money is unknown: a cost that nobody computed is never "free".
type Money struct {
	micros   int64
	currency string
	known    bool
	// why says what made an unknown Money unknown (a missing price, an
	// emulator configuration), for the reader of a status or a report.
	why string
}

// Unknown is a Money that cannot be computed, with the reason said.
func Unknown(reason string) Money { return Money{why: reason} }

// Known reports whether m is an amount.
func (m Money) Known() bool { return m.known }

// Currency is m's ISO 4217 code ("" when unknown).
func (m Money) Currency() string { return m.currency }

// Micros is m's amount in millionths of its currency unit (0 when unknown).
func (m Money) Micros() int64 { return m.micros }

// Reason says why m is unknown ("" when it is known).
func (m Money) Reason() string { return m.why }

// Add is m + o. An unknown operand makes the sum unknown (its reason
// kept), and so do different currencies: no exchange rate is assumed.
func (m Money) Add(o Money) Money {
	switch {
	case !m.known:
		return m
	case !o.known:
		return o
	case m.currency != o.currency:
		return Unknown(fmt.Sprintf("cannot add %s to %s: no exchange rate", o.currency, m.currency))
	}
	s := new(big.Int).Add(big.NewInt(m.micros), big.NewInt(o.micros))
	if !s.IsInt64() {
		return Unknown("amount overflows")
	}
	return Money{micros: s.Int64(), currency: m.currency, known: true}
}

// String prints m as "USD 12.345678" (trailing zeros after the cents
// dropped), or "unknown (reason)".
func (m Money) String() string {
	if !m.known {
		if m.why == "" {
			return "unknown"
		}
		return "unknown (" + m.why + ")"
	}
	return m.currency + " " + m.Decimal()
}

// Decimal prints m's amount as a decimal with at least two fraction digits
// ("12.50", "0.000123"), or "" when m is unknown: the form a status field
// or a Prometheus label carries beside the currency.
func (m Money) Decimal() string {
	if !m.known {
		return ""
	}
	neg := m.micros < 0
	a := new(big.Int).Abs(big.NewInt(m.micros))
	q, r := new(big.Int).QuoRem(a, big.NewInt(1_000_000), new(big.Int))
	frac := strings.TrimRight(fmt.Sprintf("%06d", r.Int64()), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	s := q.String() + "." + frac
	if neg {
		s = "-" + s
	}
	return s
}

// Float is m's amount in currency units as a float64, for Prometheus
// gauges only (which hold floats); never for arithmetic.
func (m Money) Float() float64 {
	f, _ := new(big.Rat).SetFrac(big.NewInt(m.micros), big.NewInt(1_000_000)).Float64()
	return f
}

// moneyOf rounds an exact amount in currency units to a Money.
func moneyOf(units *big.Rat, currency string) Money {
	micros := new(big.Rat).Mul(units, big.NewRat(1_000_000, 1))
	n := roundHalfAway(micros)
	if !n.IsInt64() {
		return Unknown("amount overflows")
	}
	return Money{micros: n.Int64(), currency: currency, known: true}
}

// roundHalfAway rounds r to the nearest integer, halves away from zero.
func roundHalfAway(r *big.Rat) *big.Int {
	num := new(big.Int).Abs(r.Num())
	den := r.Denom()
	// (2|num| + den) / (2 den), truncated, is |r| rounded half up.
	q := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), den), new(big.Int).Mul(den, big.NewInt(2)))
	if r.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

// decimalSyntax is a price as the catalog writes it: a plain decimal with
// at most 9 fraction digits, the precision of the Billing Catalog's
// unitPrice (units and nanos).
var decimalSyntax = regexp.MustCompile(`^[+-]?[0-9]{1,12}(\.[0-9]{1,9})?$`)

// parseDecimal reads a catalog price exactly. Exponents, hexadecimal,
// fractions and NaN that big.Rat would also accept are refused: a price is
// written as people read it.
func parseDecimal(s string) (*big.Rat, error) {
	if !decimalSyntax.MatchString(s) {
		return nil, fmt.Errorf("%q is not a decimal number with at most 12 integer and 9 fraction digits", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a decimal number", s)
	}
	return r, nil
}

// formatDecimal writes r (a price with at most 9 fraction digits) in the
// catalog's syntax, trailing zeros dropped.
func formatDecimal(r *big.Rat) string {
	s := r.FloatString(9)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// ParseMoney reads back an amount Decimal printed, in currency: how a
// figure recorded in a status is compared again. An empty amount is
// unknown, for the reason given.
func ParseMoney(amount, currency, unknownReason string) (Money, error) {
	if amount == "" {
		return Unknown(unknownReason), nil
	}
	r, err := parseDecimal(amount)
	if err != nil {
		return Money{}, err
	}
	m := moneyOf(r, currency)
	if !m.known {
		return m, fmt.Errorf("%q: %s", amount, m.why)
	}
	return m, nil
}

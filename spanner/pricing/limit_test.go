package pricing

import (
	"strings"
	"testing"
)

func TestParseLimitRefusesWhatIsNotACap(t *testing.T) {
	for _, s := range []string{"", "0", "-1", "1e3", "EUR", "usd 5", "XXY 5", "1.0000001", "20000000", "5 USD"} {
		if l, err := ParseLimit(s); err == nil {
			t.Errorf("ParseLimit(%q) = %v, want an error", s, l)
		}
	}
	for s, want := range map[string]string{"25": "25.00", "0.5": "0.50", "EUR 12.345": "EUR 12.345"} {
		l, err := ParseLimit(s)
		if err != nil || l.String() != want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %s", s, l, err, want)
		}
	}
}

func TestLimitCheckPassesAtTheLimitAndRefusesAboveOrUnknown(t *testing.T) {
	l, err := ParseLimit("10")
	if err != nil {
		t.Fatal(err)
	}
	at := Money{micros: 10_000_000, currency: "USD", known: true}
	above := Money{micros: 10_000_001, currency: "USD", known: true}
	if msg := l.Check(at); msg != "" {
		t.Errorf("a cost at the limit is refused: %s", msg)
	}
	if msg := l.Check(above); !strings.Contains(msg, "USD 10.000001") || !strings.Contains(msg, "USD 10.00") {
		t.Errorf("a cost above the limit: %q, want the figure and the limit named", msg)
	}
	if msg := l.Check(Unknown("no price for asia1")); !strings.Contains(msg, "no price for asia1") {
		t.Errorf("an unknown cost under a cap: %q, want a refusal with the reason", msg)
	}
	eur, _ := ParseLimit("EUR 100")
	if msg := eur.Check(at); !strings.Contains(msg, "no exchange rate") {
		t.Errorf("a cost in another currency: %q, want a refusal", msg)
	}
	if msg := (Limit{}).Check(Unknown("x")); msg != "" {
		t.Errorf("no limit refuses: %q", msg)
	}
}

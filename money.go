package subprov

import (
	"fmt"
	"strconv"
	"strings"
)

// Money is an amount in integer minor units of the provider's currency. It is never computed in
// floating point; JSON carries it as a number with exactly two decimals.
type Money int64

// String renders the amount with two decimals: 1250 -> "12.50", -5 -> "-0.05".
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalJSON writes the amount as a JSON number with two decimals.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON accepts a JSON number or string with at most two decimals.
func (m *Money) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := ParseMoney(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseMoney parses "60", "60.5" or "60.00" exactly; more than two decimals is an error rather
// than a silent rounding, because fixture prices and partner input must mean what they say.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty amount")
	}
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || strings.ContainsAny(whole, "+-") || (hasFrac && (frac == "" || len(frac) > 2)) {
		return 0, fmt.Errorf("amount %q: want digits with at most two decimals", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 1e15 {
		return 0, fmt.Errorf("amount %q: want digits with at most two decimals", s)
	}
	var f int64
	if hasFrac {
		if len(frac) == 1 {
			frac += "0"
		}
		f, err = strconv.ParseInt(frac, 10, 64)
		if err != nil || strings.ContainsAny(frac, "+-") {
			return 0, fmt.Errorf("amount %q: want digits with at most two decimals", s)
		}
	}
	v := w*100 + f
	if neg {
		v = -v
	}
	return Money(v), nil
}

// Prorate returns amount x num / den rounded half away from zero, once, at the end
// (docs/billing.md, Amounts).
func Prorate(amount Money, num, den int64) Money {
	if den == 0 {
		return 0
	}
	p := int64(amount) * num
	q, r := p/den, p%den
	if r < 0 {
		r = -r
	}
	if 2*r >= den {
		if p < 0 {
			q--
		} else {
			q++
		}
	}
	return Money(q)
}

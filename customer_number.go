package subprov

import (
	"fmt"
	"regexp"
)

var (
	customerNumberRe       = regexp.MustCompile(`^[0-9]{4}-[0-9]{3}$`)
	legacyCustomerNumberRe = regexp.MustCompile(`^[A-Za-z]{4}-[0-9]{4}$`)
)

// FormatCustomerNumber renders sequence n as NNNN-NNN (seven digits, dash after the fourth;
// leading zeros are significant).
func FormatCustomerNumber(n int64) string {
	s := fmt.Sprintf("%07d", n%10_000_000)
	return s[:4] + "-" + s[4:]
}

// ValidCustomerNumber reports whether s has the current NNNN-NNN format.
func ValidCustomerNumber(s string) bool { return customerNumberRe.MatchString(s) }

// ValidLegacyCustomerNumber reports whether s has the retired AAAA-NNNN format.
func ValidLegacyCustomerNumber(s string) bool { return legacyCustomerNumberRe.MatchString(s) }

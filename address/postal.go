package address

import (
	"strings"
	"unicode"
)

// Canada Post never uses D, F, I, O, Q or U in a postal code (they are too
// easily misread by sorting equipment and people), and W and Z are not
// assigned as the first letter (the letter names the province/region).
const (
	postalFirstLetters = "abceghjklmnprstvxy"
	postalOtherLetters = "abceghjklmnprstvwxyz"
)

// PostalCode returns the canonical "A1A 1A1" form of a Canadian postal code
// written in any case, with or without a space or hyphen (or a run of them)
// between the two halves; ok is false if s is not a postal code. Leading and
// trailing white space is ignored. Letters D F I O Q U never appear and W and
// Z are never first (Canada Post rules), so "D3C 2B5" is rejected rather
// than guessed at.
func PostalCode(s string) (canonical string, ok bool) {
	var buf [6]byte
	n := 0
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			if n == len(buf) {
				return "", false
			}
			buf[n] = byte(unicode.ToLower(r))
			n++
		case (r == '-' || unicode.IsSpace(r)) && n == 3:
			// The separator may only sit between FSA and LDU: "H3C-2B5"
			// is a postal code, "H3-C2B5" is not.
		default:
			return "", false
		}
	}
	if n != len(buf) || !isCompactPostal(string(buf[:])) {
		return "", false
	}
	return strings.ToUpper(string(buf[:3]) + " " + string(buf[3:])), true
}

// isFSA reports whether t (lower case) is a valid forward sortation area,
// the "h3c" half of a postal code.
func isFSA(t string) bool {
	return len(t) == 3 &&
		strings.IndexByte(postalFirstLetters, t[0]) >= 0 &&
		isDigit(t[1]) &&
		strings.IndexByte(postalOtherLetters, t[2]) >= 0
}

// isLDU reports whether t (lower case) is a valid local delivery unit, the
// "2b5" half of a postal code.
func isLDU(t string) bool {
	return len(t) == 3 && isLDUPrefix(t[:2]) && isDigit(t[2])
}

// isLDUPrefix reports whether t is the beginning ("2" or "2b") of an LDU.
// Used so a half-typed autocomplete query "H3C 2B" already meets "h3c2b5".
func isLDUPrefix(t string) bool {
	switch len(t) {
	case 1:
		return isDigit(t[0])
	case 2:
		return isDigit(t[0]) && strings.IndexByte(postalOtherLetters, t[1]) >= 0
	}
	return false
}

// isCompactPostal reports whether t is a whole postal code without a space,
// lower case ("h3c2b5").
func isCompactPostal(t string) bool {
	return len(t) == 6 && isFSA(t[:3]) && isLDU(t[3:])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

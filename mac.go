package subprov

import "strings"

// NormalizeMAC returns a MAC address as lower-case colon-separated hex ("aa:bb:cc:dd:ee:ff"),
// accepting colons, hyphens, dots (Cisco aabb.ccdd.eeff) or no separators.
func NormalizeMAC(s string) (string, bool) {
	var hex []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
			hex = append(hex, c)
		case c >= 'A' && c <= 'F':
			hex = append(hex, c+32)
		case c == ':' || c == '-' || c == '.':
		default:
			return "", false
		}
	}
	if len(hex) != 12 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.Write(hex[i : i+2])
	}
	return b.String(), true
}

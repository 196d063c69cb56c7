package subprov

// MaskPhone keeps only the last four digits of a phone number: "***-***-0142"; a number of
// fewer than four digits is "". Agents see phone numbers so, and logs carry nothing more.
func MaskPhone(phone string) string {
	digits := make([]byte, 0, len(phone))
	for i := 0; i < len(phone); i++ {
		if phone[i] >= '0' && phone[i] <= '9' {
			digits = append(digits, phone[i])
		}
	}
	if len(digits) < 4 {
		return ""
	}
	return "***-***-" + string(digits[len(digits)-4:])
}

package subprov

// Deref is *p, or the zero value when p is nil: the value of an optional field of a request
// body, a fixture row or a nullable column.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

package ui

// Mask hides a secret for display: the first four and last four characters
// around "***" ("abcd***wxyz"), or just "***" when the secret has eight
// characters or fewer.
func Mask(secret string) string {
	r := []rune(secret)
	if len(r) <= 8 {
		return "***"
	}
	return string(r[:4]) + "***" + string(r[len(r)-4:])
}

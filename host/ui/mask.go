package ui

// maskShortest is the length below which a secret is shown as "***" with
// none of its characters.
const maskShortest = 16

// Mask hides a secret for display. A secret shorter than 16 characters is
// "***"; a longer one keeps an eighth of its length at each end, at most
// four characters each ("sk-p***9xQz"), so no more than a quarter of it, and
// never more than eight characters, is shown.
func Mask(secret string) string {
	r := []rune(secret)
	if len(r) < maskShortest {
		return "***"
	}
	k := min(len(r)/8, 4)
	return string(r[:k]) + "***" + string(r[len(r)-k:])
}

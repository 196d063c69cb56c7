package address

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldTable maps lower-case Latin letters with diacritics to their plain
// ASCII base letters. It is written out (rather than derived at run time with
// golang.org/x/text/unicode/norm) so the package stays standard-library only
// and folding is a single map lookup per non-ASCII rune. It covers Latin-1
// Supplement, Latin Extended-A/B and Latin Extended Additional, which is far
// more than Canadian English/French addresses need; ligatures expand to two
// letters (œ→oe) because that is how people type them on a plain keyboard.
// Decomposed input (e + U+0301) is handled separately by dropping combining
// marks in lex.
var foldTable = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae", 'ç': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ð': "d", 'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'þ': "th", 'ÿ': "y", 'ā': "a",
	'ă': "a", 'ą': "a", 'ć': "c", 'ĉ': "c", 'ċ': "c", 'č': "c", 'ď': "d", 'đ': "d",
	'ē': "e", 'ĕ': "e", 'ė': "e", 'ę': "e", 'ě': "e", 'ĝ': "g", 'ğ': "g", 'ġ': "g",
	'ģ': "g", 'ĥ': "h", 'ħ': "h", 'ĩ': "i", 'ī': "i", 'ĭ': "i", 'į': "i", 'ı': "i",
	'ĳ': "ij", 'ĵ': "j", 'ķ': "k", 'ĸ': "k", 'ĺ': "l", 'ļ': "l", 'ľ': "l", 'ŀ': "l",
	'ł': "l", 'ń': "n", 'ņ': "n", 'ň': "n", 'ŉ': "n", 'ŋ': "n", 'ō': "o", 'ŏ': "o",
	'ő': "o", 'œ': "oe", 'ŕ': "r", 'ŗ': "r", 'ř': "r", 'ś': "s", 'ŝ': "s", 'ş': "s",
	'š': "s", 'ţ': "t", 'ť': "t", 'ŧ': "t", 'ũ': "u", 'ū': "u", 'ŭ': "u", 'ů': "u",
	'ű': "u", 'ų': "u", 'ŵ': "w", 'ŷ': "y", 'ź': "z", 'ż': "z", 'ž': "z", 'ſ': "s",
	'ƀ': "b", 'ƈ': "c", 'ƒ': "f", 'ƙ': "k", 'ƚ': "l", 'ơ': "o", 'ƥ': "p", 'ƭ': "t",
	'ư': "u", 'ƴ': "y", 'ƶ': "z", 'ǆ': "dz", 'ǉ': "lj", 'ǌ': "nj", 'ǎ': "a", 'ǐ': "i",
	'ǒ': "o", 'ǔ': "u", 'ǖ': "u", 'ǘ': "u", 'ǚ': "u", 'ǜ': "u", 'ǟ': "a", 'ǡ': "a",
	'ǣ': "ae", 'ǥ': "g", 'ǧ': "g", 'ǩ': "k", 'ǫ': "o", 'ǭ': "o", 'ǰ': "j", 'ǳ': "dz",
	'ǵ': "g", 'ǹ': "n", 'ǻ': "a", 'ǽ': "ae", 'ǿ': "o", 'ȁ': "a", 'ȃ': "a", 'ȅ': "e",
	'ȇ': "e", 'ȉ': "i", 'ȋ': "i", 'ȍ': "o", 'ȏ': "o", 'ȑ': "r", 'ȓ': "r", 'ȕ': "u",
	'ȗ': "u", 'ș': "s", 'ț': "t", 'ȟ': "h", 'ȡ': "d", 'ȥ': "z", 'ȧ': "a", 'ȩ': "e",
	'ȫ': "o", 'ȭ': "o", 'ȯ': "o", 'ȱ': "o", 'ȳ': "y", 'ȴ': "l", 'ȵ': "n", 'ȶ': "t",
	'ȷ': "j", 'ȸ': "db", 'ȹ': "qp", 'ȼ': "c", 'ɇ': "e", 'ɉ': "j", 'ɍ': "r", 'ɏ': "y",
	'ḁ': "a", 'ḃ': "b", 'ḅ': "b", 'ḇ': "b", 'ḉ': "c", 'ḋ': "d", 'ḍ': "d", 'ḏ': "d",
	'ḑ': "d", 'ḓ': "d", 'ḕ': "e", 'ḗ': "e", 'ḙ': "e", 'ḛ': "e", 'ḝ': "e", 'ḟ': "f",
	'ḡ': "g", 'ḣ': "h", 'ḥ': "h", 'ḧ': "h", 'ḩ': "h", 'ḫ': "h", 'ḭ': "i", 'ḯ': "i",
	'ḱ': "k", 'ḳ': "k", 'ḵ': "k", 'ḷ': "l", 'ḹ': "l", 'ḻ': "l", 'ḽ': "l", 'ḿ': "m",
	'ṁ': "m", 'ṃ': "m", 'ṅ': "n", 'ṇ': "n", 'ṉ': "n", 'ṋ': "n", 'ṍ': "o", 'ṏ': "o",
	'ṑ': "o", 'ṓ': "o", 'ṕ': "p", 'ṗ': "p", 'ṙ': "r", 'ṛ': "r", 'ṝ': "r", 'ṟ': "r",
	'ṡ': "s", 'ṣ': "s", 'ṥ': "s", 'ṧ': "s", 'ṩ': "s", 'ṫ': "t", 'ṭ': "t", 'ṯ': "t",
	'ṱ': "t", 'ṳ': "u", 'ṵ': "u", 'ṷ': "u", 'ṹ': "u", 'ṻ': "u", 'ṽ': "v", 'ṿ': "v",
	'ẁ': "w", 'ẃ': "w", 'ẅ': "w", 'ẇ': "w", 'ẉ': "w", 'ẋ': "x", 'ẍ': "x", 'ẏ': "y",
	'ẑ': "z", 'ẓ': "z", 'ẕ': "z", 'ẖ': "h", 'ẗ': "t", 'ẘ': "w", 'ẙ': "y", 'ẚ': "a",
	'ẛ': "s", 'ạ': "a", 'ả': "a", 'ấ': "a", 'ầ': "a", 'ẩ': "a", 'ẫ': "a", 'ậ': "a",
	'ắ': "a", 'ằ': "a", 'ẳ': "a", 'ẵ': "a", 'ặ': "a", 'ẹ': "e", 'ẻ': "e", 'ẽ': "e",
	'ế': "e", 'ề': "e", 'ể': "e", 'ễ': "e", 'ệ': "e", 'ỉ': "i", 'ị': "i", 'ọ': "o",
	'ỏ': "o", 'ố': "o", 'ồ': "o", 'ổ': "o", 'ỗ': "o", 'ộ': "o", 'ớ': "o", 'ờ': "o",
	'ở': "o", 'ỡ': "o", 'ợ': "o", 'ụ': "u", 'ủ': "u", 'ứ': "u", 'ừ': "u", 'ử': "u",
	'ữ': "u", 'ự': "u", 'ỳ': "y", 'ỵ': "y", 'ỷ': "y", 'ỹ': "y",
}

// sepFlags records which kinds of separator were seen between the previous
// token and this one. Key only needs to know about hyphens ("88-A" binds the
// suffix letter to the number); Parse also needs commas (field boundaries)
// and '#' (a unit number).
type sepFlags uint8

const (
	sepHyphen sepFlags = 1 << iota
	sepComma
	sepHash
)

// rawTok is one folded word: lower case ASCII letters/digits (or other
// scripts' letters, lower-cased, left alone) plus the separators before it.
type rawTok struct {
	text string
	sep  sepFlags
}

// lex lower-cases and accent-folds s and splits it into alphanumeric words.
// Every other character is a separator; the flags of the separators between
// two words are kept on the second word. lex never fails: invalid UTF-8 is
// read as U+FFFD, which is a separator like any other symbol.
func lex(s string) []rawTok {
	var (
		toks []rawTok
		b    strings.Builder
		sep  sepFlags
	)
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, rawTok{text: b.String(), sep: sep})
			b.Reset()
			sep = 0
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		// Fullwidth ASCII (common from East-Asian IMEs) is the same text.
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		r = unicode.ToLower(r)
		switch {
		case r < utf8.RuneSelf:
			c := byte(r)
			if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
				b.WriteByte(c)
				continue
			}
			if c == '\'' || c == '`' {
				if b.Len() > 0 && possessiveS(s[i:]) {
					continue // "John's" → "johns", so "St John's" == "St Johns"
				}
			}
			flush()
			switch c {
			case '-':
				sep |= sepHyphen
			case ',', ';', '\n', '\r', '|':
				sep |= sepComma
			case '#':
				sep |= sepHash
			}
		case unicode.IsMark(r):
			// Combining accents from decomposed (NFD) input: "e\u0301" is "é".
		case foldTable[r] != "":
			b.WriteString(foldTable[r])
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			if isApostrophe(r) && b.Len() > 0 && possessiveS(s[i:]) {
				continue
			}
			flush()
			if r >= 0x2010 && r <= 0x2015 || r == 0x2212 || r == 0xFE63 {
				sep |= sepHyphen // typographic dashes and minus sign
			}
		}
	}
	flush()
	return toks
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '`' || r == 0x2018 || r == 0x2019 || r == 0x02BC || r == 0x00B4
}

// possessiveS reports whether rest starts with a lone "s" (English
// possessive after an apostrophe), i.e. "s" not followed by another letter
// or digit. "O'Sullivan" is not possessive and stays two words.
func possessiveS(rest string) bool {
	if rest == "" || (rest[0] != 's' && rest[0] != 'S') {
		return false
	}
	if len(rest) == 1 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest[1:])
	return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}

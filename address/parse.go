package address

import "strings"

// Parsed is a best-effort split of one free-text address line. Every field
// is normalised so that two spellings of the same address compare equal
// field by field; an empty field means "not found", never "invalid".
type Parsed struct {
	// Number is the house number with any suffix letter fused, lower
	// case: "88a" for "88A", "88 A" or "88-A".
	Number string
	// Street is the Key form of the street name including its type and
	// direction, without the number: "queen street west".
	Street string
	// Unit is the apartment/suite/office number in Key form: "1204", "3b".
	Unit string
	// City is the Key form of the municipality: "montreal".
	City string
	// Province is the two-letter code in upper case: "QC".
	Province string
	// PostalCode is the canonical "A1A 1A1" form.
	PostalCode string
}

// unitWords introduce a unit number, in English and French. "ste" is handled
// separately because before a name it means Sainte.
var unitWords = map[string]bool{
	"unit": true, "unite": true, "apt": true, "app": true, "appt": true, "apart": true,
	"apartment": true, "appartement": true, "suite": true, "bureau": true, "bur": true,
	"local": true, "lgt": true, "logement": true, "room": true, "rm": true,
}

// cityNames are municipalities common enough in the service area that Parse
// can split them off a line written without commas, when the street type
// and direction do not show where the street ends
// ("1 Place Ville Marie Montréal"). They are stored in Key form.
var cityNames = []string{
	"Montréal", "Laval", "Longueuil", "Québec", "Lévis", "Gatineau", "Sherbrooke",
	"Trois-Rivières", "Saguenay", "Terrebonne", "Brossard", "Repentigny",
	"Saint-Jérôme", "Drummondville", "Granby", "Blainville", "Westmount",
	"Outremont", "Verdun", "Lachine", "Côte-Saint-Luc", "Mont-Royal",
	"Pointe-Claire", "Dorval", "Saint-Lambert", "Boucherville",
	"Saint-Jean-sur-Richelieu", "Toronto", "North York", "Scarborough",
	"Etobicoke", "Ottawa", "Mississauga", "Brampton", "Hamilton", "Markham",
	"Vaughan", "Richmond Hill", "Oakville", "Burlington", "Oshawa", "Kitchener",
	"Waterloo", "Guelph", "London", "Windsor", "Kingston", "Barrie", "Sudbury",
	"Thunder Bay", "Vancouver", "Burnaby", "Surrey", "Richmond", "Victoria",
	"Kelowna", "Calgary", "Edmonton", "Winnipeg", "Regina", "Saskatoon",
	"Halifax", "Dartmouth", "Moncton", "Fredericton", "Saint John",
	"St. John's", "Charlottetown", "Whitehorse", "Yellowknife", "Iqaluit",
}

var (
	knownCities   = map[string]bool{}
	maxCityWords  int
	directionWord = map[string]bool{}
)

func init() {
	for _, c := range cityNames {
		k := Tokens(c)
		knownCities[strings.Join(k, " ")] = true
		maxCityWords = max(maxCityWords, len(k))
	}
	for _, d := range directions {
		directionWord[d] = true
	}
}

// Parse splits one free-text address line such as
// "88A Queen St W, Unit 1204, Toronto ON M5H 2N2" or
// "1204-88 rue King O Montréal (Québec) h3c2b5" into its parts. It accepts
// units written as "Unit/Apt/App/Suite/Ste/Bureau/Local 3", "#1204" or the
// Canadian "1204-88" (unit, hyphen, house number) prefix, English or French
// province names or codes, and lines with or without commas. It is a
// heuristic: it never fails and never panics, it only leaves fields empty.
func Parse(s string) Parsed {
	var p Parsed
	toks := lex(s)
	toks = p.takePostal(toks)
	toks, quebecByName := p.takeTail(toks)
	toks = p.takeUnit(toks)

	segs := segments(toks)
	si := -1 // the street segment: the first that starts with a number
	for i, seg := range segs {
		if startsWithDigit(seg[0].text) {
			si = i
			break
		}
	}
	if si < 0 {
		if len(segs) == 1 {
			// "Montréal QC", "Montréal": nothing but a place.
			if k := strings.Join(keyWords(segs[0]), " "); p.Province != "" || p.PostalCode != "" || knownCities[k] {
				p.City = k
				return p
			}
		}
		if len(segs) == 0 {
			if quebecByName {
				p.City = "quebec"
			}
			return p
		}
		si = 0
	}

	street, last := segs[si], si
	if len(street) == 1 && startsWithDigit(street[0].text) && si+1 < len(segs) {
		// "120, rue King Ouest": Quebec style puts a comma after the number.
		last = si + 1
		street = append(street[:1:1], segs[last]...)
	}
	// "1204-88 Queen St W": Canadian unit-before-number form.
	if len(street) >= 2 && startsWithDigit(street[0].text) && startsWithDigit(street[1].text) && street[1].sep&sepHyphen != 0 {
		if p.Unit == "" {
			p.Unit = street[0].text
		}
		street = street[1:]
	}
	words := keyWords(street)
	if len(words) > 0 && startsWithDigit(words[0]) {
		p.Number = words[0]
		words = words[1:]
	}

	var city []string
	if last < len(segs)-1 {
		// The last field after the street is the city; anything between
		// ("3rd floor", a building name) is not something we can use.
		city = keyWords(segs[len(segs)-1])
	}
	if city == nil {
		words, city = splitCity(words)
	}
	p.Street = strings.Join(words, " ")
	p.City = strings.Join(city, " ")
	if p.City == "" && quebecByName {
		// "…, Québec G1R 2B5": the name is both the province and the
		// capital; with no other city given, it is both.
		p.City = "quebec"
	}
	return p
}

// takePostal removes the last postal code in toks, written compact or in
// two halves, and records it.
func (p *Parsed) takePostal(toks []rawTok) []rawTok {
	for i := len(toks) - 1; i >= 0; i-- {
		t := toks[i].text
		if isCompactPostal(t) {
			p.PostalCode, _ = PostalCode(t)
			return removeToks(toks, i, i+1)
		}
		if i+1 < len(toks) && isFSA(t) && isLDU(toks[i+1].text) {
			p.PostalCode, _ = PostalCode(t + toks[i+1].text)
			return removeToks(toks, i, i+2)
		}
	}
	return toks
}

// takeTail strips a trailing country and province. It reports whether the
// province was written as the name "Québec", which is also a city.
func (p *Parsed) takeTail(toks []rawTok) ([]rawTok, bool) {
	quebecByName := false
	for changed := true; changed && len(toks) > 0; {
		changed = false
		last := toks[len(toks)-1]
		if last.text == "canada" || last.text == "ca" && len(toks) > 1 &&
			(p.PostalCode != "" || p.Province != "" || last.sep&sepComma != 0) {
			toks = toks[:len(toks)-1]
			changed = true
			continue
		}
		if p.Province != "" {
			break
		}
		for k := min(maxProvinceWords, len(toks)); k >= 1; k-- {
			start := len(toks) - k
			if !provinceTailOK(toks, start) {
				continue
			}
			code, ok := provinceOf(toks[start:])
			if !ok {
				continue
			}
			p.Province = code
			quebecByName = k == 1 && toks[start].text == "quebec"
			toks = toks[:start]
			changed = true
			break
		}
	}
	return toks, quebecByName
}

// provinceTailOK reports whether toks[start:] may be a province: it must
// lie within one comma-separated field and must not be the name part of a
// street ("Rue Ontario", "Avenue du Québec", "100 Québec").
func provinceTailOK(toks []rawTok, start int) bool {
	for j := start + 1; j < len(toks); j++ {
		if toks[j].sep&sepComma != 0 {
			return false
		}
	}
	if start == 0 || toks[start].sep&sepComma != 0 {
		return true
	}
	prev := toks[start-1].text
	return !typeLike[prev] && !particles[prev] && !allDigits(prev)
}

// takeUnit removes the first unit designation and records its value.
func (p *Parsed) takeUnit(toks []rawTok) []rawTok {
	for i, t := range toks {
		designator := unitWords[t.text] ||
			t.text == "ste" && i+1 < len(toks) && startsWithDigit(toks[i+1].text)
		if designator && i+1 < len(toks) && toks[i+1].sep&sepComma == 0 && isUnitValue(toks[i+1].text) {
			v, n := unitValue(toks, i+1)
			p.Unit = v
			return removeToks(toks, i, i+1+n)
		}
		if t.sep&sepHash != 0 && isUnitValue(t.text) {
			v, n := unitValue(toks, i)
			p.Unit = v
			return removeToks(toks, i, i+n)
		}
	}
	return toks
}

// isUnitValue accepts "1204", "3b", "ph2" and single letters ("Apt B").
func isUnitValue(t string) bool {
	return hasDigit(t) || len(t) == 1 && t[0] >= 'a' && t[0] <= 'z'
}

// unitValue returns the unit starting at toks[j] and how many tokens it
// spans: "3-B" and a final "3 B" are one unit "3b", like a house number.
func unitValue(toks []rawTok, j int) (string, int) {
	v := toks[j].text
	if allDigits(v) && j+1 < len(toks) {
		next := toks[j+1]
		endOfField := j+2 == len(toks) || toks[j+2].sep&sepComma != 0
		if len(next.text) == 1 && next.text[0] >= 'a' && next.text[0] <= 'z' &&
			(next.sep&sepHyphen != 0 || next.sep == 0 && endOfField) {
			return v + next.text, 2
		}
	}
	return v, 1
}

// removeToks returns toks without toks[i:j], in a new slice. A comma before
// the removed run is kept on the token that follows it so that removing
// "Unit 1204" from ", Unit 1204 Toronto" does not glue Toronto to the street.
func removeToks(toks []rawTok, i, j int) []rawTok {
	out := make([]rawTok, 0, len(toks)-(j-i))
	out = append(out, toks[:i]...)
	out = append(out, toks[j:]...)
	if i < len(out) {
		out[i].sep |= toks[i].sep & sepComma
	}
	return out
}

// segments splits toks at commas into non-empty fields.
func segments(toks []rawTok) [][]rawTok {
	var segs [][]rawTok
	start := 0
	for i := range toks {
		if i > start && toks[i].sep&sepComma != 0 {
			segs = append(segs, toks[start:i])
			start = i
		}
	}
	if start < len(toks) {
		segs = append(segs, toks[start:])
	}
	return segs
}

// splitCity separates a trailing city from street words when the line had
// no comma before the city. In order:
//   - a known city at the end ("… Ville Marie montreal"), unless taking it
//     would leave only a street type ("Rue Laval") or end on a particle
//     ("Rue de Montréal");
//   - English order: the first street type after the name, plus an optional
//     direction, ends the street ("Queen Street West | Oakville");
//   - French order: the type comes first and a direction ends the street
//     ("Rue King West | Montréal").
//
// Otherwise everything stays in the street.
func splitCity(words []string) (street, city []string) {
	for k := min(maxCityWords, len(words)-1); k >= 1; k-- {
		left := words[:len(words)-k]
		last := left[len(left)-1]
		if knownCities[strings.Join(words[len(words)-k:], " ")] &&
			!(len(left) == 1 && typeLike[last]) &&
			!particles[last] && last != "saint" && last != "sainte" {
			return left, words[len(words)-k:]
		}
	}
	if len(words) == 0 {
		return words, nil
	}
	if streetTypes[words[0]] == "" {
		for i := 1; i < len(words); i++ {
			if streetTypes[words[i]] == "" {
				continue
			}
			end := i + 1
			if end < len(words) && directionWord[words[end]] {
				end++
			}
			if end < len(words) {
				return words[:end], words[end:]
			}
			return words, nil
		}
		return words, nil
	}
	for i := 2; i < len(words); i++ {
		if directionWord[words[i]] {
			if i+1 < len(words) {
				return words[:i+1], words[i+1:]
			}
			break
		}
	}
	return words, nil
}

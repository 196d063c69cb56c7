package address

import "strings"

// streetTypes maps every accepted spelling of a street type to its one
// canonical token. English and French types keep separate canonical tokens
// ("rue" is not "street", "chemin" is not "road") because that is how the
// building records are written and a person typing "rue" expects rue.
// Every canonical token also maps to itself, which is what makes Key
// idempotent.
var streetTypes = map[string]string{}

// streetTypeAliases lists canonical → spellings. Only unambiguous spellings
// belong here; "st", "ste", "dr" and "r" depend on their neighbours and are
// resolved in resolveAt.
var streetTypeAliases = map[string][]string{
	"street":     {"str"},
	"rue":        nil,
	"avenue":     {"ave", "av", "avn"},
	"boulevard":  {"blvd", "boul", "bd", "blvrd", "blv"},
	"chemin":     {"ch", "chem"},
	"road":       {"rd"},
	"drive":      {"drv"},
	"crescent":   {"cres", "cresc", "crcs"},
	"croissant":  {"crois"},
	"place":      {"pl"},
	"court":      {"ct", "crt"},
	"terrace":    {"terr", "ter", "tce"},
	"terrasse":   {"tsse"},
	"parkway":    {"pkwy", "pky"},
	"highway":    {"hwy"},
	"autoroute":  {"aut"},
	"route":      {"rte"},
	"square":     {"sq"},
	"carre":      nil,
	"circle":     {"cir", "circ"},
	"cercle":     nil,
	"lane":       {"ln"},
	"montee":     {"mtee"},
	"cote":       nil,
	"impasse":    {"imp"},
	"promenade":  {"prom"},
	"allee":      nil,
	"way":        nil,
	"gate":       nil,
	"heights":    {"hts"},
	"gardens":    {"gdns"},
	"grove":      {"grv"},
	"trail":      {"trl"},
	"rang":       nil,
	"sentier":    nil,
	"esplanade":  nil,
	"concession": {"conc"},
}

// directions maps full direction words, English and French, to the English
// canonical token. They are unambiguous so they are always rewritten.
var directions = map[string]string{
	"north": "north", "nord": "north",
	"south": "south", "sud": "south",
	"east": "east", "est": "east",
	"west": "west", "ouest": "west",
	"northeast": "northeast", "northwest": "northwest",
	"southeast": "southeast", "southwest": "southwest",
}

// dirAbbrev are direction abbreviations that are also ordinary letters or
// words ("O'Connor", "J S Woodsworth", French "se"), so they are only read as
// a direction in a direction position (see dirPosition).
var dirAbbrev = map[string]string{
	"n": "north", "s": "south", "e": "east", "w": "west", "o": "west",
	"ne": "northeast", "nw": "northwest", "se": "southeast", "sw": "southwest",
}

// canon holds every unconditional rewrite: street types, full directions and
// the canonical outputs of the context-dependent abbreviations (so that a
// second Key pass leaves them alone).
var canon = map[string]string{
	"saint": "saint", "sainte": "sainte", "suite": "suite",
}

// known is every word Key treats as vocabulary rather than a name: all
// spellings and all canonical outputs. Context rules ask "is the neighbour a
// name?" and the answer must be the same before and after rewriting, or a
// second Key pass could decide differently (Key must be idempotent), so the
// ambiguous abbreviations and everything they can become are all "known".
var known = map[string]bool{"st": true, "ste": true, "dr": true, "r": true}

// typeLike marks words that behave like a street type for direction
// detection: every street-type spelling plus the ambiguous "st"/"ste"/"dr"/
// "r" and their saint/sainte readings. "Saint" is included because "st" may
// become either "street" or "saint" and both must classify the same way.
var typeLike = map[string]bool{"st": true, "ste": true, "dr": true, "r": true, "saint": true, "sainte": true}

// particles are French/English connecting words after which "St" still
// means Saint: "Rue de St-Jovite", "Côte-du-St-Luc".
var particles = map[string]bool{"de": true, "du": true, "des": true, "la": true, "le": true, "l": true, "d": true, "of": true}

func init() {
	for c, aliases := range streetTypeAliases {
		streetTypes[c] = c
		for _, a := range aliases {
			streetTypes[a] = c
		}
	}
	for a, c := range streetTypes {
		canon[a] = c
		typeLike[a] = true
		known[a] = true
		known[c] = true
	}
	for a, c := range directions {
		canon[a] = c
		known[a] = true
	}
	for a, c := range dirAbbrev {
		known[a] = true
		known[c] = true
	}
	for a := range canon {
		known[a] = true
	}
}

// Key normalises free text for matching; see the package documentation for
// the rules and the matching contract. Key is idempotent:
// Key(Key(s)) == Key(s).
func Key(s string) string {
	return strings.Join(keyWords(lex(s)), " ")
}

// Tokens is Key split into words (strings.Fields(Key(s))), without building
// the joined string.
func Tokens(s string) []string {
	return keyWords(lex(s))
}

// keyWords runs the normalisation pipeline on lexed words. The order
// matters: suffix letters are fused before postal codes are merged (a fused
// "2a" can then complete a half-typed "h3c 2a"), and both happen before word
// rewriting so the context rules see the final word boundaries. None of the
// rewrites creates a token an earlier stage would treat differently, which is
// what keeps Key idempotent.
func keyWords(toks []rawTok) []string {
	toks = fuseSuffixes(toks)
	toks = mergePostal(toks)
	return resolve(toks)
}

// fuseSuffixes joins a house number and a following single suffix letter:
// "88 a", "88-a" and "88a" all become "88a". A lone n/s/e/w/o after a number
// is left alone for direction detection ("2150 W 4th Ave", "Route 132 O",
// "150 O'Connor St") unless a hyphen binds it ("88-E"), and "r" before a
// name is Rue ("120 R. King").
func fuseSuffixes(toks []rawTok) []rawTok {
	out := make([]rawTok, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		if allDigits(toks[i].text) && i+1 < len(toks) && isSuffixLetter(toks, i+1) {
			out = append(out, rawTok{text: toks[i].text + toks[i+1].text, sep: toks[i].sep})
			i++
			continue
		}
		out = append(out, toks[i])
	}
	return out
}

func isSuffixLetter(toks []rawTok, j int) bool {
	t := toks[j].text
	if len(t) != 1 || t[0] < 'a' || t[0] > 'z' {
		return false
	}
	if toks[j].sep&sepHyphen != 0 {
		return true
	}
	switch t {
	case "n", "s", "e", "w", "o":
		return false
	case "r":
		return !(j+1 < len(toks) && nameLike(toks[j+1].text))
	}
	return true
}

// mergePostal joins a postal code written in two halves ("h3c 2b5",
// "h3c-2b5") into the compact form "h3c2b5" that a fused spelling already
// has, so both spellings yield the same token. A trailing partial second
// half ("h3c 2b") is merged too so an autocomplete prefix keeps matching
// while the user types.
func mergePostal(toks []rawTok) []rawTok {
	out := make([]rawTok, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		if isFSA(toks[i].text) && i+1 < len(toks) {
			next := toks[i+1].text
			if isLDU(next) || (i+2 == len(toks) && isLDUPrefix(next)) {
				out = append(out, rawTok{text: toks[i].text + next, sep: toks[i].sep})
				i++
				continue
			}
		}
		out = append(out, toks[i])
	}
	return out
}

func resolve(toks []rawTok) []string {
	firstType := len(toks)
	for i, t := range toks {
		if typeLike[t.text] {
			firstType = i
			break
		}
	}
	out := make([]string, len(toks))
	for i := range toks {
		out[i] = resolveAt(toks, i, firstType)
	}
	return out
}

// resolveAt rewrites word i. Every predicate used on neighbours (nameLike,
// typeLike, digits) gives the same answer for a word and for what it is
// rewritten to, so running Key again reaches the same decisions.
func resolveAt(toks []rawTok, i, firstType int) string {
	t := toks[i].text
	if c, ok := canon[t]; ok {
		return c
	}
	var prev, next string
	hasPrev, hasNext := i > 0, i+1 < len(toks)
	if hasPrev {
		prev = toks[i-1].text
	}
	if hasNext {
		next = toks[i+1].text
	}
	switch t {
	case "st", "ste":
		// Before a name, after nothing/number/type/particle: Saint(e)
		// ("St Laurent", "Boul. St-Laurent", "1 St Clair Ave").
		if hasNext && nameLike(next) && (!hasPrev || saintPrev(prev)) {
			if t == "st" {
				return "saint"
			}
			return "sainte"
		}
		if t == "ste" {
			if hasNext && startsWithDigit(next) {
				return "suite" // "Ste 300"
			}
			return t
		}
		// After a name or an ordinal: Street ("Queen St", "1st St").
		if hasPrev && (nameLike(prev) || isOrdinal(prev)) {
			return "street"
		}
		if hasNext {
			return "street" // "St W": no name follows, so not Saint
		}
		// A lone "st" (or "120 St" being typed) is left as is: it is
		// still a prefix of "street" and guessing "saint" would hide it.
		return t
	case "dr":
		// "Maple Dr" is Drive; "Av. Dr-Penfield" is Docteur, left alone.
		if hasPrev && (nameLike(prev) || isOrdinal(prev)) {
			return "drive"
		}
		return t
	case "r":
		if hasPrev && allDigits(prev) && hasNext && nameLike(next) {
			return "rue" // "120 R. King"
		}
		return t
	}
	if d, ok := dirAbbrev[t]; ok && dirPosition(toks, i, firstType) {
		return d
	}
	return t
}

// dirPosition reports whether the ambiguous direction abbreviation at i is
// in a place where only a direction makes sense:
//   - right after a number: "2150 W 4th Ave", "Hwy 7 E", "Route 132 O";
//   - right after a street type used as a suffix: "King St W", "17 Ave SW";
//   - after a name that follows a street type: "Rue King O", "Boul.
//     René-Lévesque O Montréal".
//
// "O" needs the most care because it starts Irish names: in
// "Rue O'Connor" it follows the type directly and is not Ouest.
func dirPosition(toks []rawTok, i, firstType int) bool {
	if i == 0 {
		return false
	}
	t, prev := toks[i].text, toks[i-1].text
	if allDigits(prev) {
		// "2150 W 4th Ave", "Hwy 7 E". "O" only when a street type comes
		// before the number ("Route 132 O"): "150 O'Connor St" is a name.
		return len(t) == 1 && (t != "o" || firstType < i-1)
	}
	if typeLike[prev] {
		if t != "o" {
			return true
		}
		if i >= 2 && (nameLike(toks[i-2].text) || isOrdinal(toks[i-2].text)) {
			return true
		}
	}
	return (nameLike(prev) || isOrdinal(prev)) && firstType < i-1
}

// saintPrev reports whether a word before "St" allows it to mean Saint: a
// house number, vocabulary (a type or direction), or a particle. After a
// name ("Queen St") or an English ordinal ("1st St") it is Street.
func saintPrev(prev string) bool {
	if startsWithDigit(prev) {
		return !isOrdinal(prev)
	}
	if hasDigit(prev) {
		return false
	}
	return !nameLike(prev) || particles[prev]
}

// nameLike reports whether w looks like part of a proper name: no digits and
// not street vocabulary.
func nameLike(w string) bool {
	return w != "" && !hasDigit(w) && !known[w]
}

// ordinalSuffixes are English and French ordinal endings: "1st", "2nd",
// "3rd", "4th", "5e", "1er", "1re", "2eme", "2ieme".
var ordinalSuffixes = map[string]bool{"st": true, "nd": true, "rd": true, "th": true, "e": true, "er": true, "re": true, "eme": true, "ieme": true}

func isOrdinal(w string) bool {
	i := 0
	for i < len(w) && isDigit(w[i]) {
		i++
	}
	return i > 0 && ordinalSuffixes[w[i:]]
}

func allDigits(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !isDigit(w[i]) {
			return false
		}
	}
	return true
}

func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if isDigit(w[i]) {
			return true
		}
	}
	return false
}

func startsWithDigit(w string) bool { return w != "" && isDigit(w[0]) }

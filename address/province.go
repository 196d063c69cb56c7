package address

import "strings"

// provinceNames lists, per two-letter Canada Post code, the names and
// abbreviations people write in English and French. They are compared after
// folding and removing every separator, so "Île-du-Prince-Édouard",
// "ile du prince edouard" and "I.P.E." all meet.
var provinceNames = map[string][]string{
	"AB": {"ab", "alta", "alberta"},
	"BC": {"bc", "b c", "cb", "c b", "british columbia", "colombie britannique"},
	"MB": {"mb", "man", "manitoba"},
	"NB": {"nb", "new brunswick", "nouveau brunswick"},
	"NL": {"nl", "nf", "nfld", "tnl", "newfoundland", "newfoundland and labrador", "newfoundland labrador", "terre neuve", "terre neuve et labrador"},
	// "N.-É." (Nouvelle-Écosse) is deliberately absent: folded it is "ne",
	// which is also the north-east quadrant in Calgary street addresses.
	"NS": {"ns", "nova scotia", "nouvelle ecosse"},
	"NT": {"nt", "nwt", "tno", "northwest territories", "north west territories", "territoires du nord ouest"},
	"NU": {"nu", "nvt", "nunavut"},
	"ON": {"on", "ont", "ontario"},
	"PE": {"pe", "pei", "ipe", "prince edward island", "ile du prince edouard"},
	"QC": {"qc", "que", "pq", "quebec", "province de quebec"},
	"SK": {"sk", "sask", "saskatchewan"},
	"YT": {"yt", "yk", "yukon", "yukon territory", "territoire du yukon"},
}

// provinces maps a compacted (separator-free, folded) name to its code.
var provinces = map[string]string{}

// maxProvinceWords is the most words a province name has
// ("territoires du nord ouest"); Parse tries tails up to this length.
var maxProvinceWords int

func init() {
	for code, names := range provinceNames {
		for _, n := range names {
			provinces[strings.ReplaceAll(n, " ", "")] = code
			maxProvinceWords = max(maxProvinceWords, len(strings.Fields(n)))
		}
	}
}

// Province returns the two-letter Canada Post code for a province or
// territory written as its code or its English or French name, in any case,
// with or without accents, hyphens or periods ("Québec", "quebec", "Qc",
// "P.Q.", "Colombie-Britannique", "C.-B.").
func Province(s string) (code string, ok bool) {
	return provinceOf(lex(s))
}

func provinceOf(toks []rawTok) (string, bool) {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	code, ok := provinces[b.String()]
	return code, ok
}

package address

import (
	"slices"
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	tests := []struct {
		rule string
		in   string
		want string
	}{
		// Case, accents, punctuation, white space.
		{"lower case", "KING", "king"},
		{"accent acute", "Montréal", "montreal"},
		{"accent circumflex", "Côté", "cote"},
		{"cedilla", "François", "francois"},
		{"ligature", "Œuvre", "oeuvre"},
		{"decomposed accent (NFD)", "Montre\u0301al", "montreal"},
		{"punctuation to spaces", "St.-Laurent,(Montréal)", "saint laurent montreal"},
		{"white space collapsed", "  88   Queen\t\nSt  ", "88 queen street"},
		{"fullwidth letters", "ＫＩＮＧ", "king"},
		{"apostrophe splits elision", "Rue de l'Église", "rue de l eglise"},
		{"possessive joined", "St. John's", "saint johns"},
		{"typographic possessive joined", "St. John’s", "saint johns"},
		{"empty", "", ""},
		{"only punctuation", " -,.# ", ""},

		// Street types.
		{"St after name is street", "Queen St", "queen street"},
		{"Str is street", "Queen Str", "queen street"},
		{"Street", "Queen Street", "queen street"},
		{"Rue", "Rue King", "rue king"},
		{"R after number before name is rue", "120 R. King", "120 rue king"},
		{"Ave", "Park Ave", "park avenue"},
		{"Av", "Av. du Parc", "avenue du parc"},
		{"Avenue", "Avenue du Parc", "avenue du parc"},
		{"Blvd", "Taschereau Blvd", "taschereau boulevard"},
		{"Boul", "Boul. Taschereau", "boulevard taschereau"},
		{"Bd", "Bd Taschereau", "boulevard taschereau"},
		{"Ch", "Ch. Sainte-Foy", "chemin sainte foy"},
		{"Chemin", "Chemin Sainte-Foy", "chemin sainte foy"},
		{"Rd", "Dundas Rd", "dundas road"},
		{"Dr after name is drive", "Maple Dr", "maple drive"},
		{"Dr before name is left alone (Docteur)", "Av. Dr-Penfield", "avenue dr penfield"},
		{"Cres", "Elm Cres", "elm crescent"},
		{"Pl", "Fort William Pl", "fort william place"},
		{"Ct", "Birch Ct", "birch court"},
		{"Terr", "Oak Terr", "oak terrace"},
		{"Pkwy", "Hazeldean Pkwy", "hazeldean parkway"},
		{"Hwy", "Hwy 7", "highway 7"},
		{"Sq", "Dundas Sq", "dundas square"},
		{"Cir", "Maple Cir", "maple circle"},
		{"Ln", "Cherry Ln", "cherry lane"},
		{"Lane", "Cherry Lane", "cherry lane"},
		{"Montée", "Montée Saint-François", "montee saint francois"},
		{"Mtée", "Mtée St-François", "montee saint francois"},
		{"Côte", "Côte-des-Neiges", "cote des neiges"},

		// Directions.
		{"N after type", "Yonge St N", "yonge street north"},
		{"North", "Yonge Street North", "yonge street north"},
		{"Nord", "Rue Principale Nord", "rue principale north"},
		{"S after type", "Main St S", "main street south"},
		{"Sud", "Rue Principale Sud", "rue principale south"},
		{"E after type", "King St E", "king street east"},
		{"Est", "Rue Notre-Dame Est", "rue notre dame east"},
		{"W after type", "Queen St W", "queen street west"},
		{"West", "Queen Street West", "queen street west"},
		{"Ouest", "Rue Sherbrooke Ouest", "rue sherbrooke west"},
		{"O last after name", "Rue King O", "rue king west"},
		{"O before city", "1000 Rue King O Montréal", "1000 rue king west montreal"},
		{"O after trailing type", "Sherbrooke St O", "sherbrooke street west"},
		{"O of O'Connor after type is a name", "Rue O'Connor", "rue o connor"},
		{"O of O'Connor after number is a name", "150 O'Connor St", "150 o connor street"},
		{"O after number with type before is west", "Route 132 O", "route 132 west"},
		{"O inside a name without type", "King O Brien", "king o brien"},
		{"direction letter after number", "2150 W 4th Ave", "2150 west 4th avenue"},
		{"direction after highway number", "Hwy 7 E", "highway 7 east"},
		{"quadrant NE", "Centre St NE", "centre street northeast"},
		{"quadrant SW after numbered avenue", "17 Ave SW", "17 avenue southwest"},
		{"single letter without context stays", "Queen S", "queen s"},

		// Saint versus Street.
		{"St before name is saint", "St Laurent", "saint laurent"},
		{"St hyphenated is saint", "Boul. St-Laurent", "boulevard saint laurent"},
		{"St after number before name is saint", "1 St Clair Ave W", "1 saint clair avenue west"},
		{"St after type is saint", "Rue St-Denis", "rue saint denis"},
		{"St after particle is saint", "Chemin de St-Jovite", "chemin de saint jovite"},
		{"St after name before city is street", "Queen St Toronto", "queen street toronto"},
		{"St after ordinal is street", "1st St", "1st street"},
		{"St twice", "St Paul St E", "saint paul street east"},
		{"Ste before name is sainte", "Rue Ste-Catherine O", "rue sainte catherine west"},
		{"Ste before number is suite", "Ste 300", "suite 300"},
		{"lone St left for prefix matching", "120 St", "120 st"},

		// House-number suffixes.
		{"suffix fused", "88A Queen", "88a queen"},
		{"suffix separated by space", "88 A Queen", "88a queen"},
		{"suffix separated by hyphen", "88-A Queen", "88a queen"},
		{"suffix separated by spaced hyphen", "88 - A Queen", "88a queen"},
		{"hyphen binds direction letter as suffix", "88-E Queen", "88e queen"},
		{"unit-number hyphen kept apart", "1204-88 Queen", "1204 88 queen"},
		{"French ordinal untouched", "1234 5e Avenue", "1234 5e avenue"},

		// Postal codes.
		{"postal compact", "H3C2B5", "h3c2b5"},
		{"postal with space", "H3C 2B5", "h3c2b5"},
		{"postal with hyphen", "h3c-2b5", "h3c2b5"},
		{"postal in a line", "Montréal QC H3C 2B5", "montreal qc h3c2b5"},
		{"postal half typed", "Montréal H3C 2B", "montreal h3c2b"},
		{"invalid postal letters not merged", "D3C 2B5", "d3c 2b5"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := Key(tt.in); got != tt.want {
				t.Errorf("Key(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := Key(tt.want); got != tt.want {
				t.Errorf("Key(%q) = %q, want it unchanged (idempotence)", tt.want, got)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	for _, s := range []string{"", "88 A Queen St. W", "120 rue King Ouest, Montréal QC h3c 2b5"} {
		if got, want := Tokens(s), strings.Fields(Key(s)); !slices.Equal(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", s, got, want)
		}
	}
}

// matches is the caller's matching rule, written out so the contract in the
// package documentation is tested the way it is used.
func matches(query, building string) bool {
	have := Tokens(building)
	for _, q := range Tokens(query) {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, q) }) {
			return false
		}
	}
	return true
}

func TestMatchingContract(t *testing.T) {
	tests := []struct {
		rule     string
		query    string
		building string
		want     bool
	}{
		{"fused suffix finds separated", "88A Queen", "88 A Queen St W", true},
		{"separated suffix finds fused", "88 A Queen", "88A Queen St W", true},
		{"hyphen suffix finds fused", "88-A Queen", "88A Queen St W", true},
		{"abbreviation finds full words", "88a queen street west", "88A Queen St W", true},
		{"French direction finds abbreviation", "120 rue king ouest", "120 Rue King O", true},
		{"accentless finds accented", "4500 de maisonneuve montreal", "4500 Boulevard De Maisonneuve Ouest, Montréal", true},
		{"saint abbreviation finds full", "boul st-laurent", "Boulevard Saint-Laurent", true},
		{"postal compact finds spaced", "h3c2b5", "120 Rue King O, Montréal QC H3C 2B5", true},
		{"postal spaced finds compact", "H3C 2B5", "120 Rue King O, Montréal QC h3c2b5", true},
		{"postal half typed", "h3c 2b", "120 Rue King O, Montréal QC H3C 2B5", true},
		{"prefix of last word", "88 que", "88A Queen St W", true},
		{"different number does not match", "89 Queen", "88A Queen St W", false},
		{"different suffix does not match", "88b Queen", "88A Queen St W", false},
		{"different direction does not match", "88a queen st e", "88A Queen St W", false},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := matches(tt.query, tt.building); got != tt.want {
				t.Errorf("match(%q, %q) = %v, want %v (query %q, building %q)",
					tt.query, tt.building, got, tt.want, Tokens(tt.query), Tokens(tt.building))
			}
		})
	}
}

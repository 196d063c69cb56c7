package address

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		rule string
		in   string
		want Parsed
	}{
		{"Toronto, unit after street", "88A Queen St W, Unit 1204, Toronto ON M5H 2N2",
			Parsed{Number: "88a", Street: "queen street west", Unit: "1204", City: "toronto", Province: "ON", PostalCode: "M5H 2N2"}},
		{"unit-before-number hyphen", "1204-88 Queen St W, Toronto, ON M5H 2N2",
			Parsed{Number: "88", Street: "queen street west", Unit: "1204", City: "toronto", Province: "ON", PostalCode: "M5H 2N2"}},
		{"unit-before-number, French, no commas", "1204-88 rue King O Montréal (Québec) h3c2b5",
			Parsed{Number: "88", Street: "rue king west", Unit: "1204", City: "montreal", Province: "QC", PostalCode: "H3C 2B5"}},
		{"hash unit without commas", "88 Queen St W #1204 Toronto ON",
			Parsed{Number: "88", Street: "queen street west", Unit: "1204", City: "toronto", Province: "ON"}},
		{"hash unit before number", "#1204-88 Queen St W Toronto",
			Parsed{Number: "88", Street: "queen street west", Unit: "1204", City: "toronto"}},
		{"separated suffix letter", "88 A Queen St. West, Toronto, Ontario",
			Parsed{Number: "88a", Street: "queen street west", City: "toronto", Province: "ON"}},
		{"Montréal French, compact lower postal", "120 rue King Ouest, Montréal QC h3c2b5",
			Parsed{Number: "120", Street: "rue king west", City: "montreal", Province: "QC", PostalCode: "H3C 2B5"}},
		{"Montréal no commas, O direction before city", "1000 rue de la Gauchetière O Montréal QC H3B4W5",
			Parsed{Number: "1000", Street: "rue de la gauchetiere west", City: "montreal", Province: "QC", PostalCode: "H3B 4W5"}},
		{"Montréal app unit and province in parentheses", "4500 Boulevard De Maisonneuve Ouest, app 3, Montréal (Québec) H3Z 1L6",
			Parsed{Number: "4500", Street: "boulevard de maisonneuve west", Unit: "3", City: "montreal", Province: "QC", PostalCode: "H3Z 1L6"}},
		{"Montréal bureau unit", "1 Rue McGill, bureau 200, Montréal, QC H2Y 4A3",
			Parsed{Number: "1", Street: "rue mcgill", Unit: "200", City: "montreal", Province: "QC", PostalCode: "H2Y 4A3"}},
		{"Montréal saint street and known city without commas", "1 Place Ville-Marie Montréal QC",
			Parsed{Number: "1", Street: "place ville marie", City: "montreal", Province: "QC"}},
		{"unit first, chemin, Côte-des-Neiges", "Apt 3, 5150 Ch. de la Côte-des-Neiges Montréal QC H3T 1X8",
			Parsed{Number: "5150", Street: "chemin de la cote des neiges", Unit: "3", City: "montreal", Province: "QC", PostalCode: "H3T 1X8"}},
		{"Québec name is province and city", "123 Rue Saint-Jean, Québec G1R 1P2",
			Parsed{Number: "123", Street: "rue saint jean", City: "quebec", Province: "QC", PostalCode: "G1R 1P2"}},
		{"Québec city with province code", "900 Boul. René-Lévesque E, Québec (QC) G1R 2B5",
			Parsed{Number: "900", Street: "boulevard rene levesque east", City: "quebec", Province: "QC", PostalCode: "G1R 2B5"}},
		{"Gatineau with full French province", "25 Rue Laurier, Gatineau, Québec J8X 4C8",
			Parsed{Number: "25", Street: "rue laurier", City: "gatineau", Province: "QC", PostalCode: "J8X 4C8"}},
		{"Laval Qc lower case", "3030 boul. le Carrefour, app 504, Laval qc h7t2p5",
			Parsed{Number: "3030", Street: "boulevard le carrefour", Unit: "504", City: "laval", Province: "QC", PostalCode: "H7T 2P5"}},
		{"Ottawa O'Connor suite", "150 O'Connor St, Suite 1200, Ottawa, ON K1P 5H8",
			Parsed{Number: "150", Street: "o connor street", Unit: "1200", City: "ottawa", Province: "ON", PostalCode: "K1P 5H8"}},
		{"Vancouver direction before name", "1055 W Georgia St, Vancouver, BC V6E 3P3",
			Parsed{Number: "1055", Street: "west georgia street", City: "vancouver", Province: "BC", PostalCode: "V6E 3P3"}},
		{"Calgary quadrant", "300 Centre St SE, Calgary AB T2G 5P3",
			Parsed{Number: "300", Street: "centre street southeast", City: "calgary", Province: "AB", PostalCode: "T2G 5P3"}},
		{"Edmonton numbered street", "10180 101 St NW, Edmonton, Alberta T5J 3S4",
			Parsed{Number: "10180", Street: "101 street northwest", City: "edmonton", Province: "AB", PostalCode: "T5J 3S4"}},
		{"St. John's city", "10 Fort William Pl, St. John's, NL A1C 1K4",
			Parsed{Number: "10", Street: "fort william place", City: "saint johns", Province: "NL", PostalCode: "A1C 1K4"}},
		{"Halifax with country", "1800 Argyle St, Halifax, NS B3J 3N8, Canada",
			Parsed{Number: "1800", Street: "argyle street", City: "halifax", Province: "NS", PostalCode: "B3J 3N8"}},
		{"Winnipeg without commas", "201 Portage Ave Winnipeg MB R3B 3K6",
			Parsed{Number: "201", Street: "portage avenue", City: "winnipeg", Province: "MB", PostalCode: "R3B 3K6"}},
		{"unknown city after English street type", "55 Lakeshore Rd E Oakville-Trafalgar ON",
			Parsed{Number: "55", Street: "lakeshore road east", City: "oakville trafalgar", Province: "ON"}},
		{"English province name, Ste suite", "1 Yonge St, Ste 1801, Toronto, Ontario M5E 1W7",
			Parsed{Number: "1", Street: "yonge street", Unit: "1801", City: "toronto", Province: "ON", PostalCode: "M5E 1W7"}},
		{"apartment letter", "12 Elm Cres Apt B, Brampton ON",
			Parsed{Number: "12", Street: "elm crescent", Unit: "b", City: "brampton", Province: "ON"}},
		{"province name that is a street name", "120 Rue Ontario",
			Parsed{Number: "120", Street: "rue ontario"}},
		{"street named after a known city", "55 Rue Laval",
			Parsed{Number: "55", Street: "rue laval"}},
		{"place only", "Montréal QC",
			Parsed{City: "montreal", Province: "QC"}},
		{"city only", "Montréal",
			Parsed{City: "montreal"}},
		{"province only", "Ontario",
			Parsed{Province: "ON"}},
		{"Québec alone is city and province", "Québec",
			Parsed{City: "quebec", Province: "QC"}},
		{"postal code only", "h3c 2b5",
			Parsed{PostalCode: "H3C 2B5"}},
		{"empty", "", Parsed{}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if got := Parse(tt.in); got != tt.want {
				t.Errorf("Parse(%q)\n got  %+v\n want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestParseSpellingsAgree is the package's promise applied to Parse: however
// an address is typed, the parsed fields are the same.
func TestParseSpellingsAgree(t *testing.T) {
	groups := [][]string{
		{
			"88A Queen St W, Unit 1204, Toronto ON M5H 2N2",
			"1204-88A Queen Street West, Toronto, Ontario, m5h2n2",
			"88 a queen st. w. #1204 toronto on M5H-2N2",
			"Apt 1204, 88-A QUEEN ST W, TORONTO, ON, M5H 2N2, Canada",
		},
		{
			"120 rue King Ouest, Montréal QC h3c2b5",
			"120 Rue King O, Montreal, Québec H3C 2B5",
			"120 R. King O. Montréal (Qc) H3C-2B5",
			"120, rue King Ouest, Montréal, QC, H3C 2B5",
		},
	}
	for _, g := range groups {
		want := Parse(g[0])
		for _, s := range g[1:] {
			if got := Parse(s); got != want {
				t.Errorf("Parse(%q)\n got  %+v\n want %+v (from %q)", s, got, want, g[0])
			}
		}
	}
}

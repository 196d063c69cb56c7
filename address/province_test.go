package address

import "testing"

func TestProvince(t *testing.T) {
	tests := []struct {
		rule string
		in   string
		want string // "" means not recognised
	}{
		{"code upper", "QC", "QC"},
		{"code lower", "qc", "QC"},
		{"code title", "Qc", "QC"},
		{"old code with periods", "P.Q.", "QC"},
		{"French name with accent", "Québec", "QC"},
		{"French name without accent", "quebec", "QC"},
		{"English name", "Ontario", "ON"},
		{"English abbreviation", "Ont.", "ON"},
		{"two-word English name", "British Columbia", "BC"},
		{"hyphenated French name", "Colombie-Britannique", "BC"},
		{"French abbreviation", "C.-B.", "BC"},
		{"island French", "Île-du-Prince-Édouard", "PE"},
		{"island English abbreviation", "PEI", "PE"},
		{"Newfoundland and Labrador", "Newfoundland and Labrador", "NL"},
		{"Terre-Neuve-et-Labrador", "Terre-Neuve-et-Labrador", "NL"},
		{"Nova Scotia", "nova scotia", "NS"},
		{"Nouvelle-Écosse", "Nouvelle-Écosse", "NS"},
		{"New Brunswick French", "Nouveau-Brunswick", "NB"},
		{"Manitoba", "MANITOBA", "MB"},
		{"Saskatchewan short", "Sask", "SK"},
		{"Alberta short", "Alta", "AB"},
		{"Northwest Territories French", "Territoires du Nord-Ouest", "NT"},
		{"NWT", "NWT", "NT"},
		{"Nunavut", "Nunavut", "NU"},
		{"Yukon", "Yukon", "YT"},
		{"surrounding space", "  on  ", "ON"},
		{"empty", "", ""},
		{"US state", "NY", ""},
		{"city is not a province", "Montréal", ""},
		{"north-east quadrant is not Nova Scotia", "NE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, ok := Province(tt.in)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Province(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.want != "")
			}
		})
	}
}

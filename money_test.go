package subprov

import (
	"encoding/json"
	"testing"
)

func TestParseMoney(t *testing.T) {
	tests := []struct {
		in      string
		want    Money
		wantErr bool
	}{
		{"60.00", 6000, false},
		{"60", 6000, false},
		{"60.5", 6050, false},
		{"0.05", 5, false},
		{"-12.34", -1234, false},
		{"1.234", 0, true},
		{"", 0, true},
		{"abc", 0, true},
		{"1.", 0, true},
		{".5", 0, true},
		{"1.-5", 0, true},
		{"--1", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMoney(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseMoney(%q) = %v, %v; want %v, err=%v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestMoneyJSONHasTwoDecimals(t *testing.T) {
	b, _ := json.Marshal(map[string]Money{"a": 1250, "b": 0, "c": -5})
	if string(b) != `{"a":12.50,"b":0.00,"c":-0.05}` {
		t.Fatalf("got %s", b)
	}
}

func TestProrateRoundsHalfAwayFromZero(t *testing.T) {
	tests := []struct {
		name     string
		amount   Money
		num, den int64
		want     Money
	}{
		{"whole month", 6000, 31, 31, 6000},
		{"half cent rounds up", 1, 1, 2, 1},
		{"negative half cent rounds away", -1, 1, 2, -1},
		{"one day of 31", 6000, 1, 31, 194},
		{"zero period", 6000, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Prorate(tt.amount, tt.num, tt.den); got != tt.want {
				t.Fatalf("Prorate = %v, want %v", got, tt.want)
			}
		})
	}
}

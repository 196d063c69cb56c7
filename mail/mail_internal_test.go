package mail

import "testing"

func TestMaskAddress(t *testing.T) {
	tests := []struct{ in, want string }{
		{"jane@example.net", "j***@example.net"},
		{"Jane Doe <jane@example.net>", "j***@example.net"},
		{"élodie@example.fr", "é***@example.fr"},
		{"@example.net", "***@example.net"},
		{"not-an-address", "***"},
		{"", "***"},
	}
	for _, tt := range tests {
		if got := maskAddress(tt.in); got != tt.want {
			t.Errorf("maskAddress(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMessageID(t *testing.T) {
	tests := []struct {
		id, from, want string
		wantErr        bool
	}{
		{id: "0190f3a2-7c1e-7d4b-9a55-3f2f1c0b9e11", from: "no-reply@subprov.example", want: "0190f3a2-7c1e-7d4b-9a55-3f2f1c0b9e11@subprov.example"},
		{id: "42", from: "no-reply@localhost", want: "42@localhost"},
		{id: "abc@mail.example", from: "no-reply@subprov.example", want: "abc@mail.example"},
		{id: "", wantErr: true},
		{id: "a b", wantErr: true},
		{id: "a\r\nBcc: x@evil.example", wantErr: true},
		{id: "a<b>", wantErr: true},
		{id: "a@b@c", wantErr: true},
		{id: "@b", wantErr: true},
		{id: "a@", wantErr: true},
	}
	for _, tt := range tests {
		got, err := messageID(tt.id, tt.from)
		if tt.wantErr {
			if err == nil {
				t.Errorf("messageID(%q) = %q, want error", tt.id, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("messageID(%q, %q) = %q, %v; want %q", tt.id, tt.from, got, err, tt.want)
		}
	}
}

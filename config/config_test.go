package config

import (
	"fmt"
	"testing"
)

func TestFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name    string
		env     map[string]string
		check   func(Config) bool
		wantErr bool
	}{
		{"defaults", nil, func(c Config) bool {
			return c.Addr == "127.0.0.1:8080" && c.DatabaseURL == "sqlite://./data/subprov.db" && c.MailFrom == "no-reply@localhost" &&
				c.PublicURL == "http://127.0.0.1:8080" && !c.Dev && c.LogFormat == "json" && c.SwitchDriver == "sim"
		}, false},
		{"public url follows addr", map[string]string{"SUBPROV_ADDR": "127.0.0.1:9999"}, func(c Config) bool { return c.PublicURL == "http://127.0.0.1:9999" }, false},
		{"dev on", map[string]string{"SUBPROV_DEV": "1"}, func(c Config) bool { return c.Dev }, false},
		{"bad dev value", map[string]string{"SUBPROV_DEV": "maybe"}, nil, true},
		{"bad addr", map[string]string{"SUBPROV_ADDR": "8080"}, nil, true},
		{"bad log format", map[string]string{"SUBPROV_LOG_FORMAT": "xml"}, nil, true},
		{"unknown switch driver", map[string]string{"SUBPROV_SWITCH_DRIVER": "cisco"}, nil, true},
		{"pprof off by default", nil, func(c Config) bool { return c.PprofAddr == "" }, false},
		{"pprof on loopback", map[string]string{"SUBPROV_PPROF_ADDR": "127.0.0.1:6060"}, func(c Config) bool { return c.PprofAddr == "127.0.0.1:6060" }, false},
		{"pprof never on the network", map[string]string{"SUBPROV_PPROF_ADDR": "0.0.0.0:6060"}, nil, true},
		{"pprof needs a host", map[string]string{"SUBPROV_PPROF_ADDR": ":6060"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := FromEnv(env(tt.env), false)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.check != nil && !tt.check(c) {
				t.Fatalf("unexpected config %+v", c)
			}
		})
	}
}

// TestTrustedProxies: SUBPROV_TRUSTED_PROXIES takes CIDRs and bare addresses, none by default,
// and refuses anything else.
func TestTrustedProxies(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		err  bool
	}{
		{"", "[]", false},
		{"10.0.0.0/8", "[10.0.0.0/8]", false},
		{" 10.1.2.3/8 , 192.0.2.10, 2001:db8::/32 ", "[10.0.0.0/8 192.0.2.10/32 2001:db8::/32]", false},
		{"::ffff:192.0.2.10", "[192.0.2.10/32]", false},
		{"10.0.0.0/33", "", true},
		{"proxy.example", "", true},
	} {
		c, err := FromEnv(func(k string) string {
			if k == "SUBPROV_TRUSTED_PROXIES" {
				return tt.in
			}
			return ""
		}, false)
		if (err != nil) != tt.err {
			t.Fatalf("%q: err %v", tt.in, err)
		}
		if got := fmt.Sprint(c.TrustedProxies); err == nil && got != tt.want {
			t.Fatalf("%q: %s, want %s", tt.in, got, tt.want)
		}
	}
}

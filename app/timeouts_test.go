package app_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/testdb"
)

// The production limits are never loosened: headers within 10 s, the whole request within 30 s.
func TestRequestTimeLimitsInProduction(t *testing.T) {
	if got, want := app.ProductionTimeouts, [2]time.Duration{10 * time.Second, 30 * time.Second}; got != want {
		t.Fatalf("read-header and read timeouts %v, want %v", got, want)
	}
}

// TestSlowClientsAreCutOff: a client that trickles its headers (slowloris) or its body slower
// than the limits is disconnected once the limit passes, while a prompt client is served.
func TestSlowClientsAreCutOff(t *testing.T) {
	const header, body = 600 * time.Millisecond, 1500 * time.Millisecond
	app.SetTimeouts(t, header, body)
	s := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema))
	addr := strings.TrimPrefix(s.URL, "http://")

	cases := []struct {
		name    string
		head    string // sent at once
		trickle string // then one byte every 100 ms
		limit   time.Duration
	}{
		{"headers byte by byte", "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n", "X-Slow: " + strings.Repeat("a", 60) + "\r\n\r\n", header},
		{"body byte by byte", "POST /partner/location/ HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n",
			`{"location_hash":"` + strings.Repeat("a", 40) + `"}`, body},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			ended, status := slowRequest(t, addr, c.head, c.trickle, 100*time.Millisecond)
			if ended < 0 {
				t.Fatalf("the server kept the connection open for the whole %v trickle (limit %v)", time.Duration(len(c.trickle))*100*time.Millisecond, c.limit)
			}
			if ended > c.limit+time.Second {
				t.Errorf("connection ended after %v, limit %v", ended, c.limit)
			}
			if status >= 200 && status < 300 {
				t.Errorf("the trickled request was served (%d)", status)
			}
			t.Logf("cut off after %v (status %d, 0 = closed without an answer)", time.Since(start).Round(time.Millisecond), status)
		})
	}
	// A prompt client on the same server is served.
	res, err := http.Get(s.URL + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("prompt client: %v %v", res, err)
	}
	res.Body.Close()
}

// slowRequest sends head, then trickle one byte per gap, and reports when the server ended the
// exchange (answered or closed): the time since the start, or -1 if the whole trickle went
// through without the server ending it; status is the answer's code (0 when it closed silently).
func slowRequest(t *testing.T, addr, head, trickle string, gap time.Duration) (time.Duration, int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	type result struct {
		at     time.Duration
		status int
	}
	done := make(chan result, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		status := 0
		if err == nil {
			status = res.StatusCode
			_, _ = io.Copy(io.Discard, res.Body)
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !isReset(err) {
			status = -1
		}
		done <- result{time.Since(start), status}
	}()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(trickle); i++ {
		select {
		case r := <-done:
			if r.status < 0 {
				t.Fatalf("reading the answer failed oddly")
			}
			return r.at, r.status
		case <-time.After(gap):
		}
		if _, err := conn.Write([]byte{trickle[i]}); err != nil {
			r := <-done // the server closed: the reader sees it too
			return r.at, r.status
		}
	}
	select {
	case r := <-done:
		return r.at, r.status
	case <-time.After(gap):
		return -1, 0
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || strings.Contains(fmt.Sprint(err), "reset")
}

// TestCheapPasswordsNeedDevMode: the test password cost is refused by a production process,
// so no configuration mistake makes weak hashes.
func TestCheapPasswordsNeedDevMode(t *testing.T) {
	cfg := config.Config{Addr: "127.0.0.1:0", DatabaseURL: testdb.URL(t, "sqlite"), PasswordCost: identity.TestPasswordCost}
	a, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		a.Close()
		t.Fatal("a production process started with the test password cost")
	}
}

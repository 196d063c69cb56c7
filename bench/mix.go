package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/subprov/subprov/gen"
)

// mixLogins is how many of provider 1's portal logins the mix's /me reads go round: a
// platform's portal users each read their own account.
const mixLogins = 1000

// measureMix measures reads while writes flow (issue 40's realistic mix): GET /me round-robin
// over mixLogins logins, first with nothing else running, then while provider-initiated
// orders and portal contact changes (half each) are offered open-loop at --mix-rate in all;
// agent search by name under the same writes. Every read and write is a row of the report's
// table. Its orders take free ports as the orders scenario's do, after them; once none is left
// (a small database), the rest of the writes are contact changes.
func measureMix(ctx context.Context, o options, srv *server, res *engineResult, dbURL, name string, key http.Header) error {
	var auths []http.Header
	for n := 0; len(auths) < mixLogins && n < o.perProvider(); n++ {
		if !gen.HasLogin(n) {
			continue
		}
		tok, err := subscriberToken(n)
		if err != nil {
			return err
		}
		auths = append(auths, http.Header{"Authorization": {"Bearer " + tok}})
	}
	if len(auths) == 0 {
		return fmt.Errorf("mix: provider 1 has no portal login")
	}
	me := func(c *http.Client, i int64) (bool, error) {
		return true, get(c, srv.base+"/partner/subscriber/me", auths[i%int64(len(auths))])
	}
	idle := load(8, o.duration, me)
	idle.name = fmt.Sprintf("GET /partner/subscriber/me over %d logins, no writes", len(auths))
	res.scenarios = append(res.scenarios, idle)

	// The writes span both reads measured under them.
	writes := int(o.mixRate * 2 * o.duration.Seconds())
	ports, err := freePorts(ctx, dbURL, o)
	if err != nil {
		return err
	}
	done := make(chan result, 1)
	go func() {
		w := pacedLoad(o.mixRate, writes, func(c *http.Client, i int64, _ time.Time) error {
			if i%2 == 0 && i/2 < int64(len(ports)) {
				_, err := placeOrder(c, srv.base, ports[i/2], mixOrderBase+i)
				return err
			}
			return changeContact(c, srv.base, auths[(i/2)%int64(len(auths))], i)
		})
		w.name = "mix writes: orders and portal contact changes, half each"
		done <- w
	}()
	busy := load(8, o.duration, me)
	busy.name = fmt.Sprintf("GET /partner/subscriber/me over %d logins, under the writes", len(auths))
	u := searchURL(srv.base, name)
	search := load(8, o.duration, func(c *http.Client, _ int64) (bool, error) { return true, get(c, u, key) })
	search.name = "agent search: name, under the writes"
	w := <-done
	if orders := min(len(ports), (writes+1)/2); orders < (writes+1)/2 {
		w.name = fmt.Sprintf("mix writes: portal contact changes, and %d orders (no free port left for more)", orders)
	}
	res.scenarios = append(res.scenarios, busy, search, w)
	logf("%s: mix: /me over %d logins %.0f/s idle, %.0f/s under %.0f writes/s (%d failed); name search %.0f/s", res.engine,
		len(auths), idle.rps(), busy.rps(), w.rps(), w.errors, search.rps())
	return nil
}

// mixOrderBase numbers the mix's orders apart from the orders scenario's, so their subscribers'
// e-mail addresses differ.
const mixOrderBase = 1_000_000

// changeContact is a portal user changing their phone number: a write that re-indexes the
// subscriber for agent search.
func changeContact(c *http.Client, base string, auth http.Header, i int64) error {
	body := fmt.Sprintf(`{"phonenumber": "+1 514-555-%04d"}`, i%10000)
	req, _ := http.NewRequest("PATCH", base+"/partner/subscriber/me/contact", bytes.NewReader([]byte(body)))
	req.Header = auth.Clone()
	req.Header.Set("Content-Type", "application/json")
	_, err := send(c, req)
	return err
}
